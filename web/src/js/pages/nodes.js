// Nodes: each node's state and health, its container runtime and image cache, its GPUs, who holds
// each share or MIG slice, and (for operators and admins) cordon, drain and uncordon.
// #/nodes?node=NAME scrolls to one node.

import { get, getAll, post } from '../api.js';
import { h, replace, table, gpus, mib, pct, time, ago, badge, stateBadge, colourOf } from '../dom.js';
import { migIndex, runtimeText, bytesText } from '../model.js';

function nodeBadges(n) {
  const out = [stateBadge(n.state)];
  if (n.draining) out.push(badge('draining', 'warn'));
  else if (n.cordoned) out.push(badge('cordoned', 'warn'));
  if (n.drain_deadline_ms) out.push(badge(`drains ${time(n.drain_deadline_ms)}`, 'warn'));
  if (n.unhealthy) out.push(badge('unhealthy', 'bad'));
  if (n.fenced) out.push(badge('fenced', 'bad'));
  if (!n.schedulable && !n.cordoned && n.state === 'Ready') out.push(badge('not schedulable', 'warn'));
  return out;
}

function holders(node, g, migs) {
  if (!g.holders || !g.holders.length) return h('span', { class: 'muted' }, 'free');
  return h('ul', { class: 'holders' }, g.holders.map((hd) => {
    const pl = hd.mig_profile ? hd : migs.get(`${node.name}/${g.index}/${hd.job}/${hd.replica}`);
    let share;
    if (g.mig_mode) share = pl ? `MIG ${pl.mig_profile} at slice ${pl.mig_start}` : 'MIG instance';
    else if (hd.milli >= 1000) share = 'whole GPU';
    else share = `${gpus(hd.milli / 1000)} GPU${hd.memory_mib ? `, ${mib(hd.memory_mib)}` : ''}`;
    if (!hd.name) return h('li', { class: 'muted' }, `another tenant's job: ${share}`);
    return h('li', null,
      h('span', { class: 'dot', style: { backgroundColor: colourOf(hd.tenant) }, 'aria-hidden': 'true' }),
      h('a', { href: `#/jobs/${hd.job}` }, hd.name), ` (${hd.tenant}${hd.replica ? `, replica ${hd.replica}` : ''}): ${share}`);
  }));
}

function health(g) {
  const out = [];
  if (g.drained) {
    out.push(badge(g.drained.retired ? 'retired' : 'drained', 'bad'), ' ',
      h('span', null, `${g.drained.reason || ''}${g.drained.since_ms ? ` (${ago(g.drained.since_ms)})` : ''}`));
  }
  if (g.spare) out.push(badge('spare', 'info'));
  if (g.xid_errors) out.push(h('span', { class: 'muted' }, ` ${g.xid_errors} XID${g.xid_errors > 1 ? 's' : ''}, last ${g.last_xid}`));
  if (!out.length) out.push(badge('ok', 'ok'));
  return out;
}

function gpuTable(node, migs) {
  return table({
    caption: `GPUs of ${node.name}`,
    columns: [
      { label: 'GPU', cell: (g) => String(g.index) },
      { label: 'Model', cell: (g) => h('span', { title: g.uuid }, g.model, g.mig_mode ? ' (MIG)' : '') },
      { label: 'Memory', num: true, cell: (g) => mib(g.memory_mib) },
      { label: 'Allocated', num: true, cell: (g) => (g.mig_mode ? `${gpus((g.allocated_milli || 0) / 1000)} GPU`
        : `${gpus((g.allocated_milli || 0) / 1000)} GPU${g.allocated_memory_mib ? `, ${mib(g.allocated_memory_mib)}` : ''}`) },
      { label: 'Util.', num: true, cell: (g) => pct(g.utilization) },
      { label: 'Holders', wrap: true, cell: (g) => holders(node, g, migs) },
      { label: 'Health', wrap: true, cell: (g) => health(g) },
      { label: 'Temp. / power', num: true, cell: (g) => {
        const r = g.readings || {};
        return `${r.temperature_c ?? '—'} °C / ${r.power_w !== undefined ? Math.round(r.power_w) : '—'} W`;
      } },
    ],
    rows: node.gpus || [],
    empty: 'This node has no GPUs.',
  });
}

// The image cache: how many images and their size; for admins and operators (the API gives
// them the list) the images themselves, newest use first, behind a disclosure.
function imageCache(node) {
  const im = node.images || { count: 0, size_bytes: 0 };
  const total = `${im.count} image${im.count === 1 ? '' : 's'}, ${bytesText(im.size_bytes)}`;
  if (!Array.isArray(im.items) || !im.items.length) return h('span', { class: 'images' }, total);
  const items = [...im.items].sort((a, b) => (b.last_used_ms || 0) - (a.last_used_ms || 0));
  return h('details', { class: 'images' }, h('summary', null, total),
    table({
      caption: `Images on ${node.name}`,
      columns: [
        { label: 'Image', wrap: true, cell: (x) => h('code', { title: x.id }, x.ref || x.id) },
        { label: 'Size', num: true, cell: (x) => bytesText(x.size_bytes) },
        { label: 'Last used', cell: (x) => (x.last_used_ms ? h('span', { title: time(x.last_used_ms) }, ago(x.last_used_ms))
          : h('span', { class: 'muted' }, 'not by a job here')) },
      ],
      rows: items,
    }));
}

function actions(ctx, node, refresh) {
  if (!ctx.operator) return null;
  const act = async (verb, text) => {
    if (verb !== 'uncordon' && !(await ctx.confirm(`${verb[0].toUpperCase()}${verb.slice(1)} ${node.name}?`, text,
      verb[0].toUpperCase() + verb.slice(1)))) return;
    try {
      await post(`/v1/nodes/${encodeURIComponent(node.name)}/${verb}`);
      ctx.announce(`${node.name}: ${verb} done`);
      await refresh();
    } catch (e) {
      ctx.fail(e);
    }
  };
  return h('div', { class: 'actions', role: 'group', 'aria-label': `Actions for ${node.name}` },
    h('button', { type: 'button', class: 'btn', disabled: node.cordoned, dataset: { focusKey: `${node.name}/cordon` },
      onclick: () => act('cordon', 'No new work will be placed on it; its jobs keep running.') }, 'Cordon'),
    h('button', { type: 'button', class: 'btn btn-danger', disabled: node.draining, dataset: { focusKey: `${node.name}/drain` },
      onclick: () => act('drain', 'It is cordoned and every job holding resources on it goes back to its queue.') }, 'Drain'),
    h('button', { type: 'button', class: 'btn', disabled: !node.cordoned && !node.draining && !node.drain_deadline_ms,
      dataset: { focusKey: `${node.name}/uncordon` }, onclick: () => act('uncordon') }, 'Uncordon'));
}

function nodeSection(ctx, node, migs, refresh) {
  const id = `node-${node.name}`;
  const conds = (node.health && node.health.conditions) || [];
  const a = node.allocated || {};
  return h('section', { class: 'panel node', id, 'aria-labelledby': `${id}-h` },
    h('div', { class: 'node-head' },
      h('h2', { id: `${id}-h` }, node.name), h('span', { class: 'badges' }, nodeBadges(node)), actions(ctx, node, refresh)),
    h('dl', { class: 'facts' },
      h('dt', null, 'Address'), h('dd', null, node.address || '—'),
      h('dt', null, 'CPU'), h('dd', null, `${gpus((a.cpu_milli || 0) / 1000)} of ${gpus(node.cpu_milli / 1000)} cores`),
      h('dt', null, 'Memory'), h('dd', null, `${mib(a.memory_mib || 0)} of ${mib(node.memory_mib)}`),
      h('dt', null, 'GPUs allocated'), h('dd', null, `${gpus(a.gpus || 0)} of ${(node.gpus || []).length}`),
      h('dt', null, 'Last heartbeat'), h('dd', null, h('span', { title: time(node.heartbeat_ms) }, ago(node.heartbeat_ms))),
      h('dt', null, 'Container runtime'), h('dd', { class: 'runtime' }, runtimeText(node.runtime)
        || h('span', { class: 'muted' }, 'none: runs no job from an image')),
      h('dt', null, 'Image cache'), h('dd', null, imageCache(node)),
      Object.keys(node.labels || {}).length ? [h('dt', null, 'Labels'), h('dd', null,
        Object.entries(node.labels).map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`)))] : null,
      h('dt', null, 'Health check'), h('dd', null, node.health
        ? (conds.length ? h('ul', { class: 'conditions' }, conds.map((c) => h('li', null,
          badge(c.severity, c.severity === 'fatal' ? 'bad' : 'warn'), ` ${c.check}${c.gpu >= 0 ? ` (GPU ${c.gpu})` : ''}: ${c.message}`)))
          : `passed ${ago(node.health.at_ms)}`)
        : 'none yet')),
    node.unhealthy ? h('p', { class: 'warn-text' }, `Unhealthy: ${typeof node.unhealthy === 'string' ? node.unhealthy : JSON.stringify(node.unhealthy)}`) : null,
    gpuTable(node, migs));
}

export default {
  title: () => 'Nodes',
  async render(ctx) {
    const body = h('div', { class: 'nodes' }, h('p', { class: 'loading' }, 'Loading…'));
    const summary = h('p', { class: 'muted' });
    let first = true;
    const refresh = async () => {
      const [doc, jobs] = await Promise.all([get('/v1/nodes', { signal: ctx.signal }),
        getAll('/v1/jobs?state=Scheduled,Running', { signal: ctx.signal })]);
      if (ctx.signal.aborted) return;
      const nodes = (doc.items || []).sort((a, b) => a.name.localeCompare(b.name, undefined, { numeric: true }));
      const migs = migIndex(jobs.items);
      const ngpu = nodes.reduce((s, n) => s + (n.gpus || []).length, 0);
      summary.textContent = `${nodes.length} node${nodes.length === 1 ? '' : 's'}, ${ngpu} GPUs, `
        + `${nodes.filter((n) => n.state === 'Ready').length} ready, ${nodes.filter((n) => n.cordoned).length} cordoned.`;
      replace(body, nodes.length ? nodes.map((n) => nodeSection(ctx, n, migs, refresh))
        : h('p', { class: 'empty' }, 'No node has registered yet.'));
      const want = ctx.query.get('node');
      if (first && want) {
        const el = document.getElementById(`node-${want}`);
        if (el) {
          el.scrollIntoView({ block: 'start' });
          el.classList.add('target');
        }
      }
      first = false;
    };
    ctx.root.append(h('div', { class: 'page-head' }, h('h1', null, 'Nodes'), summary,
      h('button', { type: 'button', class: 'btn', onclick: () => refresh().catch(ctx.fail) }, 'Refresh')), body);
    await refresh();
    ctx.every(refresh, 5000);
  },
};
