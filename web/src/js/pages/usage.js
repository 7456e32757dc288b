// Usage and billing: GPU-hours (allocated or used) and cost over time by tenant, queue, GPU model
// or node (GET /v1/usage, docs/billing.md), as a chart and a table, with the same report as CSV
// and XLSX downloads. The choices are kept in the address (#/usage?by=queue&period=week).

import { get, download, query } from '../api.js';
import { h, replace, table, section, hours, money } from '../dom.js';
import { lineChart } from '../chart.js';
import { toSeries } from '../model.js';

const DAY = 86400000;
const isoDate = (ms) => new Date(ms).toISOString().slice(0, 10);

const METRICS = {
  gpu_hours: { label: 'GPU-hours allocated', format: hours },
  gpu_hours_used: { label: 'GPU-hours used (utilisation-weighted)', format: hours },
  cost: { label: 'Cost', format: (v) => money(v) },
};

function choice(id, label, options, value) {
  return h('div', { class: 'field field-inline' }, h('label', { for: id }, label),
    h('select', { id, name: id }, options.map(([v, t]) => h('option', { value: v, selected: v === value }, t))));
}

export default {
  title: () => 'Usage and billing',
  async render(ctx) {
    const q = ctx.query;
    const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    const p = {
      by: q.get('by') || 'tenant',
      period: q.get('period') || 'day',
      from: q.get('from') || isoDate(today - 13 * DAY),
      to: q.get('to') || isoDate(today + DAY),
      metric: q.get('metric') || 'gpu_hours',
    };
    const form = h('form', { class: 'filters', 'aria-label': 'Usage report' },
      choice('u-by', 'Group by', [['tenant', 'Tenant'], ['queue', 'Queue'], ['model', 'GPU model'], ['node', 'Node']], p.by),
      choice('u-period', 'Period', [['day', 'Day'], ['week', 'Week'], ['month', 'Month']], p.period),
      h('div', { class: 'field field-inline' }, h('label', { for: 'u-from' }, 'From (UTC)'),
        h('input', { type: 'date', id: 'u-from', name: 'u-from', value: p.from, required: true })),
      h('div', { class: 'field field-inline' }, h('label', { for: 'u-to' }, 'To (UTC, excluded)'),
        h('input', { type: 'date', id: 'u-to', name: 'u-to', value: p.to, required: true })),
      choice('u-metric', 'Chart', Object.entries(METRICS).map(([k, m]) => [k, m.label]), p.metric),
      h('button', { type: 'submit', class: 'btn' }, 'Show'));
    const apply = () => {
      const v = (id) => form.querySelector(`#${id}`).value;
      ctx.go(`#/usage${query({ by: v('u-by'), period: v('u-period'), from: v('u-from'), to: v('u-to'), metric: v('u-metric') })}`);
    };
    form.addEventListener('submit', (e) => { e.preventDefault(); apply(); });
    for (const s of form.querySelectorAll('select')) s.addEventListener('change', apply);

    const api = (extra = {}) => `/v1/usage${query({ by: p.by, period: p.period, from: p.from, to: p.to, ...extra })}`;
    const save = async (format) => {
      try {
        const got = await download(api({ format }), `gpupool-usage-${p.by}-${p.from}-${p.to}.${format}`);
        ctx.announce(`Downloaded ${got.name} (${got.size} bytes)`);
      } catch (e) {
        ctx.fail(e);
      }
    };
    const downloads = h('div', { class: 'actions', role: 'group', 'aria-label': 'Download the report' },
      h('button', { type: 'button', class: 'btn', id: 'download-csv', onclick: () => save('csv') }, 'Download CSV'),
      h('button', { type: 'button', class: 'btn', id: 'download-xlsx', onclick: () => save('xlsx') }, 'Download XLSX'));
    const chartBox = h('div', { class: 'chart' });
    const figure = h('figure', { class: 'chart-figure' }, chartBox,
      h('figcaption', { id: 'chart-caption' }));
    const tableBox = h('div');
    const totals = h('dl', { class: 'stats' });
    let chart = null;
    ctx.signal.addEventListener('abort', () => { if (chart) chart.destroy(); });

    ctx.root.append(h('div', { class: 'page-head' }, h('h1', null, 'Usage and billing'), downloads), form,
      totals, section('Over time', figure), section('Report', tableBox));

    const report = await get(api(), { signal: ctx.signal });
    const metric = METRICS[p.metric] ? p.metric : 'gpu_hours';
    const cur = report.currency;
    const t = report.total;
    const card = (label, value) => h('div', { class: 'stat' }, h('dt', null, label), h('dd', null, h('span', { class: 'stat-value' }, value)));
    replace(totals,
      card('GPU-hours allocated', hours(t.gpu_hours)),
      card('GPU-hours used', hours(t.gpu_hours_used)),
      card('Efficiency', t.gpu_hours ? `${Math.round((t.gpu_hours_used / t.gpu_hours) * 100)}%` : '—'),
      card('CPU core-hours', hours(t.cpu_core_hours)),
      card('Cost', cur ? money(t.cost, cur) : 'no price table'));
    const { xs, series } = toSeries(report, metric);
    const m = METRICS[metric];
    figure.setAttribute('aria-labelledby', 'chart-caption');
    figure.querySelector('figcaption').textContent = `${m.label} by ${p.by} and ${p.period}, ${report.from.slice(0, 10)} to ${report.to.slice(0, 10)} (UTC). `
      + `${series.length} ${p.by}${series.length === 1 ? '' : 's'}; the table below has every number.`;
    if (!xs.length) {
      replace(chartBox, h('p', { class: 'empty' }, 'No usage in this range.'));
    } else if (metric === 'cost' && !cur) {
      replace(chartBox, h('p', { class: 'empty' }, 'No price table is configured: usage has no cost (billing.price_table).'));
    } else {
      chart = lineChart(chartBox, { xs, series, unit: m.label, format: m.format, step: p.period,
        range: [report.from_ms / 1000, report.to_ms / 1000] });
    }
    replace(tableBox, table({
      caption: `As of ${new Date(report.as_of).toLocaleString()}: placements still running are counted up to then`,
      columns: [
        { label: p.by[0].toUpperCase() + p.by.slice(1), cell: (r) => r.key },
        { label: 'Period (UTC)', cell: (r) => r.period_start.slice(0, 10) },
        { label: 'GPU-hours', num: true, cell: (r) => hours(r.gpu_hours) },
        { label: 'Used GPU-hours', num: true, cell: (r) => hours(r.gpu_hours_used) },
        { label: 'CPU core-hours', num: true, cell: (r) => hours(r.cpu_core_hours) },
        { label: 'Memory GiB-hours', num: true, cell: (r) => hours(r.memory_gib_hours) },
        { label: 'Cost', num: true, cell: (r) => money(r.cost, cur) },
      ],
      rows: report.rows,
      empty: 'No usage in this range.',
    }));
  },
};
