// What the pages compute from the API's documents, kept apart from the DOM so that it can be
// tested with Node's test runner (web/test/): allocation and fragmentation by GPU model, MIG
// slices, quota use by model, chart series of a usage report, the field an API error names and
// the words of a command line.

// Per GPU model: GPUs, in service (not drained), allocated GPUs (milli / 1000), free, and
// fragmentation: the free compute stranded on partly allocated GPUs over all free compute of
// GPUs in service (the controller's gpupool_gpu_fragmentation_ratio, from the same numbers).
export function byModel(nodes) {
  const models = new Map();
  for (const n of nodes) {
    for (const g of n.gpus || []) {
      const m = models.get(g.model) || { model: g.model, total: 0, service: 0, alloc: 0, free: 0, stranded: 0,
        drained: 0, mig: 0, util: 0, utilN: 0 };
      models.set(g.model, m);
      m.total += 1;
      if (g.mig_mode) m.mig += 1;
      if (g.utilization !== null && g.utilization !== undefined) { m.util += g.utilization; m.utilN += 1; }
      const a = Math.min(1000, g.allocated_milli || 0);
      m.alloc += a / 1000;
      if (g.drained) { m.drained += 1; continue; }
      m.service += 1;
      m.free += (1000 - a) / 1000;
      if (a > 0 && a < 1000) m.stranded += (1000 - a) / 1000;
    }
  }
  return [...models.values()].sort((a, b) => a.model.localeCompare(b.model));
}

// Percent of a model's free compute that is stranded on partly allocated GPUs.
export const fragmentation = (m) => (m.free > 0 ? (m.stranded / m.free) * 100 : 0);

// The class of a pending reason: its text before the first colon ("quota", "capacity", "gang").
export const reasonClass = (r) => ((r || 'waiting').split(':')[0] || 'waiting').trim();

export const MIG_SLICES = 8; // memory slices of a MIG-capable GPU (A100, H100): placements start 0..7

// Memory slices a MIG profile takes on a GPU of total MiB: "1g.10gb" on an 80 GB GPU is 1,
// "3g.40gb" 4, "7g.80gb" 8.
export function migSlices(profile, totalMib) {
  const m = /^(\d+)g\.(\d+)gb/.exec(profile || '');
  if (!m) return 1;
  const totalGb = Math.max(1, Math.round(totalMib / 1024 / 5) * 5);
  return Math.max(1, Math.min(MIG_SLICES, Math.round((Number(m[2]) * MIG_SLICES) / totalGb)));
}

// The placements of visible jobs on (node, gpu index): the MIG profile and start slice of
// each, which the nodes' holder lists do not carry.
export function migIndex(jobs) {
  const idx = new Map();
  for (const j of jobs || []) {
    for (const p of j.placement || []) {
      for (const g of p.gpus || []) {
        if (!g.mig_profile) continue;
        idx.set(`${p.node}/${g.index}/${j.id}/${p.replica}`, g);
      }
    }
  }
  return idx;
}

// GPUs a placed GPU share counts for: a whole GPU 1, a fraction milli/1000, a MIG instance its
// compute slices out of 7 (1g.10gb: 1/7), as the controller counts quota use.
export function shareOf(g) {
  if (g.mig_profile) {
    const m = /^(\d+)g/.exec(g.mig_profile);
    return m ? Math.min(7, Number(m[1])) / 7 : 0;
  }
  return (g.milli || 0) / 1000;
}

// tenant -> model -> GPUs its Scheduled and Running jobs hold.
export function useByModel(jobs) {
  const out = new Map();
  for (const j of jobs) {
    for (const p of j.placement || []) {
      for (const g of p.gpus || []) {
        const t = out.get(j.tenant) || new Map();
        out.set(j.tenant, t);
        t.set(g.model, (t.get(g.model) || 0) + shareOf(g));
      }
    }
  }
  return out;
}

// The report's rows as chart series: one per key, a value per period start.
export function toSeries(report, metric) {
  const xs = [...new Set(report.rows.map((r) => Date.parse(r.period_start) / 1000))].sort((a, b) => a - b);
  const at = new Map(xs.map((x, i) => [x, i]));
  const byKey = new Map();
  for (const r of report.rows) {
    if (!byKey.has(r.key)) byKey.set(r.key, xs.map(() => null));
    const v = metric === 'cost' ? (r.cost === null ? null : Number(r.cost)) : r[metric];
    byKey.get(r.key)[at.get(Date.parse(r.period_start) / 1000)] = v;
  }
  return { xs, series: [...byKey.entries()].map(([label, values]) => ({ label, values })) };
}

// The chart series of one metric of a job's history (GET /v1/jobs/{id}/metrics): the job's
// means, then each replica's that has series of its own; xs are the points' starts (unix
// seconds). A point without samples stays null (a gap).
export function historySeries(doc, metric) {
  const xs = doc.times || [];
  const series = (doc.series || []).filter((s) => s.metric === metric)
    .sort((a, b) => (a.replica === undefined ? -1 : a.replica) - (b.replica === undefined ? -1 : b.replica))
    .map((s) => ({ label: s.replica === undefined ? 'Job' : `Replica ${s.replica}`, values: s.mean }));
  return { xs, series };
}

// The newest point with samples of the job's own series of metric: {t (unix seconds), value
// (the mean), min, max}, or null.
export function latestOf(doc, metric) {
  const s = (doc.series || []).find((x) => x.metric === metric && x.replica === undefined);
  for (let i = (s ? s.mean.length : 0) - 1; i >= 0; i--) {
    if (s.mean[i] !== null && s.mean[i] !== undefined) return { t: doc.times[i], value: s.mean[i], min: s.min[i], max: s.max[i] };
  }
  return null;
}

// The field (its data-path) an API error message names: the longest path prefix of the message
// that a field of the form has ("resources.gpu_models[1]: ..." finds resources.gpu_models; "tenant
// team-b: not found" finds tenant). null when none does.
export function fieldOf(message, paths) {
  const m = /^([A-Za-z_][\w.[\]-]*)(?=[: ])/.exec(message || '');
  if (!m) return null;
  let p = m[1].replace(/\[\d+\]/g, '');
  while (p) {
    if (paths.has(p)) return p;
    const cut = p.lastIndexOf('.');
    if (cut < 0) break;
    p = p.slice(0, cut);
  }
  return null;
}

// Splits a command line into words as a POSIX shell would for plain words, 'single' and
// "double" quotes and backslash escapes; no expansion. Throws on an unterminated quote.
export function splitCommand(line) {
  const words = [];
  let cur = null;
  let quote = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i];
    if (quote === "'") {
      if (c === "'") quote = null; else cur += c;
    } else if (quote === '"') {
      if (c === '"') quote = null;
      else if (c === '\\' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
      else cur += c;
    } else if (/\s/.test(c)) {
      if (cur !== null) { words.push(cur); cur = null; }
    } else {
      if (cur === null) cur = '';
      if (c === "'" || c === '"') quote = c;
      else if (c === '\\' && i + 1 < line.length) cur += line[++i];
      else cur += c;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote`);
  if (cur !== null) words.push(cur);
  return words;
}

// An image reference as a table shows it, in at most max characters (the CLI's `get jobs -o
// wide` does the same): Docker Hub's prefixes that the normal form adds are dropped
// ("docker.io/library/ubuntu:22.04" is "ubuntu:22.04"), a digest keeps 12 hex digits, and a
// reference still too long loses its leading path components (".../team/pytorch:2.1"), and when
// its last one is too long even so, that one's end too. '' for none.
export function imageShort(ref, max = 40) {
  if (!ref) return '';
  let s = ref.startsWith('docker.io/library/') ? ref.slice(18)
    : ref.startsWith('docker.io/') ? ref.slice(10) : ref;
  const at = s.indexOf('@');
  const colon = at >= 0 ? s.indexOf(':', at) : -1;
  if (colon >= 0) s = s.slice(0, colon + 1 + 12);
  if (s.length <= max || max < 4) return s.slice(0, max);
  for (let p = s.indexOf('/'); p >= 0; p = s.indexOf('/', p + 1)) {
    if (s.length - p + 3 <= max) return `...${s.slice(p)}`;
  }
  const slash = s.lastIndexOf('/');
  const lead = slash >= 0 && max >= 16 ? '.../' : '';
  const last = lead ? s.slice(slash + 1) : s;
  return `${lead}${last.slice(0, max - lead.length - 3)}...`;
}

// A node's container runtime in words: "podman 4.3.1 (runc, cgroups hybrid)"; null for none.
export function runtimeText(rt) {
  if (!rt || typeof rt !== 'object') return null;
  return `${rt.engine} ${rt.version} (${rt.oci_runtime}, cgroups ${rt.cgroups})`;
}

// Bytes as the dashboard shows sizes: "0", "512 KB", "3.4 MB", "1.2 GB" (decimal units, as
// podman and the pull events give image sizes).
export function bytesText(n) {
  if (!n || n < 0) return '0';
  const units = [['TB', 1e12], ['GB', 1e9], ['MB', 1e6], ['KB', 1e3]];
  for (const [u, v] of units) {
    if (n >= v) return `${Math.round((n / v) * 10) / 10} ${u}`;
  }
  return `${n} B`;
}
