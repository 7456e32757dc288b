// Jobs: the queue with filters (tenant, queue, state, name) kept in the address
// (#/jobs?tenant=a&state=Pending,Running), each job's image, pending reasons, placement and
// cancel.

import { get, getAll, post, query } from '../api.js';
import { h, replace, table, stateBadge, requestText, placementText, ago, time, ENDED } from '../dom.js';
import { imageShort } from '../model.js';

export const STATES = ['Pending', 'Scheduled', 'Running', 'Succeeded', 'Failed', 'Cancelled', 'Preempted'];
const STATE_SETS = [
  ['', 'All states'],
  ['Pending,Scheduled,Running,Preempted', 'Active (not ended)'],
  ['Pending,Preempted', 'Waiting'],
  ...STATES.map((s) => [s, s]),
];

export async function cancelJob(ctx, job, after) {
  if (!(await ctx.confirm(`Cancel ${job.name}?`,
    `Job ${job.id} (${job.tenant}) stops and releases its GPUs. This cannot be undone.`, 'Cancel job'))) return;
  try {
    await post(`/v1/jobs/${job.id}/cancel`);
    ctx.announce(`Job ${job.name} cancelled`);
    if (after) await after();
  } catch (e) {
    ctx.fail(e);
  }
}

function select(id, label, options, value) {
  return h('div', { class: 'field field-inline' },
    h('label', { for: id }, label),
    h('select', { id, name: id }, options.map(([v, t]) => h('option', { value: v, selected: v === value }, t))));
}

export default {
  title: () => 'Jobs',
  async render(ctx) {
    const q = ctx.query;
    const filters = { tenant: q.get('tenant') || '', queue: q.get('queue') || '', state: q.get('state') ?? 'Pending,Scheduled,Running,Preempted',
      name: q.get('name') || '' };
    const [tenants, queues] = await Promise.all([get('/v1/tenants', { signal: ctx.signal }), get('/v1/queues', { signal: ctx.signal })]);
    const form = h('form', { class: 'filters', role: 'search', 'aria-label': 'Filter jobs' },
      ctx.me.tenant ? null : select('f-tenant', 'Tenant', [['', 'All tenants'], ...tenants.items.map((t) => [t.name, t.name])], filters.tenant),
      select('f-queue', 'Queue', [['', 'All queues'], ...queues.items.map((x) => [x.name, x.name])], filters.queue),
      select('f-state', 'State', STATE_SETS.some(([v]) => v === filters.state) ? STATE_SETS
        : [...STATE_SETS, [filters.state, filters.state]], filters.state),
      h('div', { class: 'field field-inline' }, h('label', { for: 'f-name' }, 'Name'),
        h('input', { id: 'f-name', name: 'f-name', type: 'search', value: filters.name, autocomplete: 'off' })),
      h('button', { type: 'submit', class: 'btn' }, 'Apply'));
    const apply = () => {
      const v = (id) => (form.querySelector(`#${id}`) ? form.querySelector(`#${id}`).value : '');
      const next = { tenant: v('f-tenant'), queue: v('f-queue'), state: v('f-state'), name: v('f-name').trim() };
      const qs = new URLSearchParams(Object.entries(next).filter(([k, x]) => x !== '' || k === 'state')).toString();
      ctx.go(`#/jobs${qs ? `?${qs}` : ''}`);
    };
    form.addEventListener('submit', (e) => { e.preventDefault(); apply(); });
    for (const s of form.querySelectorAll('select')) s.addEventListener('change', apply);

    const count = h('p', { class: 'muted', 'aria-live': 'polite' });
    const list = h('div', { class: 'job-list' }, h('p', { class: 'loading' }, 'Loading…'));
    // The API pages in ascending id order and cannot start from the newest: the list is read
    // whole (up to 5,000 jobs) and shown newest first, 200 rows at a time.
    let items = [];
    let truncated = false;
    let shown = 200;
    const draw = () => {
      const rows = [...items].sort((a, b) => b.id - a.id).slice(0, shown);
      count.textContent = `${items.length}${truncated ? '+' : ''} job${items.length === 1 ? '' : 's'}`
        + (rows.length < items.length ? `, the newest ${rows.length} shown` : '');
      const more = rows.length < items.length ? h('button', { type: 'button', class: 'btn',
        onclick: () => { shown += 200; draw(); } }, 'Show more') : null;
      replace(list, table({
        caption: 'Jobs, newest first',
        columns: [
          { label: 'Job', cell: (j) => h('a', { href: `#/jobs/${j.id}`, dataset: { focusKey: `job-${j.id}` } }, `${j.name}`, h('span', { class: 'muted' }, ` #${j.id}`)) },
          { label: 'Tenant', cell: (j) => j.tenant },
          { label: 'Queue', cell: (j) => j.queue },
          { label: 'Priority', cell: (j) => `${j.priority_class} (${j.priority})` },
          { label: 'State', cell: (j) => stateBadge(j.state) },
          { label: 'Asks', cell: (j) => requestText(j.spec) },
          { label: 'Image', wrap: true, cell: (j) => (j.spec && j.spec.image
            ? h('code', { class: 'image', title: j.spec.image }, imageShort(j.spec.image))
            : h('span', { class: 'muted', title: "No image: the host's root filesystem, read-only" }, 'host root')) },
          { label: 'Placement / reason', wrap: true, cell: (j) => (j.placement && j.placement.length ? placementText(j)
            : h('span', { class: 'reason' }, j.reason || '—')) },
          { label: 'Submitted', cell: (j) => h('span', { title: time(j.submit_time_ms) }, ago(j.submit_time_ms)) },
          { label: 'Actions', cell: (j) => (ENDED.has(j.state) ? null : h('button', {
            type: 'button', class: 'btn btn-small btn-danger', 'aria-label': `Cancel job ${j.name} (${j.id})`,
            dataset: { focusKey: `cancel-${j.id}` }, onclick: () => cancelJob(ctx, j, refresh),
          }, 'Cancel')) },
        ],
        rows: rows.map((j) => ({ ...j, attrs: { dataset: { job: String(j.id), name: j.name } } })),
        empty: 'No job matches these filters.',
      }), more);
    };
    const refresh = async () => {
      // Newest first from the server: the first pages are the ones shown.
      const all = await getAll(`/v1/jobs${query({ ...filters, order: 'desc' })}`,
        { max: 2000, signal: ctx.signal });
      if (ctx.signal.aborted) return;
      items = all.items;
      truncated = all.more;
      draw();
    };
    ctx.root.append(h('div', { class: 'page-head' }, h('h1', null, 'Jobs'), count,
      h('a', { href: '#/submit', class: 'btn btn-primary' }, 'Submit a job')), form, list);
    await refresh();
    ctx.every(refresh, 5000);
  },
};
