// Submit a job: whole GPUs, a fraction (compute and/or memory, cores), a MIG profile or none;
// gang size, queue, priority class, image, command, volumes. The same form makes a notebook
// (#/notebook: kind notebook, one replica, a port; its image and command may be left to the
// pool's defaults; an idle timeout after which it is suspended). The API validates the spec; its error message
// starts with the field's path ("resources.gpu_milli: must be between 1 and 1000"), and is
// shown at that field (aria-invalid, aria-describedby) and in a summary above the form.

import { ApiError, get, request } from '../api.js';
import { h } from '../dom.js';
import { fieldOf, splitCommand } from '../model.js';

const MIG_PROFILES = ['1g.5gb', '1g.10gb', '1g.20gb', '2g.10gb', '2g.20gb', '3g.20gb', '3g.40gb', '4g.20gb',
  '4g.40gb', '7g.40gb', '7g.80gb'];

// A field: label, control, help and error, tied together for assistive technology.
function field(path, id, label, control, help) {
  const err = h('p', { class: 'field-error', id: `${id}-error`, 'aria-live': 'polite' });
  const helpEl = help ? h('p', { class: 'help', id: `${id}-help` }, help) : null;
  control.setAttribute('aria-describedby', [helpEl ? `${id}-help` : null, `${id}-error`].filter(Boolean).join(' '));
  return h('div', { class: 'field', dataset: { path } }, h('label', { for: id }, label), control, helpEl, err);
}

const input = (id, attrs = {}) => h('input', { id, name: id, autocomplete: 'off', ...attrs });
const numberInput = (id, attrs = {}) => input(id, { type: 'number', inputmode: 'numeric', ...attrs });

const page = {
  title: () => 'Submit a job',
  async render(ctx) {
    const nb = Boolean(ctx.notebook);
    const heading = nb ? 'New notebook' : 'Submit a job';
    const [tenants, queues, classes, nodes] = await Promise.all([
      get('/v1/tenants', { signal: ctx.signal }), get('/v1/queues', { signal: ctx.signal }),
      get('/v1/priorityclasses', { signal: ctx.signal }), get('/v1/nodes', { signal: ctx.signal })]);
    const models = [...new Set((nodes.items || []).flatMap((n) => (n.gpus || []).map((g) => g.model)))].sort();
    const scoped = Boolean(ctx.me.tenant);

    const tenantField = scoped
      ? field('tenant', 'f-tenant', 'Tenant', input('f-tenant', { value: ctx.me.tenant, readonly: true }),
        'Your token submits into its own tenant.')
      : field('tenant', 'f-tenant', 'Tenant', h('select', { id: 'f-tenant', name: 'f-tenant', required: true },
        h('option', { value: '' }, 'Choose a tenant…'),
        tenants.items.map((t) => h('option', { value: t.name, selected: tenants.items.length === 1 }, t.name))));
    const kindRadio = (value, label) => h('div', { class: 'radio' },
      h('input', { type: 'radio', name: 'kind', id: `f-kind-${value}`, value, checked: value === 'fraction' }),
      h('label', { for: `f-kind-${value}` }, label));
    const groups = {
      whole: h('div', { class: 'kind-group', dataset: { kind: 'whole' } },
        field('resources.gpus', 'f-gpus', 'GPUs per replica', numberInput('f-gpus', { value: '1' }), 'Whole GPUs, 1 to 32.')),
      fraction: h('div', { class: 'kind-group', dataset: { kind: 'fraction' } },
        field('resources.gpu_milli', 'f-gpu-milli', 'Compute (milli-GPU)', numberInput('f-gpu-milli', { value: '500' }),
          'Thousandths of one GPU: 500 is half a GPU (1 to 1000).'),
        field('resources.gpu_memory_mib', 'f-gpu-memory', 'GPU memory (MiB)', numberInput('f-gpu-memory'),
          'Optional: the GPU memory the job may use; enforced by libgpushare.'),
        field('resources.cores_percent', 'f-cores', 'Cores (%)', numberInput('f-cores'),
          'Optional: a compute limit in percent of the GPU (1 to 100).')),
      mig: h('div', { class: 'kind-group', dataset: { kind: 'mig' } },
        field('resources.mig_profile', 'f-mig', 'MIG profile', input('f-mig', { list: 'mig-profiles', value: '1g.10gb' }),
          'One MIG instance, e.g. 1g.10gb on an 80 GB A100 or H100.'),
        h('datalist', { id: 'mig-profiles' }, MIG_PROFILES.map((p) => h('option', { value: p })))),
      none: h('div', { class: 'kind-group', dataset: { kind: 'none' } }, h('p', { class: 'help' }, 'CPU and memory only.')),
    };
    const modelBoxes = h('div', { class: 'field', dataset: { path: 'resources.gpu_models' } },
      h('fieldset', { class: 'checks', 'aria-describedby': 'f-models-error' },
        h('legend', null, 'GPU models (any when none is chosen)'),
        models.length ? models.map((m, i) => h('div', { class: 'check' },
          h('input', { type: 'checkbox', id: `f-model-${i}`, name: 'gpu_models', value: m }),
          h('label', { for: `f-model-${i}` }, m))) : h('p', { class: 'help' }, 'No GPU models known yet.')),
      h('p', { class: 'field-error', id: 'f-models-error', 'aria-live': 'polite' }));

    const summary = h('div', { class: 'error-summary', role: 'alert', tabindex: '-1', hidden: true });
    const submitBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, nb ? 'Start the notebook' : 'Submit');
    const form = h('form', { class: 'submit-form', novalidate: true, 'aria-labelledby': 'submit-h1' },
      summary,
      h('fieldset', null, h('legend', null, 'Job'),
        h('div', { class: 'grid2' },
          field('name', 'f-name', 'Name', input('f-name', { required: true, placeholder: 'train-bert', pattern: '[a-z0-9]([a-z0-9-]*[a-z0-9])?' }),
            'Lower-case letters, digits and -, up to 63 characters.'),
          tenantField,
          field('queue', 'f-queue', 'Queue', h('select', { id: 'f-queue', name: 'f-queue' },
            queues.items.map((x) => h('option', { value: x.name, selected: x.name === 'default' }, x.name)))),
          field('priority_class', 'f-priority', 'Priority class', h('select', { id: 'f-priority', name: 'f-priority' },
            classes.items.map((x) => h('option', { value: x.name, selected: x.name === 'normal' }, `${x.name} (${x.value})`)))),
          nb ? null : field('replicas', 'f-replicas', 'Gang size (replicas)', numberInput('f-replicas', { value: '1' }),
            'Identical replicas placed together or not at all.'),
          h('div', { class: 'field check-field', dataset: { path: 'preemptible' } },
            h('div', { class: 'check' }, h('input', { type: 'checkbox', id: 'f-preemptible', name: 'f-preemptible', 'aria-describedby': 'f-preemptible-help f-preemptible-error' }),
              h('label', { for: 'f-preemptible' }, 'Preemptible')),
            h('p', { class: 'help', id: 'f-preemptible-help' }, 'Higher priority work may evict it; only preemptible jobs may borrow idle capacity.'),
            h('p', { class: 'field-error', id: 'f-preemptible-error', 'aria-live': 'polite' })))),
      h('fieldset', { class: 'field', dataset: { path: 'resources' }, 'aria-describedby': 'f-resources-error' },
        h('legend', null, 'GPUs per replica'),
        h('div', { class: 'radios', role: 'radiogroup', 'aria-label': 'Kind of GPU request' },
          kindRadio('whole', 'Whole GPUs'), kindRadio('fraction', 'A fraction'), kindRadio('mig', 'A MIG instance'),
          kindRadio('none', 'No GPU')),
        groups.whole, groups.fraction, groups.mig, groups.none, modelBoxes,
        h('p', { class: 'field-error', id: 'f-resources-error', 'aria-live': 'polite' })),
      h('fieldset', null, h('legend', null, 'CPU and memory per replica'),
        h('div', { class: 'grid2' },
          field('resources.cpu_milli', 'f-cpu', 'CPU (milli-cores)', numberInput('f-cpu'), '8000 is 8 cores; optional.'),
          field('resources.memory_mib', 'f-mem', 'Memory (MiB)', numberInput('f-mem'), 'Optional.'))),
      h('fieldset', null, h('legend', null, 'What it runs'),
        field('image', 'f-image', 'Image', input('f-image', { placeholder: nb ? "the pool's notebook image" : '127.0.0.1:5000/team/pytorch:2.1', class: 'wide' }),
          nb ? "Optional: the pool's notebook image (Jupyter) when empty." : "Optional: without one the job runs over the host's root filesystem, read-only."),
        field('command', 'f-command', 'Command', input('f-command', nb ? { placeholder: "the pool's notebook command", class: 'wide' } : { required: true, placeholder: 'python train.py --epochs 3', class: 'wide' }),
          nb ? 'Optional: it must serve HTTP on the port below, under $GPUPOOL_BASE_URL.' : 'Split into words like a shell does; quotes group words.'),
        h('div', { class: 'grid2' },
          nb ? field('port', 'f-port', 'Port', numberInput('f-port', { value: '8888' }),
            'The port it serves on, inside its own network namespace; reached only through gpupool.') : null,
          field('working_dir', 'f-workdir', 'Working directory', input('f-workdir', { placeholder: nb ? '/data/home' : '/workspace' }),
            nb ? 'Keep notebooks in a volume (/data/NAME) to find them again after a suspension.' : 'Optional: an absolute path.'),
          field('volumes', 'f-volumes', 'Volumes', input('f-volumes', { placeholder: 'home:rw, datasets' }),
            'Registered volumes, seen at /data/NAME: NAME, NAME:ro or NAME:rw, comma-separated.')),
        field('env', 'f-env', 'Environment', h('textarea', { id: 'f-env', name: 'f-env', rows: 3, placeholder: 'HF_HOME=/data/hf' }),
          'One NAME=VALUE per line; optional.'),
        h('div', { class: 'grid2' },
          field('max_runtime', 'f-max-runtime', 'Maximum run time', input('f-max-runtime', { placeholder: '2h' }),
            'Seconds, or a number with s, m, h or d; helps backfill. Optional.'),
          field('idle_timeout', 'f-idle-timeout', 'Idle timeout', input('f-idle-timeout', nb ? { value: '1h' } : { placeholder: '30m' }),
            nb ? 'Suspended (its GPUs freed) after no use and nearly idle GPUs this long; opening it resumes it.'
              : 'Stopped when its GPUs stay nearly idle this long. Optional.'),
          field('restart_policy', 'f-restart', 'Restart policy', h('select', { id: 'f-restart', name: 'f-restart' },
            ['never', 'on-failure', 'always'].map((p) => h('option', { value: p }, p)))))),
      h('div', { class: 'actions' }, submitBtn, h('a', { href: '#/jobs', class: 'btn btn-quiet' }, 'Back to jobs')));

    const kind = () => form.querySelector('input[name="kind"]:checked').value;
    const showKind = () => {
      for (const [k, g] of Object.entries(groups)) {
        g.hidden = k !== kind();
        for (const el of g.querySelectorAll('input, select')) el.disabled = k !== kind();
      }
      modelBoxes.hidden = kind() === 'none';
    };
    for (const r of form.querySelectorAll('input[name="kind"]')) r.addEventListener('change', showKind);
    showKind();

    const paths = new Set([...form.querySelectorAll('[data-path]')].map((el) => el.dataset.path));
    const clearErrors = () => {
      summary.hidden = true;
      summary.replaceChildren();
      for (const el of form.querySelectorAll('.field-error')) el.textContent = '';
      for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
    };
    // Shows message at the field path names (or above the form when none does) and focuses it.
    const showError = (message, path = fieldOf(message, paths)) => {
      const wrap = path ? form.querySelector(`[data-path="${path}"]`) : null;
      const links = [];
      if (wrap) {
        const err = wrap.querySelector('.field-error');
        // At the field, without the path the label already says: "must be between 1 and 1000".
        const colon = message.indexOf(': ');
        err.textContent = colon > 0 && !message.slice(0, colon).includes(' ') ? message.slice(colon + 2) : message;
        const control = wrap.querySelector('input:not([type=radio]):not([disabled]), select, textarea')
          || wrap.querySelector('input');
        if (control) control.setAttribute('aria-invalid', 'true');
        const target = control ? control.id : null;
        links.push(h('li', null, target ? h('a', { href: `#${target}`, onclick: (e) => {
          e.preventDefault();
          document.getElementById(target).focus();
        } }, message) : message));
        summary.replaceChildren(h('h2', null, nb ? 'The notebook was not started' : 'The job was not submitted'), h('ul', null, links));
        summary.hidden = false;
        if (control) control.focus(); else summary.focus();
      } else {
        summary.replaceChildren(h('h2', null, nb ? 'The notebook was not started' : 'The job was not submitted'), h('p', null, message));
        summary.hidden = false;
        summary.focus();
      }
    };

    const value = (id) => {
      const el = form.querySelector(`#${id}`);
      return el && !el.disabled ? el.value.trim() : '';
    };
    // A number field: a number when it reads as one, else the text as typed, so that the API
    // names the field in its answer; undefined when empty.
    const numeric = (id) => {
      const v = value(id);
      if (v === '') return undefined;
      return /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : v;
    };
    const build = () => {
      const spec = { name: value('f-name') };
      if (nb) {
        spec.kind = 'notebook';
        spec.port = numeric('f-port');
      }
      spec.image = value('f-image') || undefined;
      spec.working_dir = value('f-workdir') || undefined;
      const vols = value('f-volumes').split(',').map((v) => v.trim()).filter(Boolean);
      if (vols.length) spec.volumes = vols;
      if (!scoped) spec.tenant = value('f-tenant') || undefined;
      spec.queue = value('f-queue') || undefined;
      spec.priority_class = value('f-priority') || undefined;
      spec.replicas = numeric('f-replicas');
      const res = {};
      if (kind() === 'whole') res.gpus = numeric('f-gpus');
      if (kind() === 'fraction') {
        res.gpu_milli = numeric('f-gpu-milli');
        res.gpu_memory_mib = numeric('f-gpu-memory');
        res.cores_percent = numeric('f-cores');
      }
      if (kind() === 'mig') res.mig_profile = value('f-mig') || undefined;
      const picked = [...form.querySelectorAll('input[name="gpu_models"]:checked')].map((c) => c.value);
      if (picked.length && kind() !== 'none') res.gpu_models = picked;
      res.cpu_milli = numeric('f-cpu');
      res.memory_mib = numeric('f-mem');
      spec.resources = res;
      let command;
      try {
        command = splitCommand(value('f-command'));
      } catch (e) {
        throw Object.assign(new Error(`command: ${e.message}`), { path: 'command' });
      }
      if (command.length) spec.command = command;
      const env = {};
      value('f-env').split('\n').forEach((line, i) => {
        if (!line.trim()) return;
        const eq = line.indexOf('=');
        if (eq <= 0) throw Object.assign(new Error(`env: line ${i + 1}: NAME=VALUE expected`), { path: 'env' });
        env[line.slice(0, eq).trim()] = line.slice(eq + 1);
      });
      if (Object.keys(env).length) spec.env = env;
      spec.max_runtime = value('f-max-runtime') || undefined;
      spec.idle_timeout = value('f-idle-timeout') || undefined;
      if (form.querySelector('#f-preemptible').checked) spec.preemptible = true;
      if (value('f-restart') !== 'never') spec.restart_policy = value('f-restart');
      return JSON.parse(JSON.stringify(spec)); // drops the undefined fields
    };

    let key = crypto.randomUUID();
    form.addEventListener('input', () => { key = crypto.randomUUID(); }); // a changed form is a new job
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clearErrors();
      let spec;
      try {
        spec = build();
      } catch (err) {
        showError(err.message, err.path);
        return;
      }
      submitBtn.disabled = true;
      try {
        // The Idempotency-Key makes a double click or a retry after a lost answer one job.
        const resp = await request('POST', '/v1/jobs', spec, { headers: { 'Idempotency-Key': key } });
        const job = await resp.json();
        ctx.announce(`Job ${job.name} submitted as job ${job.id}`);
        ctx.go(`#/jobs/${job.id}`);
      } catch (err) {
        if (err instanceof ApiError && err.status !== 0 && err.status !== 401) showError(err.message);
        else ctx.fail(err);
      } finally {
        submitBtn.disabled = false;
      }
    });

    ctx.root.append(h('div', { class: 'page-head' }, h('h1', { id: 'submit-h1' }, heading)),
      h('p', { class: 'lead' }, nb
        ? 'A notebook runs in its own network namespace; only your tenant opens it, through gpupool.'
        : 'The controller checks the spec; what it refuses is shown at the field.'), form);
  },
};

export default page;

// #/notebook: the same form, for a notebook.
export const notebookPage = {
  title: () => 'New notebook',
  render: (ctx) => page.render({ ...ctx, notebook: true }),
};
