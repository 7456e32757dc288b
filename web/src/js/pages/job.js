// One job (#/jobs/ID): its state and why, its image and network, where it runs, its events, its
// replicas' logs, its spec; cancel and requeue; a notebook's Open and Resume.

import { ApiError, apiBase, get, post, request, query } from '../api.js';
import { h, replace, table, stateBadge, requestText, time, ago, duration, gpus, mib, pct, ENDED } from '../dom.js';
import { lineChart } from '../chart.js';
import { historySeries, latestOf } from '../model.js';
import { cancelJob } from './jobs.js';

// The image in full with its pull policy, or what a job without one runs over.
function imageFact(spec) {
  if (!spec.image) return h('span', { class: 'muted' }, "none: the host's root filesystem, read-only");
  return h('span', { class: 'image' }, h('code', null, spec.image),
    spec.image_pull_policy ? ` (pull ${spec.image_pull_policy})` : null);
}

function facts(j) {
  const rows = [
    ['State', h('span', null, stateBadge(j.state), j.reason ? h('span', { class: 'reason' }, ` ${j.reason}`) : null)],
    ['Tenant', j.tenant], ['Queue', j.queue], ['Priority', `${j.priority_class} (${j.priority})`],
    ['Asks', requestText(j.spec)], ['Gang size', String(j.replicas)],
    ['Image', imageFact(j.spec || {})], ['Network', (j.spec && j.spec.network) || 'host'],
    ['Submitted', `${time(j.submit_time_ms)} (${ago(j.submit_time_ms)})`],
    ['Started', time(j.start_time_ms)],
    ['Ended', j.end_time_ms ? time(j.end_time_ms) : '—'],
    ['Run time', j.start_time_ms ? duration((j.end_time_ms || Date.now()) - j.start_time_ms) : '—'],
    ['Restarts', String(j.restarts)],
  ];
  if (j.state === 'Failed') rows.push(['Exit code', String(j.exit_code)]);
  if (j.spec && j.spec.preemptible) rows.push(['Preemptible', 'yes']);
  return h('dl', { class: 'facts' }, rows.map(([k, v]) => [h('dt', null, k), h('dd', null, v)]));
}

function placement(j) {
  const rows = [];
  for (const p of j.placement || []) {
    for (const g of p.gpus.length ? p.gpus : [null]) rows.push({ p, g });
  }
  return table({
    caption: 'Where its replicas run',
    columns: [
      { label: 'Replica', cell: (r) => String(r.p.replica) },
      { label: 'Node', cell: (r) => h('a', { href: `#/nodes?node=${encodeURIComponent(r.p.node)}` }, r.p.node) },
      { label: 'GPU', cell: (r) => (r.g ? `${r.g.index} · ${r.g.model}` : '—') },
      { label: 'Share', cell: (r) => {
        if (!r.g) return 'CPU only';
        if (r.g.mig_profile) return `MIG ${r.g.mig_profile} (slice ${r.g.mig_start})`;
        return r.g.milli >= 1000 ? 'whole GPU' : `${gpus(r.g.milli / 1000)} GPU${r.g.memory_mib ? `, ${mib(r.g.memory_mib)}` : ''}`;
      } },
      { label: 'UUID', cell: (r) => (r.g ? h('code', null, r.g.uuid) : '—') },
      { label: 'Epoch', num: true, cell: (r) => String(r.p.epoch) },
      { label: 'Agent reports', cell: (r) => r.p.state },
    ],
    rows,
    empty: ENDED.has(j.state) ? 'It holds nothing: it has ended.' : 'Not placed yet.',
  });
}

function events(items) {
  return table({
    caption: 'Events, oldest first',
    columns: [
      { label: 'Time', header: false, cell: (e) => time(e.time_ms) },
      { label: 'Event', cell: (e) => e.type },
      { label: 'Message', wrap: true, cell: (e) => e.message },
    ],
    rows: items,
    empty: 'No events.',
  });
}

// The logs viewer: replica and stream pickers, the text, and follow (appends what is new).
function logs(ctx, j) {
  const out = h('pre', { class: 'logs', tabindex: '0', 'aria-label': 'Log output' });
  const note = h('p', { class: 'muted', 'aria-live': 'polite' });
  const replicaSel = h('select', { id: 'log-replica' },
    Array.from({ length: j.replicas }, (_, i) => h('option', { value: String(i) }, `Replica ${i}`)));
  const streamSel = h('select', { id: 'log-stream' }, h('option', { value: 'stdout' }, 'stdout'),
    h('option', { value: 'stderr' }, 'stderr'));
  const follow = h('input', { type: 'checkbox', id: 'log-follow', checked: !ENDED.has(j.state) });
  let offset = 0;
  let decoder = new TextDecoder();
  let generation = 0; // a reload makes the answers of earlier reads stale
  const load = async (fresh) => {
    if (fresh) { offset = 0; out.textContent = ''; decoder = new TextDecoder(); generation += 1; }
    const mine = generation;
    const path = `/v1/jobs/${j.id}/logs${query({ replica: replicaSel.value, stream: streamSel.value, offset })}`;
    try {
      const resp = await request('GET', path, undefined, { signal: ctx.signal });
      const buf = await resp.arrayBuffer();
      if (mine !== generation) return;
      offset += buf.byteLength; // offsets are in bytes; a character split between reads is kept
      const text = decoder.decode(buf, { stream: true });
      if (text) {
        const atEnd = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
        out.append(text);
        if (atEnd) out.scrollTop = out.scrollHeight;
      }
      note.textContent = offset ? `${offset} bytes` : 'No output yet.';
    } catch (e) {
      if (e.name === 'AbortError') return;
      note.textContent = e instanceof ApiError && e.status === 409 ? 'The job has not run yet: no logs.'
        : `Logs are not available: ${e.message}`;
    }
  };
  replicaSel.addEventListener('change', () => load(true));
  streamSel.addEventListener('change', () => load(true));
  ctx.every(async () => { if (follow.checked) await load(false); }, 2000);
  load(true);
  return h('div', { class: 'logs-view' },
    h('div', { class: 'filters' },
      h('div', { class: 'field field-inline' }, h('label', { for: 'log-replica' }, 'Replica'), replicaSel),
      h('div', { class: 'field field-inline' }, h('label', { for: 'log-stream' }, 'Stream'), streamSel),
      h('div', { class: 'field field-inline check' }, follow, h('label', { for: 'log-follow' }, 'Follow')),
      h('button', { type: 'button', class: 'btn', onclick: () => load(true) }, 'Reload')),
    note, out);
}

const RANGES = { '1h': 'the last hour', '6h': 'the last 6 hours', '24h': 'the last day', '7d': 'the last week' };
const CHARTS = [
  { metric: 'gpu_util', what: 'GPU utilisation', unit: 'GPU utilisation (%)', format: pct, yMax: 100 },
  { metric: 'gpu_mem_mib', what: 'GPU memory used', unit: 'GPU memory', format: (v) => mib(Math.round(v)), yMax: 1024 },
];

// Its GPU utilisation and memory over time (GET /v1/jobs/{id}/metrics), the job's and each
// replica's, with a range picker; the captions say the latest values in words.
function history(ctx, j) {
  const rangeSel = h('select', { id: 'hist-range' },
    Object.entries(RANGES).map(([v, label]) => h('option', { value: v }, label[0].toUpperCase() + label.slice(1))));
  const figs = CHARTS.map((c) => {
    const box = h('div', { class: 'chart' });
    const cap = h('figcaption', { id: `hist-${c.metric}` });
    return { ...c, box, cap, fig: h('figure', { class: 'chart-figure history-chart', 'aria-labelledby': `hist-${c.metric}` }, box, cap) };
  });
  let charts = [];
  const clear = () => { charts.forEach((c) => c.destroy()); charts = []; };
  ctx.signal.addEventListener('abort', clear);
  const load = async () => {
    const range = rangeSel.value;
    const doc = await get(`/v1/jobs/${j.id}/metrics${query({ from: `-${range}` })}`, { signal: ctx.signal });
    if (ctx.signal.aborted || range !== rangeSel.value) return;
    clear();
    for (const f of figs) {
      const { xs, series } = historySeries(doc, f.metric);
      const last = latestOf(doc, f.metric);
      f.cap.textContent = `${f.what} over ${RANGES[range]} (UTC), a point every ${duration(doc.step_s * 1000)}. `
        + (last ? `Latest: ${f.format(last.value)} for the job (${f.format(last.min)} to ${f.format(last.max)}).`
          : 'No readings in this range.');
      if (!last) {
        replace(f.box, h('p', { class: 'empty' }, 'No readings in this range.'));
      } else {
        replace(f.box);
        charts.push(lineChart(f.box, { xs, series, unit: f.unit, format: f.format, step: 'time', yMax: f.yMax,
          range: [xs[0], xs[xs.length - 1] + doc.step_s] }));
      }
    }
  };
  rangeSel.addEventListener('change', () => load().catch((e) => { if (e.name !== 'AbortError') ctx.fail(e); }));
  ctx.every(load, 10000);
  load().catch((e) => { if (e.name !== 'AbortError') ctx.fail(e); });
  return h('div', { class: 'history-view' },
    h('div', { class: 'filters' },
      h('div', { class: 'field field-inline' }, h('label', { for: 'hist-range' }, 'Range'), rangeSel)),
    figs.map((f) => f.fig));
}

// A notebook's Open (Running: a one-time address opened in a new tab; the API token never goes
// into a URL) or Resume (Suspended: it is placed and started again).
function notebookButton(ctx, j, refresh) {
  const kind = j.spec && j.spec.kind;
  if (kind !== 'notebook' && kind !== 'service') return null;
  if (j.state === 'Suspended') {
    return h('button', { type: 'button', class: 'btn btn-primary', dataset: { focusKey: 'resume' },
      onclick: async () => {
        try {
          await post(`/v1/jobs/${j.id}/resume`);
          ctx.announce(`${j.name} resumes: it is placed and started again`);
          await refresh();
        } catch (e) { ctx.fail(e); }
      } }, 'Resume');
  }
  if (j.state !== 'Running') return null;
  return h('button', { type: 'button', class: 'btn btn-primary', dataset: { focusKey: 'open' },
    onclick: async () => {
      const tab = window.open('about:blank', '_blank'); // before the await: not a blocked popup
      try {
        const s = await post(`/v1/jobs/${j.id}/proxy-session`);
        if (tab) tab.location = apiBase + s.url; else location.assign(apiBase + s.url);
      } catch (e) {
        if (tab) tab.close();
        ctx.fail(e);
      }
    } }, 'Open');
}

export default {
  title: (p) => `Job ${p.job}`,
  async render(ctx) {
    const ref = encodeURIComponent(ctx.params.job);
    const head = h('div', { class: 'page-head' });
    const body = h('div', { class: 'job' });
    const evBox = h('div');
    const refresh = async () => {
      const [j, ev] = await Promise.all([get(`/v1/jobs/${ref}`, { signal: ctx.signal }),
        get(`/v1/jobs/${ref}/events`, { signal: ctx.signal })]);
      if (ctx.signal.aborted) return;
      document.title = `${j.name} (job ${j.id}) · gpupool`;
      replace(head, h('h1', null, `${j.name} `, h('span', { class: 'muted' }, `job ${j.id}`)),
        ENDED.has(j.state) ? null : h('button', { type: 'button', class: 'btn btn-danger', dataset: { focusKey: 'cancel' },
          onclick: () => cancelJob(ctx, j, refresh) }, 'Cancel job'),
        ['Scheduled', 'Running', 'Failed'].includes(j.state) ? h('button', { type: 'button', class: 'btn', dataset: { focusKey: 'requeue' },
          onclick: async () => {
            if (!(await ctx.confirm(`Requeue ${j.name}?`, 'It stops, releases its resources and waits in its queue again.', 'Requeue'))) return;
            try {
              await post(`/v1/jobs/${j.id}/requeue`);
              ctx.announce(`Job ${j.name} requeued`);
              await refresh();
            } catch (e) { ctx.fail(e); }
          } }, 'Requeue') : null,
        notebookButton(ctx, j, refresh));
      replace(evBox, events(ev.items || []));
      if (!body.dataset.ready) {
        body.dataset.ready = '1';
        body.append(
          h('section', { class: 'panel', 'aria-labelledby': 'j-sum' }, h('h2', { id: 'j-sum' }, 'Summary'), h('div', { class: 'j-facts' })),
          h('section', { class: 'panel', 'aria-labelledby': 'j-pl' }, h('h2', { id: 'j-pl' }, 'Placement'), h('div', { class: 'j-pl' })),
          h('section', { class: 'panel', 'aria-labelledby': 'j-hist' }, h('h2', { id: 'j-hist' }, 'GPU history'), history(ctx, j)),
          h('section', { class: 'panel', 'aria-labelledby': 'j-ev' }, h('h2', { id: 'j-ev' }, 'Events'), evBox),
          h('section', { class: 'panel', 'aria-labelledby': 'j-logs' }, h('h2', { id: 'j-logs' }, 'Logs'), logs(ctx, j)),
          h('section', { class: 'panel', 'aria-labelledby': 'j-spec' }, h('h2', { id: 'j-spec' }, 'Spec'),
            h('pre', { class: 'spec', tabindex: '0', 'aria-label': 'Job spec as JSON' }, JSON.stringify(j.spec, null, 2))));
      }
      replace(body.querySelector('.j-facts'), facts(j));
      replace(body.querySelector('.j-pl'), placement(j));
    };
    ctx.root.append(h('p', { class: 'crumbs' }, h('a', { href: '#/jobs' }, '← Jobs')), head, body);
    try {
      await refresh();
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        replace(head, h('h1', null, 'No such job'));
        body.append(h('p', null, `There is no job ${decodeURIComponent(ref)}, or it belongs to another tenant.`));
        return;
      }
      throw e;
    }
    ctx.every(refresh, 3000);
  },
};
