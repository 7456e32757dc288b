// Overview: capacity and allocation by GPU model, the GPU heatmap, fragmentation, pending jobs
// and why they wait, active alerts. Refreshed every 5 seconds.

import { ApiError, get, getAll } from '../api.js';
import { h, replace, table, section, gpus, pct, meter, time, ago, badge, requestText } from '../dom.js';
import { heatmap } from '../heatmap.js';
import { byModel, fragmentation, reasonClass } from '../model.js';

const ACTIVE = 'Pending,Scheduled,Running,Preempted';

function stats(nodes, jobs, models) {
  const total = models.reduce((s, m) => s + m.total, 0);
  const service = models.reduce((s, m) => s + m.service, 0);
  const alloc = models.reduce((s, m) => s + m.alloc, 0);
  const free = models.reduce((s, m) => s + m.free, 0);
  const stranded = models.reduce((s, m) => s + m.stranded, 0);
  const ready = nodes.filter((n) => n.state === 'Ready').length;
  const running = jobs.filter((j) => j.state === 'Running' || j.state === 'Scheduled').length;
  const pending = jobs.filter((j) => j.state === 'Pending' || j.state === 'Preempted').length;
  const card = (label, value, note) => h('div', { class: 'stat' },
    h('dt', null, label), h('dd', null, h('span', { class: 'stat-value' }, value), note ? h('span', { class: 'stat-note' }, note) : null));
  return h('dl', { class: 'stats' },
    card('GPUs', String(total), `${service} in service`),
    card('Allocated', `${gpus(alloc)} GPU`, service ? pct((alloc / Math.max(total, 1)) * 100) : '—'),
    card('Fragmentation', free ? pct((stranded / free) * 100) : '0%', 'of free compute on partly used GPUs'),
    card('Nodes', `${ready} / ${nodes.length}`, 'ready'),
    card('Running jobs', String(running)),
    card('Pending jobs', String(pending)));
}

function capacity(models) {
  return section('Capacity by GPU model', table({
    caption: 'GPUs, allocation and fragmentation per model',
    columns: [
      { label: 'Model', cell: (m) => m.model },
      { label: 'GPUs', num: true, cell: (m) => String(m.total) },
      { label: 'In service', num: true, cell: (m) => String(m.service) },
      { label: 'Allocated', cell: (m) => meter(m.alloc, m.total, { label: `${m.model} allocated GPUs` }) },
      { label: 'Free', num: true, cell: (m) => gpus(m.free) },
      { label: 'Fragmentation', num: true, cell: (m) => pct(fragmentation(m)) },
      { label: 'Mean util.', num: true, cell: (m) => (m.utilN ? pct(m.util / m.utilN) : '—') },
      { label: 'MIG / drained', num: true, cell: (m) => `${m.mig} / ${m.drained}` },
    ],
    rows: models,
    empty: 'No GPUs yet: no node has registered.',
  }));
}

function pendingPanel(jobs) {
  const pending = jobs.filter((j) => j.state === 'Pending' || j.state === 'Preempted')
    .sort((a, b) => a.submit_time_ms - b.submit_time_ms);
  const classes = new Map();
  for (const j of pending) {
    const c = reasonClass(j.reason);
    classes.set(c, (classes.get(c) || 0) + 1);
  }
  const rows = [...classes.entries()].sort((a, b) => b[1] - a[1]);
  return section('Pending jobs',
    rows.length ? h('ul', { class: 'reason-list' }, rows.map(([c, n]) =>
      h('li', null, h('span', { class: 'reason-class' }, c), h('span', { class: 'reason-count' }, String(n))))) : null,
    table({
      caption: pending.length > 10 ? `The 10 oldest of ${pending.length} waiting jobs` : 'Waiting jobs, oldest first',
      columns: [
        { label: 'Job', cell: (j) => h('a', { href: `#/jobs/${j.id}` }, `${j.name} (${j.id})`) },
        { label: 'Tenant / queue', cell: (j) => `${j.tenant} / ${j.queue}` },
        { label: 'Asks', wrap: true, cell: (j) => requestText(j.spec) },
        { label: 'Waiting', cell: (j) => ago(j.submit_time_ms) },
        { label: 'Reason', wrap: true, cell: (j) => h('span', { class: 'reason' }, j.reason || '—') },
      ],
      rows: pending.slice(0, 10),
      empty: 'No job is waiting.',
    }));
}

const SEVERITY = { critical: 'bad', error: 'bad', warning: 'warn', info: 'info' };

function alertsPanel(alerts) {
  if (alerts instanceof Error) {
    return section('Active alerts', h('p', { class: 'muted' }, `Alerts are not available: ${alerts.message}`));
  }
  return section('Active alerts', table({
    caption: `${alerts.length} active alert${alerts.length === 1 ? '' : 's'}`,
    columns: [
      { label: 'Alert', cell: (a) => a.name },
      { label: 'Severity', cell: (a) => badge(a.severity || 'none', SEVERITY[a.severity] || '') },
      { label: 'Summary', wrap: true, cell: (a) => h('span', { title: a.description || '' }, a.summary || a.description || '—') },
      { label: 'Labels', wrap: true, cell: (a) => Object.entries(a.labels || {}).filter(([k]) => k !== 'alertname' && k !== 'severity')
        .map(([k, v]) => h('span', { class: 'label' }, `${k}=${v}`)) },
      { label: 'Since', cell: (a) => h('span', { title: time(a.starts_ms) }, ago(a.starts_ms)) },
    ],
    rows: alerts,
    empty: 'No active alerts.',
  }));
}

export default {
  title: () => 'Overview',
  async render(ctx) {
    const updated = h('span', { class: 'updated muted' });
    const body = h('div', { class: 'overview' }, h('p', { class: 'loading' }, 'Loading…'));
    const refresh = async () => {
      const [nodesDoc, jobsDoc, alerts] = await Promise.all([
        get('/v1/nodes', { signal: ctx.signal }),
        getAll(`/v1/jobs?state=${ACTIVE}`, { signal: ctx.signal }),
        get('/v1/alerts', { signal: ctx.signal }).then((d) => d.items || [],
          (e) => { if (e instanceof ApiError && e.status !== 401) return e; throw e; }),
      ]);
      if (ctx.signal.aborted) return;
      const nodes = nodesDoc.items || [];
      const jobs = jobsDoc.items;
      const models = byModel(nodes);
      replace(body,
        stats(nodes, jobs, models),
        h('div', { class: 'overview-grid' },
          h('section', { class: 'panel panel-heatmap', 'aria-labelledby': 'hm-title' },
            h('h2', { id: 'hm-title' }, 'GPUs'),
            heatmap(nodes, {
              jobs: jobs.filter((j) => j.state === 'Running' || j.state === 'Scheduled'),
              onOpen: (node, gpu) => ctx.go(`#/nodes?node=${encodeURIComponent(node)}&gpu=${gpu}`),
            })),
          h('div', { class: 'overview-side' }, capacity(models), pendingPanel(jobs), alertsPanel(alerts))));
      updated.textContent = `Updated ${new Date().toLocaleTimeString()}`;
    };
    ctx.root.append(
      h('div', { class: 'page-head' }, h('h1', null, 'Overview'), updated,
        h('button', { type: 'button', class: 'btn', onclick: () => refresh().catch(ctx.fail) }, 'Refresh')),
      body);
    await refresh();
    ctx.every(refresh, 5000);
  },
};
