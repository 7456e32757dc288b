#!/usr/bin/env node
// The dashboard end to end, in headless Chromium (Debian's chromium, driven by playwright-core
// from web/node_modules), against a real pool: `gpupool up` with two mock T4 nodes (real agents,
// supervisors and processes), whose gpupoold serves the built dashboard at /ui/.
//
// - an admin logs in with its token and sees the 8 GPUs on the overview's heatmap;
// - a submit with a bad value (gpu_milli 5000) shows the API's error at the field;
// - a fractional job (gpu_milli 500) submitted through the form runs (its output in the logs),
//   and the heatmap shows it in its GPU's cell with the utilisation the mock NVML reports; its node is cordoned and
//   uncordoned from the Nodes page; the job's page charts its GPU history and says its latest
//   utilisation as the API has it, the tenants page charts team-a's GPUs allocated; the job is
//   cancelled from the Jobs page;
// - each node shows its container runtime and image cache as the API has them (an admin gets
//   the list of images); the Jobs page shows each job's image, shortened ("host root" without
//   one), and a job's page the whole reference, its pull policy and its network;
// - the usage CSV (and XLSX) download through the page has a header and a row;
// - tenant A's user sees its own job, never tenant B's (jobs, overview, nodes, tenants, a direct
//   link), and no operator buttons;
// - no page asks for anything outside the pool's origin, breaks the Content-Security-Policy or
//   throws; no page is wider than the window, on a laptop (1280×720) or a wall (3840×2160).
// Every page is saved as a full-page screenshot in --screenshots (docs/screenshots/NAME.png).
//
// usage: node tests/e2e/ui_e2e.mjs --gpupool BUILD/bin/gpupool --screenshots DIR [--ui-dir DIR]
// Exit status: 0 passed, 1 failed (with what was expected and what was found), 77 skipped (no
// web/node_modules, no built dashboard or no chromium, and the environment CI is not "true").

import { spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env.GPUPOOL_CHROMIUM || '/usr/bin/chromium';

function args() {
  const a = { gpupool: null, screenshots: join(root, 'docs', 'screenshots'), uiDir: null };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    const v = argv[i + 1];
    if (k === '--gpupool') a.gpupool = v;
    else if (k === '--screenshots') a.screenshots = v;
    else if (k === '--ui-dir') a.uiDir = v;
    else {
      console.error(`ui_e2e: unknown argument ${k}`);
      process.exit(2);
    }
    i++;
  }
  if (!a.gpupool) {
    console.error('usage: ui_e2e.mjs --gpupool BUILD/bin/gpupool [--screenshots DIR] [--ui-dir DIR]');
    process.exit(2);
  }
  a.gpupool = resolve(a.gpupool);
  a.screenshots = resolve(a.screenshots);
  a.uiDir = resolve(a.uiDir || join(dirname(a.gpupool), '..', 'share', 'gpupool', 'ui'));
  return a;
}

class Failure extends Error {}

function fail(what, ...details) {
  throw new Failure([what, ...details.map((d) => `   ${typeof d === 'string' ? d : JSON.stringify(d).slice(0, 2000)}`)].join('\n'));
}

function check(cond, what, ...details) {
  if (!cond) fail(what, ...details);
}

// Exits 77 (skipped) when something the test needs is missing, except in CI, where it fails.
function need(ok, what) {
  if (ok) return;
  if (process.env.CI === 'true') {
    console.error(`FAIL: ${what} (CI must have it)`);
    process.exit(1);
  }
  console.log(`skipped: ${what}`);
  process.exit(77);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Polls fn until it returns a truthy value; fails with what after timeout ms.
async function until(what, fn, timeout = 20000) {
  const deadline = Date.now() + timeout;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e.message;
    }
    await sleep(200);
  }
  return fail(`timed out waiting for ${what}`, last === undefined ? '' : `last: ${JSON.stringify(last)}`);
}

function portFree(port) {
  return new Promise((res) => {
    const s = createServer();
    s.once('error', () => res(false));
    s.listen(port, '127.0.0.1', () => s.close(() => res(true)));
  });
}

// A port p with p .. p+n-1 all free (the controller, then one per agent).
async function freePorts(n) {
  for (let tries = 0; tries < 100; tries++) {
    const base = await new Promise((res) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); });
    });
    if (base + n > 65535) continue;
    let ok = true;
    for (let p = base; p < base + n && ok; p++) ok = await portFree(p);
    if (ok) return base;
  }
  return fail(`no run of ${n} free ports`);
}

function client(base, token) {
  const call = async (method, path, body) => {
    const resp = await fetch(base + path, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await resp.text();
    let doc = text;
    try { doc = JSON.parse(text); } catch { /* not JSON */ }
    return { status: resp.status, doc };
  };
  return { get: (p) => call('GET', p), post: (p, b) => call('POST', p, b ?? {}) };
}

async function main() {
  const opt = args();
  need(existsSync(join(root, 'web', 'node_modules', 'playwright-core', 'package.json')),
    'web/node_modules is missing (run `npm ci` in web/)');
  need(existsSync(join(opt.uiDir, 'index.html')), `the dashboard is not built: no ${opt.uiDir}/index.html`);
  need(existsSync(CHROMIUM), `${CHROMIUM} is missing (Debian package chromium)`);
  check(existsSync(opt.gpupool), `${opt.gpupool} does not exist`);
  const { chromium } = await import(pathToFileURL(join(root, 'web', 'node_modules', 'playwright-core', 'index.mjs')).href);

  const tmp = mkdtempSync(join(tmpdir(), 'gpupool-ui.'));
  const pool = join(tmp, 'pool');
  const env = { ...process.env, GPUPOOL_HEARTBEAT_MS: '500', GPUPOOL_UI_DIR: opt.uiDir };
  let browser = null;
  let ok = false;
  try {
    const port = await freePorts(3);
    const up = spawnSync(opt.gpupool, ['up', '--data-dir', pool, '--port', String(port), '--nodes', 'pcie-t4:2'],
      { env, encoding: 'utf8', timeout: 90000 });
    check(up.status === 0 && /is up/.test(up.stdout), 'gpupool up', up.stdout || '', up.stderr || '');
    const base = `http://127.0.0.1:${port}`;
    const adminToken = readFileSync(join(pool, 'admin.token'), 'utf8').trim();
    const admin = client(base, adminToken);

    // ---- tenants, their users, and tenant B's job (which tenant A must never see) ----
    for (const name of ['team-a', 'team-b']) {
      const r = await admin.post('/v1/tenants', { name });
      check(r.status === 201, `create tenant ${name}`, r);
    }
    const tokens = {};
    for (const [name, tenant] of [['alice', 'team-a'], ['bob', 'team-b']]) {
      const r = await admin.post('/v1/tokens', { name, role: 'user', tenant });
      check(r.status === 201, `create user token ${name}`, r);
      tokens[name] = r.doc.token;
    }
    const bob = client(base, tokens.bob);
    const secret = await bob.post('/v1/jobs', { name: 'bobs-secret-run', resources: { gpu_milli: 250 }, command: ['sleep', '600'] });
    check(secret.status === 201, "submit tenant B's job", secret);
    await until("tenant B's job running", async () => (await bob.get(`/v1/jobs/${secret.doc.id}`)).doc.state === 'Running', 30000);

    // A job from an image that waits (no node has an H100): its image on the Jobs page and its own.
    const LONG_IMAGE = 'registry.example.com:5000/ml-platform/team-a/pytorch:2.1.0-cuda12.1-cudnn8-runtime';
    const imageJob = await admin.post('/v1/jobs', { name: 'image-waits', tenant: 'team-a', image: LONG_IMAGE,
      resources: { gpus: 1, gpu_models: ['H100'] }, allow_unschedulable: true, command: ['python3', 'train.py'] });
    check(imageJob.status === 201 && imageJob.doc.spec.image === LONG_IMAGE, 'submit a job from an image', imageJob);

    const ui = await fetch(`${base}/ui/`);
    check(ui.status === 200 && /<script type="module"/.test(await ui.text()), 'gpupoold serves the dashboard at /ui/', ui.status);

    // ---- the browser ----
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 }, acceptDownloads: true });
    const problems = [];
    const page = await context.newPage();
    page.setDefaultTimeout(30000);
    // Failed API calls are checked one by one below (the console only says "Failed to load").
    page.on('console', (m) => {
      if (m.type() === 'error' && !/^Failed to load resource/.test(m.text())) problems.push(`console error: ${m.text()}`);
    });
    const refused = []; // "STATUS METHOD PATH" of every answer >= 400
    page.on('response', (r) => {
      if (r.status() >= 400) refused.push(`${r.status()} ${r.request().method()} ${new URL(r.url()).pathname}`);
    });
    // Only the refusals the test provokes: a bad token at login, a bad submit, tenant B's job, the
    // logs of the job that waits (it has not run).
    const expectedRefusal = (x) => x === '401 GET /v1/whoami' || x === '400 POST /v1/jobs'
      || /^404 GET \/v1\/jobs\/\d+(\/events)?$/.test(x) || x === `409 GET /v1/jobs/${imageJob.doc.id}/logs`;
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(`${base}/`) && !u.startsWith('blob:') && !u.startsWith('data:')) problems.push(`external request: ${u}`);
    });
    const noProblems = (where) => {
      check(problems.length === 0, `the page had problems (${where})`, ...problems);
      const odd = refused.filter((x) => !expectedRefusal(x));
      check(odd.length === 0, `the API refused the page's requests (${where})`, ...odd);
    };
    mkdirSync(opt.screenshots, { recursive: true });
    const shot = async (name) => {
      // From the top, without the passing notice ("Job … submitted") over the content.
      await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('status').textContent = ''; });
      await page.waitForTimeout(300); // let the last refresh paint
      await page.screenshot({ path: join(opt.screenshots, `${name}.png`), fullPage: true });
    };
    const visit = async (hash, ready) => {
      await page.goto(`${base}/ui/#/${hash}`);
      await page.locator(ready).first().waitFor();
    };
    // No page is wider than the window (the layout reflows instead of scrolling sideways).
    const fits = async (where) => {
      const w = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
      check(w[0] <= w[1], `${where}: the page is ${w[0]} px wide in a ${w[1]} px window`);
    };
    const text = () => page.locator('main').innerText();

    // ---- log in as the admin ----
    await page.goto(`${base}/ui/`);
    await page.locator('#token').waitFor();
    check(page.url().endsWith('#/login'), 'an anonymous visitor is sent to the login page', page.url());
    await page.fill('#token', 'gpa_not-a-token');
    await page.click('form button[type=submit]');
    await until('the login page to refuse a bad token', async () => /not valid/.test(await page.locator('#token-error').innerText()));
    await shot('login');
    await page.fill('#token', adminToken);
    await page.click('form button[type=submit]');
    await page.locator('.hm-cell').first().waitFor();
    check((await page.locator('#who').innerText()).includes('admin'), 'the top bar names the admin token');
    const cells = await page.locator('.hm-cell').count();
    check(cells === 8, 'the heatmap shows the 8 GPUs of the two T4 nodes', `found ${cells}`);
    check((await page.locator('.stats').innerText()).includes('8'), 'the overview counts 8 GPUs');
    // Keyboard: the heatmap is one tab stop; arrow keys move between GPUs.
    await page.locator('.hm-cell[tabindex="0"]').focus();
    const before = await page.evaluate(() => document.activeElement.dataset.focusKey);
    await page.keyboard.press('ArrowRight');
    const after = await page.evaluate(() => document.activeElement.dataset.focusKey);
    check(before && after && before !== after && after.endsWith('/1'), 'ArrowRight moves to the next GPU', before, after);
    check((await page.locator('.hm-detail').innerText()).includes(after.replace('/', ' GPU ')),
      'the focused GPU is described under the heatmap', await page.locator('.hm-detail').innerText());

    // ---- submit: the API's validation error at the field, then a fractional job ----
    await visit('submit', '#f-name');
    await page.fill('#f-name', 'ui-frac');
    await page.selectOption('#f-tenant', 'team-a');
    await page.check('#f-kind-fraction');
    await page.fill('#f-gpu-milli', '5000');
    await page.fill('#f-command', `sh -c 'echo "epoch 1: loss 2.31"; exec sleep 600'`);
    await page.click('form.submit-form button[type=submit]');
    const fieldError = page.locator('#f-gpu-milli-error');
    await until('the error at the gpu_milli field', async () => /must be between 1 and 1000/.test(await fieldError.innerText()));
    check(await page.getAttribute('#f-gpu-milli', 'aria-invalid') === 'true', 'the field is marked invalid');
    check((await page.getAttribute('#f-gpu-milli', 'aria-describedby')).includes('f-gpu-milli-error'),
      'the field is described by its error');
    check(await page.evaluate(() => document.activeElement.id) === 'f-gpu-milli', 'the focus moves to the field in error');
    check((await page.locator('.error-summary').innerText()).includes('resources.gpu_milli'), 'the summary names the field');
    await shot('submit');
    await page.fill('#f-gpu-milli', '500');
    await page.click('form.submit-form button[type=submit]');
    await until('the new job\'s page', async () => /#\/jobs\/\d+$/.test(page.url()));
    const jobId = Number(page.url().split('/').pop());
    const job = await admin.get(`/v1/jobs/${jobId}`);
    check(job.status === 200 && job.doc.name === 'ui-frac' && job.doc.tenant === 'team-a'
      && job.doc.spec.resources.gpu_milli === 500 && job.doc.spec.command.length === 3
      && job.doc.spec.command[2] === 'echo "epoch 1: loss 2.31"; exec sleep 600', 'the form submitted the job as filled in', job.doc);
    await until('the job page to show it Running', async () => (await page.locator('.badge', { hasText: 'Running' }).count()) > 0, 30000);
    check((await text()).includes('0.5 GPU'), 'the job page shows its share');
    check((await text()).includes("none: the host's root filesystem, read-only") && /Network\s+host/.test(await text()),
      'a job without an image runs over the host root, on the host network', await page.locator('.j-facts').innerText());
    await until("the job's output in its logs (through gpupoold from its node's agent)",
      async () => (await page.locator('pre.logs').innerText()).includes('epoch 1: loss 2.31'), 30000);
    await shot('job-detail');

    // ---- the heatmap shows it in its GPU's cell, coloured by the utilisation the GPU reports ----
    const where = (await admin.get(`/v1/jobs/${jobId}`)).doc.placement[0];
    const gpu = where.gpus[0].index;
    // The mock NVML reads its control file at every sample: the job's GPU becomes busy.
    appendFileSync(join(pool, 'agents', where.node, 'nvml-control'), `util ${gpu} 70\n`);
    await visit('overview', '.hm-cell');
    const cell = page.locator(`.hm-cell[data-node="${where.node}"][data-gpu="${gpu}"]`);
    await until('ui-frac in its GPU\'s heatmap cell', async () => (await cell.locator('.hm-seg', { hasText: 'ui-frac' }).count()) === 1);
    await until('the cell to show the GPU at 70% utilisation', async () => (await cell.locator('.hm-util').innerText()) === '70%', 30000);
    const label = await cell.getAttribute('aria-label');
    check(label.includes('ui-frac') && label.includes('team-a') && label.includes('0.5 GPU') && label.includes('utilisation 70%'),
      'the cell describes its holder and utilisation', label);
    const colours = await page.evaluate(([busy, idle]) => [busy, idle].map((sel) => getComputedStyle(document.querySelector(sel)).backgroundColor),
      [`.hm-cell[data-node="${where.node}"][data-gpu="${gpu}"]`, `.hm-cell[data-node="${where.node}"][data-gpu="${(gpu + 1) % 4}"]`]);
    check(colours[0] !== colours[1], 'a busy GPU is coloured apart from an idle one', colours);
    await fits('overview at 1280×720');
    await shot('overview');

    // ---- the job page charts its GPU history, as GET /v1/jobs/{id}/metrics has it ----
    await visit(`jobs/${jobId}`, '.history-chart');
    // (the page loads its history again every 10 s; a fraction's utilisation is its processes')
    await until("the job page's history to say the job's latest utilisation", async () => {
      const cap = await page.locator('#hist-gpu_util').innerText();
      const m = (await admin.get(`/v1/jobs/${jobId}/metrics?from=-1h`)).doc;
      const s = m.series.find((x) => x.metric === 'gpu_util' && x.replica === undefined);
      const last = s.mean.filter((v) => v !== null).pop();
      if (last !== undefined && cap.includes(`Latest: ${Math.round(last)}% for the job`)) return cap;
      throw new Error(`the caption says "${cap}"; the API's latest: ${last}`);
    }, 40000);
    check(await page.locator('.history-chart canvas').count() >= 1, 'the utilisation is drawn as a chart');
    await fits('job page with its history at 1280×720');
    await shot('job-history');

    // ---- nodes, tenants ----
    await visit('nodes', '.node');
    check(await page.locator('button', { hasText: 'Drain' }).count() === 2, 'an admin has a Drain button per node');
    check((await text()).includes('ui-frac'), 'the nodes page lists the job among the holders');
    // The container runtime and the image cache of each node, as the API has them.
    for (const n of (await admin.get('/v1/nodes')).doc.items) {
      const box = page.locator(`section#node-${n.name}`);
      const rt = n.runtime;
      const want = rt ? `${rt.engine} ${rt.version} (${rt.oci_runtime}, cgroups ${rt.cgroups})` : 'none: runs no job from an image';
      check((await box.locator('dd.runtime').innerText()).trim() === want, `${n.name}: its container runtime`, want,
        await box.locator('dd.runtime').innerText());
      const cache = (await box.locator('.images').first().innerText()).split('\n')[0];
      check(cache.startsWith(`${n.images.count} image${n.images.count === 1 ? '' : 's'}, `), `${n.name}: its image cache`, n.images, cache);
      check(await box.locator('details.images').count() === (n.images.items.length ? 1 : 0),
        `${n.name}: an admin can open the list of its images`, n.images.items.length);
    }
    await fits('nodes');
    await shot('nodes');
    // Cordon (confirmed in a dialog), then uncordon, one node.
    const nodeBox = page.locator(`section#node-${where.node}`);
    await nodeBox.getByRole('button', { name: 'Cordon', exact: true }).click();
    await page.locator('#confirm[open]').waitFor();
    await page.click('#confirm-yes');
    await until(`${where.node} cordoned`, async () => (await admin.get(`/v1/nodes/${where.node}`)).doc.cordoned === true);
    await until('the cordoned badge', async () => (await nodeBox.locator('.badge', { hasText: 'cordoned' }).count()) === 1);
    await nodeBox.getByRole('button', { name: 'Uncordon', exact: true }).click();
    await until(`${where.node} uncordoned`, async () => (await admin.get(`/v1/nodes/${where.node}`)).doc.cordoned === false);
    await until('the cordoned badge gone', async () => (await nodeBox.locator('.badge', { hasText: 'cordoned' }).count()) === 0);
    await visit('tenants', 'table');
    check((await text()).includes('team-b'), 'an admin sees every tenant');
    // each tenant's allocation over time, as GET /v1/tenants/{name}/metrics has it (sampled
    // every 10 s: team-a's job holds half a GPU)
    await page.locator('#alloc-tenant').waitFor();
    await until("the tenants page to chart team-a's allocation", async () => {
      await page.selectOption('#alloc-tenant', 'team-a');
      const cap = await page.locator('#alloc-cap').innerText();
      if (cap.startsWith('GPUs allocated to team-a') && cap.includes('Latest: 0.5 GPUs')) return cap;
      throw new Error(`the caption says "${cap}"`);
    }, 30000);
    check(await page.locator('.history-chart canvas').count() === 1, "the tenant's allocation is drawn as a chart");
    await fits('tenants');
    await shot('tenants');

    // ---- cancel it from the Jobs page ----
    await visit('jobs', 'table');
    const row = page.locator(`tr[data-job="${jobId}"]`);
    await row.waitFor();
    check((await text()).includes('bobs-secret-run'), "an admin sees tenant B's job");
    const imageCell = page.locator(`tr[data-job="${imageJob.doc.id}"] code.image`);
    check(await imageCell.innerText() === '.../pytorch:2.1.0-cuda12.1-cudnn8-run...'
      && await imageCell.getAttribute('title') === LONG_IMAGE, "the Jobs page shows the job's image, shortened",
    await imageCell.innerText());
    check((await row.innerText()).includes('host root'), 'and "host root" for a job without one', await row.innerText());
    await fits('jobs');
    await shot('jobs');
    await row.locator('button', { hasText: 'Cancel' }).click();
    await page.locator('#confirm[open]').waitFor();
    await page.click('#confirm-yes');
    await until('the job to be Cancelled', async () => (await admin.get(`/v1/jobs/${jobId}`)).doc.state === 'Cancelled');
    await until('the cancelled job to leave the list of active jobs', async () => (await row.count()) === 0);

    // ---- the image job's page: the whole reference, its pull policy, the network ----
    await visit(`jobs/${imageJob.doc.id}`, '.j-facts dl');
    const facts = await page.locator('.j-facts').innerText();
    check(facts.includes(`${LONG_IMAGE} (pull IfNotPresent)`) && /Network\s+host/.test(facts),
      "the job's page shows its image, pull policy and network", facts);
    await fits('a job from an image');

    // ---- usage: the chart, and the CSV and XLSX downloads ----
    await visit('usage', 'table');
    await page.locator('.chart canvas, .chart .empty').first().waitFor();
    check((await text()).includes('team-a'), 'the usage report has a row for team-a');
    await fits('usage');
    await shot('usage');
    const [csv] = await Promise.all([page.waitForEvent('download'), page.click('#download-csv')]);
    const csvText = readFileSync(await csv.path(), 'utf8');
    const lines = csvText.trim().split(/\r?\n/);
    check(lines.length >= 2 && /gpu_hours/.test(lines[0]) && lines.slice(1).some((l) => l.startsWith('team-a')),
      'the CSV download has a header and a row for team-a', csv.suggestedFilename(), csvText.slice(0, 500));
    check(csv.suggestedFilename().endsWith('.csv'), 'the CSV file is named .csv', csv.suggestedFilename());
    const [xlsx] = await Promise.all([page.waitForEvent('download'), page.click('#download-xlsx')]);
    const xlsxBytes = readFileSync(await xlsx.path());
    check(xlsxBytes.length > 100 && xlsxBytes.subarray(0, 2).toString() === 'PK', 'the XLSX download is a workbook (a zip)',
      xlsx.suggestedFilename(), xlsxBytes.length);

    // ---- a wall monitor: the same pages at 3840×2160 fit, and the type is larger ----
    const small = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
    await page.setViewportSize({ width: 3840, height: 2160 });
    for (const [hash, ready] of [['overview', '.hm-cell'], ['jobs', 'table'], ['usage', 'table'], ['nodes', '.node']]) {
      await visit(hash, ready);
      await fits(`${hash} at 3840×2160`);
    }
    const large = await page.evaluate(() => parseFloat(getComputedStyle(document.documentElement).fontSize));
    check(large > small * 1.4, 'the type scale grows on a wall monitor', `${small}px at 1280, ${large}px at 3840`);
    await page.setViewportSize({ width: 1280, height: 720 });
    noProblems('as admin');

    // ---- tenant A's user: its own jobs only, no operator actions ----
    await page.click('#logout');
    await page.locator('#token').waitFor();
    await page.fill('#token', tokens.alice);
    await page.click('form button[type=submit]');
    await page.locator('.hm-cell').first().waitFor();
    check((await page.locator('#who').innerText()).includes('team-a'), 'the top bar names the tenant');
    check(!(await text()).includes('bobs-secret-run'), "a user's overview does not name tenant B's job");
    const other = await page.locator('.hm-seg.other').count();
    check(other >= 1, "tenant B's share is drawn without its name", `${other} anonymous segments`);
    await visit('jobs?state=', 'table');
    await page.locator(`tr[data-job="${jobId}"]`).waitFor();
    check(!(await text()).includes('bobs-secret-run') && await page.locator(`tr[data-job="${secret.doc.id}"]`).count() === 0,
      "tenant A's user does not see tenant B's job in the list", await text());
    check(await page.locator('#f-tenant').count() === 0, 'a user has no tenant filter');
    await visit('nodes', '.node');
    check(!(await text()).includes('bobs-secret-run'), "the nodes page does not name tenant B's job");
    check(await page.locator('button', { hasText: /^(Cordon|Drain|Uncordon)$/ }).count() === 0,
      'a user has no cordon, drain or uncordon buttons');
    await visit('tenants', 'table');
    check(!(await text()).includes('team-b'), 'a user sees only its own tenant');
    await page.goto(`${base}/ui/#/jobs/${secret.doc.id}`);
    await until("a direct link to tenant B's job to find nothing", async () => /No such job/.test(await text()));
    check(!(await text()).includes('bobs-secret-run'), "the job page does not name tenant B's job");
    noProblems('as a user');
    ok = true;
    console.log('ui_e2e: passed (screenshots in %s)', opt.screenshots);
  } finally {
    if (browser) await browser.close().catch(() => {});
    const down = spawnSync(opt.gpupool, ['down', '--data-dir', pool], { encoding: 'utf8', timeout: 120000 });
    if (!ok) {
      for (const log of ['gpupoold.log']) {
        try {
          const t = readFileSync(join(pool, 'logs', log), 'utf8');
          console.error(`---- ${log} (last lines) ----\n${t.split('\n').slice(-30).join('\n')}`);
        } catch { /* no log */ }
      }
    }
    if (down.status !== 0) console.error('gpupool down:', down.stdout, down.stderr);
    rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(() => process.exit(0), (e) => {
  console.error(e instanceof Failure ? `FAIL: ${e.message}` : `FAIL: ${e.stack || e}`);
  process.exit(1);
});
