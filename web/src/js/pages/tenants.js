// Tenants and queues: each tenant's quota use against its limits (in all and per GPU model),
// each queue's weight, fair share, guarantee, capability and borrowing; the priority classes.

import { get, getAll, query } from '../api.js';
import { h, replace, table, section, gpus, mib, meter, badge, colourOf, duration } from '../dom.js';
import { lineChart } from '../chart.js';
import { useByModel, historySeries, latestOf } from '../model.js';

function tenantTable(tenants, perModel) {
  return table({
    caption: 'Quota use against limits (a limit left out is unlimited)',
    columns: [
      { label: 'Tenant', cell: (t) => h('span', null, h('span', { class: 'dot', style: { backgroundColor: colourOf(t.name) }, 'aria-hidden': 'true' }), t.name) },
      { label: 'GPUs', cell: (t) => meter(t.usage.gpus, t.quota && t.quota.gpus, { label: `${t.name} GPUs` }) },
      { label: 'GPU memory', cell: (t) => meter(t.usage.gpu_memory_mib, t.quota && t.quota.gpu_memory_mib,
        { label: `${t.name} GPU memory`, format: mib }) },
      { label: 'Per model', wrap: true, cell: (t) => {
        const quota = (t.quota && t.quota.models) || {};
        const used = perModel.get(t.name) || new Map();
        const names = [...new Set([...Object.keys(quota), ...used.keys()])].sort();
        if (!names.length) return h('span', { class: 'muted' }, '—');
        return h('ul', { class: 'plain' }, names.map((m) => h('li', null, `${m}: `,
          meter(used.get(m) || 0, quota[m], { label: `${t.name} ${m}` }))));
      } },
      { label: 'CPU', num: true, cell: (t) => `${gpus(t.usage.cpu_milli / 1000)} cores` },
      { label: 'Memory', num: true, cell: (t) => mib(t.usage.memory_mib) },
      { label: 'Pending', num: true, cell: (t) => h('a', { href: `#/jobs?tenant=${encodeURIComponent(t.name)}&state=Pending,Preempted` }, String(t.pending)) },
    ],
    rows: tenants,
    empty: 'No tenants yet: an administrator creates them (gpupool tenant create).',
  });
}

// The queues with their fair share: the pool's GPUs in service split by weight.
function queueTable(queues, poolGpus) {
  const total = queues.reduce((s, q) => s + (q.weight || 0), 0) || 1;
  return table({
    caption: `Fair share splits the ${gpus(poolGpus)} GPUs in service by weight; a queue past its guarantee borrows`,
    columns: [
      { label: 'Queue', cell: (q) => q.name },
      { label: 'Weight', num: true, cell: (q) => gpus(q.weight) },
      { label: 'Fair share', num: true, cell: (q) => `${gpus((q.weight / total) * poolGpus)} GPU (${Math.round((q.weight / total) * 100)}%)` },
      { label: 'In use', cell: (q) => meter(q.usage.gpus, q.capability && q.capability.gpus, { label: `${q.name} GPUs of its capability` }) },
      { label: 'Guarantee', num: true, cell: (q) => `${gpus((q.guarantee && q.guarantee.gpus) || 0)} GPU` },
      { label: 'Capability', num: true, cell: (q) => (q.capability && q.capability.gpus !== undefined ? `${gpus(q.capability.gpus)} GPU` : 'unlimited') },
      { label: 'Borrowing', cell: (q) => {
        const b = q.usage.gpus - ((q.guarantee && q.guarantee.gpus) || 0);
        if (b <= 0.0005) return h('span', { class: 'muted' }, 'no');
        const over = q.usage.gpus > (q.weight / total) * poolGpus + 0.0005;
        return h('span', null, `${gpus(b)} GPU past its guarantee`, over ? [' ', badge('over its fair share', 'warn')] : null);
      } },
      { label: 'Reclaimable', cell: (q) => (q.reclaimable ? 'yes' : 'no') },
      { label: 'Pending', num: true, cell: (q) => h('a', { href: `#/jobs?queue=${encodeURIComponent(q.name)}&state=Pending,Preempted` }, String(q.pending)) },
    ],
    rows: queues,
  });
}

function classTable(classes) {
  return table({
    caption: 'Higher values run first',
    columns: [
      { label: 'Class', cell: (c) => c.name },
      { label: 'Value', num: true, cell: (c) => String(c.value) },
      { label: 'Preemption', cell: (c) => c.preemption_policy },
      { label: 'Description', wrap: true, cell: (c) => c.description || '' },
    ],
    rows: [...classes].sort((a, b) => b.value - a.value),
  });
}

const RANGES = { '6h': 'the last 6 hours', '24h': 'the last day', '7d': 'the last week' };

// A tenant's GPUs allocated over time (GET /v1/tenants/{name}/metrics), with tenant and range
// pickers; the caption says the latest GPUs and GPU memory in words.
function allocation(ctx, names) {
  const tenantSel = h('select', { id: 'alloc-tenant' }, names.map((n) => h('option', { value: n }, n)));
  const rangeSel = h('select', { id: 'alloc-range' },
    Object.entries(RANGES).map(([v, label]) => h('option', { value: v }, label[0].toUpperCase() + label.slice(1))));
  const box = h('div', { class: 'chart' });
  const cap = h('figcaption', { id: 'alloc-cap' });
  let chart = null;
  const clear = () => { if (chart) chart.destroy(); chart = null; };
  ctx.signal.addEventListener('abort', clear);
  const load = async () => {
    const t = tenantSel.value;
    const range = rangeSel.value;
    if (!t) return;
    const doc = await get(`/v1/tenants/${encodeURIComponent(t)}/metrics${query({ from: `-${range}` })}`, { signal: ctx.signal });
    if (ctx.signal.aborted || t !== tenantSel.value || range !== rangeSel.value) return;
    clear();
    const { xs, series } = historySeries(doc, 'gpus_allocated');
    const last = latestOf(doc, 'gpus_allocated');
    const mem = latestOf(doc, 'gpu_mem_allocated_mib');
    cap.textContent = `GPUs allocated to ${t} over ${RANGES[range]} (UTC), a point every ${duration(doc.step_s * 1000)}. `
      + (last ? `Latest: ${gpus(last.value)} GPUs and ${mib(Math.round(mem ? mem.value : 0))} of GPU memory.` : 'No samples in this range.');
    if (!last) {
      replace(box, h('p', { class: 'empty' }, 'No samples in this range.'));
      return;
    }
    replace(box);
    chart = lineChart(box, { xs, series: series.map((x) => ({ ...x, label: 'GPUs allocated' })), unit: 'GPUs', format: gpus,
      step: 'time', yMax: 1, range: [xs[0], xs[xs.length - 1] + doc.step_s] });
  };
  const reload = () => load().catch((e) => { if (e.name !== 'AbortError') ctx.fail(e); });
  tenantSel.addEventListener('change', reload);
  rangeSel.addEventListener('change', reload);
  ctx.every(load, 30000);
  reload();
  return h('div', { class: 'history-view' },
    h('div', { class: 'filters' },
      h('div', { class: 'field field-inline' }, h('label', { for: 'alloc-tenant' }, 'Tenant'), tenantSel),
      h('div', { class: 'field field-inline' }, h('label', { for: 'alloc-range' }, 'Range'), rangeSel)),
    h('figure', { class: 'chart-figure history-chart', 'aria-labelledby': 'alloc-cap' }, box, cap));
}

export default {
  title: () => 'Tenants and queues',
  async render(ctx) {
    const body = h('div', { class: 'tenants' }, h('p', { class: 'loading' }, 'Loading…'));
    const refresh = async () => {
      const [tenants, queues, classes, nodes, jobs] = await Promise.all([
        get('/v1/tenants', { signal: ctx.signal }), get('/v1/queues', { signal: ctx.signal }),
        get('/v1/priorityclasses', { signal: ctx.signal }), get('/v1/nodes', { signal: ctx.signal }),
        getAll('/v1/jobs?state=Scheduled,Running', { signal: ctx.signal })]);
      if (ctx.signal.aborted) return;
      const poolGpus = (nodes.items || []).reduce((s, n) => s + (n.gpus || []).filter((g) => !g.drained).length, 0);
      replace(body,
        section(ctx.me.tenant ? 'Your tenant' : 'Tenants', tenantTable(tenants.items, useByModel(jobs.items))),
        section('Queues', queueTable(queues.items, poolGpus)),
        section('Priority classes', classTable(classes.items)));
    };
    const history = h('div');
    ctx.root.append(h('div', { class: 'page-head' }, h('h1', null, 'Tenants and queues'),
      h('button', { type: 'button', class: 'btn', onclick: () => refresh().catch(ctx.fail) }, 'Refresh')), body, history);
    await refresh();
    ctx.every(refresh, 10000);
    const names = (await get('/v1/tenants', { signal: ctx.signal })).items.map((t) => t.name);
    if (!ctx.signal.aborted && names.length) replace(history, section('Allocation over time', allocation(ctx, names)));
  },
};
