// The GPU heatmap: one cell per GPU, grouped by node. A cell's colour is the GPU's utilisation
// (the last reading its agent reported); the strip at its foot is its allocation: one segment
// per holder, as wide as its share (a whole GPU fills it, a fraction takes milli/1000 of it, a
// MIG instance sits at its memory slices, out of 8). A drained GPU is hatched and says so.
//
// Keyboard: the grid is one tab stop; arrow keys move between GPUs (left/right within a node,
// up/down to the same GPU of the node above or below), Home/End to a node's first and last GPU,
// Enter opens the node. The GPU under the focus or the pointer is described below the grid.

import { h, colourOf, utilColour, pct, mib, gpus } from './dom.js';
import { MIG_SLICES, migIndex, migSlices } from './model.js';

function holderName(hd) {
  return hd.name ? `${hd.name} (job ${hd.job}, ${hd.tenant})` : 'another tenant\'s job';
}

// The segments of a GPU's allocation strip: [{left, width, label, title, colour}] in percent.
function segments(node, g, migs) {
  const out = [];
  const holders = g.holders || [];
  if (g.mig_mode) {
    // Instances whose place is known (a holder that carries it, or a visible job's placement)
    // first; the others (another tenant's) take the first free slice, as their size is unknown.
    const used = new Array(MIG_SLICES).fill(false);
    const unplaced = [];
    for (const hd of holders) {
      const pl = hd.mig_profile ? hd : migs.get(`${node.name}/${g.index}/${hd.job}/${hd.replica}`);
      if (!pl || !(pl.mig_start >= 0)) {
        unplaced.push(hd);
        continue;
      }
      const slices = pl.mig_memory_slices || migSlices(pl.mig_profile, g.memory_mib);
      for (let i = pl.mig_start; i < Math.min(MIG_SLICES, pl.mig_start + slices); i++) used[i] = true;
      out.push({ left: (pl.mig_start / MIG_SLICES) * 100, width: (slices / MIG_SLICES) * 100, hd,
        label: hd.name || '', share: `MIG ${pl.mig_profile}` });
    }
    for (const hd of unplaced) {
      let start = used.indexOf(false);
      if (start < 0) start = MIG_SLICES - 1;
      used[start] = true;
      out.push({ left: (start / MIG_SLICES) * 100, width: 100 / MIG_SLICES, hd, label: hd.name || '',
        share: 'MIG instance' });
    }
    return out;
  }
  let left = 0;
  for (const hd of holders) {
    const milli = hd.milli || 0;
    const memShare = g.memory_mib ? ((hd.memory_mib || 0) / g.memory_mib) * 1000 : 0;
    const w = Math.max(milli, memShare, 20) / 10;
    const share = milli >= 1000 ? 'whole GPU'
      : `${gpus(milli / 1000)} GPU${hd.memory_mib ? `, ${mib(hd.memory_mib)}` : ''}`;
    out.push({ left, width: Math.min(w, 100 - left), hd, label: hd.name || '', share });
    left = Math.min(100, left + w);
  }
  return out;
}

function describe(node, g, segs) {
  const parts = [`${node.name} GPU ${g.index}`, g.model];
  parts.push(g.utilization === null || g.utilization === undefined
    ? 'no utilisation reading' : `utilisation ${pct(g.utilization)}`);
  parts.push(g.mig_mode ? `MIG mode, ${segs.length} instance${segs.length === 1 ? '' : 's'}`
    : `allocated ${gpus((g.allocated_milli || 0) / 1000)} GPU`);
  for (const s of segs) parts.push(`${holderName(s.hd)}: ${s.share}`);
  if (!segs.length) parts.push('free');
  if (g.drained) parts.push(`${g.drained.retired ? 'retired' : 'drained'}: ${g.drained.reason || 'no reason'}`);
  if (g.spare) parts.push('hot spare');
  if (node.state !== 'Ready') parts.push(`node ${node.state}`);
  if (node.cordoned) parts.push(node.draining ? 'node draining' : 'node cordoned');
  return parts.join('; ');
}

function cell(node, g, migs, dark) {
  const segs = segments(node, g, migs);
  const label = describe(node, g, segs);
  const { bg, fg } = utilColour(g.utilization);
  const key = `${node.name}/${g.index}`;
  const el = h('div', {
    role: 'gridcell', tabindex: '-1', class: ['hm-cell', g.drained && 'drained', g.mig_mode && 'mig',
      !bg && 'no-reading', node.state !== 'Ready' && 'down', g.spare && 'spare'],
    title: label, 'aria-label': label,
    dataset: { focusKey: key, node: node.name, gpu: String(g.index), jobs: segs.map((s) => s.label).join(' ') },
    style: bg ? { backgroundColor: bg, color: fg } : null,
  },
  h('span', { class: 'hm-top', 'aria-hidden': 'true' },
    h('span', { class: 'hm-idx' }, String(g.index)),
    h('span', { class: 'hm-util' }, g.utilization === null || g.utilization === undefined ? '—' : pct(g.utilization))),
  g.drained ? h('span', { class: 'hm-flag', 'aria-hidden': 'true' }, g.drained.retired ? 'retired' : 'drained') : null,
  h('span', { class: 'hm-alloc', 'aria-hidden': 'true' },
    segs.map((s) => h('span', {
      class: ['hm-seg', !s.hd.name && 'other'],
      style: { left: `${s.left}%`, width: `${s.width}%`,
        backgroundColor: s.hd.name ? colourOf(s.hd.tenant, dark) : '' },
    }, s.label))));
  return el;
}

// The heatmap of nodes (GET /v1/nodes items). jobs: the visible Scheduled and Running jobs (for
// MIG positions); onOpen(nodeName, gpuIndex) when a GPU is activated.
export function heatmap(nodes, { jobs = [], onOpen } = {}) {
  const dark = matchMedia('(prefers-color-scheme: dark)').matches;
  const migs = migIndex(jobs);
  const detail = h('p', { class: 'hm-detail', 'aria-live': 'polite' },
    'Move over a GPU, or focus the grid and use the arrow keys, to see its details.');
  const grid = h('div', {
    role: 'grid', class: 'hm-grid', 'aria-label': 'GPUs by node: utilisation and allocation',
    'aria-describedby': 'hm-help',
  });
  const sorted = [...nodes].sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
  for (const node of sorted) {
    const badges = [];
    if (node.state !== 'Ready') badges.push(h('span', { class: 'badge badge-bad' }, node.state));
    if (node.draining) badges.push(h('span', { class: 'badge badge-warn' }, 'draining'));
    else if (node.cordoned) badges.push(h('span', { class: 'badge badge-warn' }, 'cordoned'));
    if (node.unhealthy) badges.push(h('span', { class: 'badge badge-bad' }, 'unhealthy'));
    grid.append(h('div', { role: 'row', class: 'hm-row' },
      h('div', { role: 'rowheader', class: 'hm-node' },
        h('a', { href: `#/nodes?node=${encodeURIComponent(node.name)}`, tabindex: '-1' }, node.name),
        h('span', { class: 'hm-model' }, models(node)), badges),
      h('div', { role: 'none', class: 'hm-cells' }, (node.gpus || []).map((g) => cell(node, g, migs, dark)))));
  }
  const cells = () => [...grid.querySelectorAll('.hm-cell')];
  const first = grid.querySelector('.hm-cell');
  if (first) first.tabIndex = 0;
  const show = (c) => { detail.textContent = c.getAttribute('aria-label'); };
  grid.addEventListener('focusin', (e) => {
    if (!e.target.classList.contains('hm-cell')) return;
    for (const c of cells()) c.tabIndex = c === e.target ? 0 : -1;
    show(e.target);
  });
  grid.addEventListener('mouseover', (e) => {
    const c = e.target.closest('.hm-cell');
    if (c) show(c);
  });
  grid.addEventListener('click', (e) => {
    const c = e.target.closest('.hm-cell');
    if (c) c.focus();
  });
  grid.addEventListener('dblclick', (e) => {
    const c = e.target.closest('.hm-cell');
    if (c && onOpen) onOpen(c.dataset.node, Number(c.dataset.gpu));
  });
  grid.addEventListener('keydown', (e) => {
    const c = e.target.closest('.hm-cell');
    if (!c) return;
    const row = [...c.parentElement.children];
    const i = row.indexOf(c);
    const rows = [...grid.querySelectorAll('.hm-cells')];
    const r = rows.indexOf(c.parentElement);
    let to = null;
    if (e.key === 'ArrowRight') to = row[i + 1];
    else if (e.key === 'ArrowLeft') to = row[i - 1];
    else if (e.key === 'Home') to = row[0];
    else if (e.key === 'End') to = row[row.length - 1];
    else if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      const other = rows[r + (e.key === 'ArrowDown' ? 1 : -1)];
      if (other && other.children.length) to = other.children[Math.min(i, other.children.length - 1)];
    } else if (e.key === 'Enter' || e.key === ' ') {
      e.preventDefault();
      if (onOpen) onOpen(c.dataset.node, Number(c.dataset.gpu));
      return;
    } else return;
    e.preventDefault();
    if (to) to.focus();
  });
  return h('div', { class: 'heatmap' },
    legend(),
    h('p', { id: 'hm-help', class: 'visually-hidden' },
      'Arrow keys move between GPUs, Enter opens the node.'),
    sorted.length ? grid : h('p', { class: 'empty' }, 'No nodes have registered yet.'),
    detail);
}

function models(node) {
  const set = [...new Set((node.gpus || []).map((g) => g.model))];
  return set.length ? `${node.gpus.length} × ${set.join(', ')}` : 'no GPUs';
}

function legend() {
  const steps = [0, 25, 50, 75, 100].map((u) => {
    const { bg, fg } = utilColour(u);
    return h('span', { class: 'hm-swatch', style: { backgroundColor: bg, color: fg } }, `${u}%`);
  });
  return h('div', { class: 'hm-legend', 'aria-label': 'Legend' },
    h('span', { class: 'hm-legend-item' }, 'Utilisation ', h('span', { class: 'hm-scale' }, steps)),
    h('span', { class: 'hm-legend-item' }, h('span', { class: 'hm-swatch no-reading' }, '—'), ' no reading'),
    h('span', { class: 'hm-legend-item' },
      h('span', { class: 'hm-key-alloc' }, h('span', { class: 'hm-key-seg' })), ' allocated share (one per job, coloured by tenant; MIG by memory slice)'),
    h('span', { class: 'hm-legend-item' }, h('span', { class: 'hm-swatch drained' }, ''), ' drained'));
}
