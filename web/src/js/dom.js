// Small DOM and formatting helpers. Elements are built with h(), never from HTML strings, so
// names that come from the API cannot inject markup. Inline style attributes are refused by the
// server's Content-Security-Policy: styles are set through element.style (the CSSOM) only.

// h('a', {href: '#/jobs', class: 'x', onclick: fn, dataset: {k: v}, style: {width: '10%'}},
//   'text', child, [more, children]): null, undefined and false children are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = Array.isArray(v) ? v.filter(Boolean).join(' ') : v;
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else if (k === 'style') Object.assign(el.style, v);
      else if (k === 'text') el.textContent = v;
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
      else if (k in el && !k.includes('-') && typeof v !== 'string') el[k] = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

// Replaces el's children, keeping the keyboard focus on the element with the same
// data-focus-key when the focus was inside el (so a periodic refresh never steals it).
export function replace(el, ...children) {
  const active = document.activeElement;
  const key = active && el.contains(active) ? active.dataset.focusKey : undefined;
  el.replaceChildren();
  append(el, children);
  if (key !== undefined) {
    const again = el.querySelector(`[data-focus-key="${CSS.escape(key)}"]`);
    if (again) {
      again.tabIndex = 0;
      again.focus({ preventScroll: true });
    }
  }
}

export const num = new Intl.NumberFormat(undefined, { maximumFractionDigits: 3 });
const num1 = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1 });
const num2 = new Intl.NumberFormat(undefined, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const sig3 = new Intl.NumberFormat(undefined, { maximumSignificantDigits: 3 });

// GPUs as the API gives them (fractions to a thousandth).
export const gpus = (n) => num.format(Math.round((n || 0) * 1000) / 1000);
// Hours: small amounts (a test pool's minutes) keep three significant digits, not "0".
export const hours = (n) => {
  if (!n) return '0';
  if (n >= 100) return num1.format(n);
  return n >= 1 ? num.format(n) : sig3.format(n);
};
export const money = (s, currency) => (s === null || s === undefined ? '—'
  : `${num2.format(Number(s))}${currency ? ` ${currency}` : ''}`);
export const pct = (x) => (x === null || x === undefined || Number.isNaN(x) ? '—' : `${Math.round(x)}%`);

export function mib(n) {
  if (!n) return '0';
  if (n >= 1024) return `${num1.format(n / 1024)} GiB`;
  return `${n} MiB`;
}

export function time(ms) {
  if (!ms) return '—';
  return new Date(ms).toLocaleString(undefined, {
    year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit',
  });
}

export function duration(ms) {
  if (ms === null || ms === undefined || ms < 0) return '—';
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const hh = Math.floor(m / 60);
  if (hh < 48) return `${hh}h ${m % 60}m`;
  return `${Math.floor(hh / 24)}d ${hh % 24}h`;
}

export const ago = (ms) => (ms ? `${duration(Date.now() - ms)} ago` : '—');

// A stable colour per name (tenant, queue, model), spread around the hue circle; the lightness
// keeps white text readable on it.
export function colourOf(name, dark = false) {
  let x = 2166136261;
  for (const ch of String(name)) x = Math.imul(x ^ ch.codePointAt(0), 16777619) >>> 0;
  const hue = (x % 360 + ((x >>> 9) % 7) * 51) % 360;
  return dark ? `hsl(${hue} 55% 62%)` : `hsl(${hue} 62% 36%)`;
}

// Utilisation (0..100, or null) as a colour on a sequential scale from pale to deep blue-violet;
// with the text colour that stays readable on it.
const UTIL_STOPS = [[0, 232, 238, 245], [25, 175, 205, 235], [50, 110, 150, 220], [75, 80, 80, 190],
  [100, 60, 20, 120]];
export function utilColour(u) {
  if (u === null || u === undefined) return { bg: '', fg: '' };
  const v = Math.max(0, Math.min(100, u));
  let i = 0;
  while (i < UTIL_STOPS.length - 2 && v > UTIL_STOPS[i + 1][0]) i++;
  const [a, b] = [UTIL_STOPS[i], UTIL_STOPS[i + 1]];
  const t = (v - a[0]) / (b[0] - a[0]);
  const c = [1, 2, 3].map((k) => Math.round(a[k] + (b[k] - a[k]) * t));
  const lum = (0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]) / 255;
  return { bg: `rgb(${c.join(' ')})`, fg: lum < 0.5 ? '#fff' : '#111' };
}

// A labelled meter: used of limit (limit absent: no bar, just the number).
export function meter(used, limit, { label, format = gpus } = {}) {
  const text = limit === undefined || limit === null ? format(used) : `${format(used)} of ${format(limit)}`;
  if (limit === undefined || limit === null || limit <= 0) return h('span', { class: 'meter-text' }, text);
  const ratio = used / limit;
  return h('span', { class: 'meter' },
    h('meter', { min: 0, max: limit, value: Math.min(used, limit), high: limit * 0.9, optimum: 0,
      'aria-label': label ? `${label}: ${text}` : text }),
    h('span', { class: ['meter-text', ratio > 1 && 'over'] }, text));
}

export function badge(text, kind = '') {
  return h('span', { class: `badge ${kind ? `badge-${kind}` : ''}` }, text);
}

const STATE_KIND = {
  Pending: 'warn', Scheduled: 'info', Running: 'ok', Succeeded: 'done', Failed: 'bad',
  Cancelled: 'muted', Preempted: 'warn', Ready: 'ok', NotReady: 'bad',
};
export const stateBadge = (s) => badge(s, STATE_KIND[s] || '');

export const ENDED = new Set(['Succeeded', 'Failed', 'Cancelled']);

// What a job asks for per replica, in words: "2 GPUs", "0.5 GPU", "MIG 1g.10gb", ...
export function requestText(spec) {
  const r = (spec && spec.resources) || {};
  const parts = [];
  if (r.gpus) parts.push(`${r.gpus} GPU${r.gpus > 1 ? 's' : ''}`);
  if (r.gpu_milli) parts.push(`${gpus(r.gpu_milli / 1000)} GPU`);
  if (r.gpu_memory_mib) parts.push(`${mib(r.gpu_memory_mib)} GPU mem`);
  if (r.cores_percent) parts.push(`${r.cores_percent}% cores`);
  if (r.mig_profile) parts.push(`MIG ${r.mig_profile}`);
  if (!parts.length) parts.push('CPU only');
  if (r.gpu_models && r.gpu_models.length) parts.push(`on ${r.gpu_models.join(', ')}`);
  const n = (spec && spec.replicas) || 1;
  return n > 1 ? `${n} × ${parts.join(', ')}` : parts.join(', ');
}

// Where a job runs, in words: "gpu-01 GPU 0 (500m), gpu-02 GPU 1".
export function placementText(job) {
  return (job.placement || []).map((p) => {
    const g = p.gpus.map((x) => {
      if (x.mig_profile) return `${x.index} (${x.mig_profile})`;
      if (x.milli && x.milli < 1000) return `${x.index} (${x.milli}m)`;
      return String(x.index);
    });
    return g.length ? `${p.node} GPU ${g.join(', ')}` : p.node;
  }).join('; ');
}

export function table({ caption, columns, rows, empty = 'Nothing to show.', className = '' }) {
  const cls = (c) => [c.num && 'num', c.wrap && 'wrap'].filter(Boolean).join(' ');
  const thead = h('thead', null, h('tr', null, columns.map((c) =>
    h('th', { scope: 'col', class: cls(c) }, c.label))));
  const tbody = h('tbody');
  if (!rows.length) {
    tbody.append(h('tr', null, h('td', { colspan: columns.length, class: 'empty' }, empty)));
  }
  for (const row of rows) {
    tbody.append(h('tr', row.attrs || null, columns.map((c, i) => {
      const v = c.cell(row);
      return i === 0 && c.header !== false
        ? h('th', { scope: 'row', class: cls(c) }, v)
        : h('td', { class: cls(c) }, v);
    })));
  }
  return h('div', { class: `table-wrap ${className}` },
    h('table', null, caption ? h('caption', null, caption) : null, thead, tbody));
}

export function section(title, ...children) {
  const id = `s-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return h('section', { class: 'panel', 'aria-labelledby': id }, h('h2', { id }, title), children);
}
