#!/usr/bin/env node
// A notebook in headless Chromium through the controller's proxy: opens the one-time address
// `gpupool notebook open` printed (the controller turns its code into a cookie for the
// notebook's path and redirects), opens a notebook file there, runs its cells (the kernel talks
// over WebSockets through the proxy) and waits until the output shows the expected text.
// Every request the page makes must stay on the controller's origin and under the notebook's
// path (a notebook reached through gpupool never asks for anything else).
//
// With --token and --job the notebook is opened the way a person does it from the dashboard
// (BASE/ui/): log in with the token, check the New notebook form (a bad port is refused at the
// field), then press Open on the job's page: the notebook opens in a new tab. Without them,
// --url is the one-time address to open.
//
// usage: node notebook_browser.mjs (--url URL | --base URL --token T --job ID) --notebook FILE
//                                  --expect TEXT [--screenshots DIR]
// Exit status: 0 passed, 1 failed (what was expected and what was found), 77 skipped (no
// web/node_modules or no chromium, and CI is not "true").

import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const CHROMIUM = process.env.GPUPOOL_CHROMIUM || '/usr/bin/chromium';

function args() {
  const a = {};
  const argv = process.argv.slice(2);
  for (let i = 0; i + 1 < argv.length; i += 2) a[argv[i].replace(/^--/, '')] = argv[i + 1];
  if (!(a.url || (a.base && a.token && a.job)) || !a.notebook || !a.expect) {
    console.error('usage: notebook_browser.mjs (--url URL | --base URL --token T --job ID) --notebook FILE --expect TEXT [--screenshots DIR]');
    process.exit(2);
  }
  return a;
}

function need(ok, what) {
  if (ok) return;
  if (process.env.CI === 'true') {
    console.error(`FAIL: ${what} (CI must have it)`);
    process.exit(1);
  }
  console.log(`skipped: ${what}`);
  process.exit(77);
}

const a = args();
need(existsSync(join(root, 'web', 'node_modules', 'playwright-core', 'package.json')),
  'web/node_modules is missing (npm ci in web/)');
need(existsSync(CHROMIUM), `${CHROMIUM} is missing (Debian package chromium)`);
const { chromium } = await import(pathToFileURL(join(root, 'web', 'node_modules', 'playwright-core', 'index.mjs')).href);

// Logs in to the dashboard, checks the New notebook form, and presses Open on the job's page:
// the notebook's tab, at its proxy path.
async function fromDashboard(context, page) {
  await page.goto(`${a.base}/ui/#/login`, { waitUntil: 'load' });
  await page.fill('#token', a.token);
  await page.click('form button[type=submit]');
  await page.waitForURL(/#\/overview$/);
  await page.goto(`${a.base}/ui/#/notebook`);
  await page.locator('#f-port').waitFor();
  await page.fill('#f-name', 'nb-bad');
  await page.fill('#f-port', '70000');
  await page.click('form.submit-form button[type=submit]');
  await page.waitForFunction(() => /must be between 1 and 65535/.test(document.querySelector('#f-port-error').textContent),
    null, { timeout: 15000 });
  if (a.screenshots) { // from the top, without the passing notice over the content
    await page.evaluate(() => { window.scrollTo(0, 0); document.getElementById('status').textContent = ''; });
    await page.waitForTimeout(300);
    await page.screenshot({ path: join(a.screenshots, 'notebook-new.png'), fullPage: true });
  }
  await page.goto(`${a.base}/ui/#/jobs/${a.job}`);
  const open = page.locator('button', { hasText: /^Open$/ });
  await open.waitFor({ timeout: 30000 });
  const [tab] = await Promise.all([context.waitForEvent('page'), open.click()]);
  await tab.waitForURL((u) => u.pathname.includes('/proxy/') && !u.search.includes('gp_code'), { timeout: 30000 });
  await tab.waitForLoadState('load');
  return tab;
}

const start = new URL(a.url || a.base);
const strays = [];
let browser;
let status = 0;
try {
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const context = await browser.newContext();
  let page = await context.newPage();
  let prefix = a.url ? start.pathname : null; // /v1/jobs/ID/proxy/
  const watch = (p) => p.on('request', (r) => {
    const u = new URL(r.url());
    if (u.protocol === 'data:' || u.protocol === 'blob:' || u.protocol === 'about:') return;
    const inside = prefix ? u.pathname.startsWith(prefix) : true;
    if (u.origin !== start.origin || !inside) strays.push(r.url());
  });
  if (a.url) {
    watch(page);
    const resp = await page.goto(a.url, { waitUntil: 'load' });
    if (!resp || !resp.ok()) throw new Error(`opening ${a.url}: ${resp ? resp.status() : 'no answer'}`);
  } else {
    page = await fromDashboard(context, page);
    prefix = `/v1/jobs/${a.job}/proxy/`;
    watch(page);
    if (!new URL(page.url()).pathname.startsWith(prefix)) throw new Error(`Open went to ${page.url()}, not ${prefix}`);
  }
  if (page.url().includes('gp_code=')) throw new Error(`the one-time code stayed in the address: ${page.url()}`);
  await page.goto(`${start.origin}${prefix}notebooks/${a.notebook}`, { waitUntil: 'load' });
  // the notebook's kernel is connected over its WebSocket channels: then run every cell
  await page.waitForFunction(() => window.Jupyter && Jupyter.notebook && Jupyter.notebook.kernel &&
    Jupyter.notebook.kernel.is_connected(), null, { timeout: 60000 });
  await page.evaluate(() => Jupyter.notebook.execute_all_cells());
  await page.waitForFunction((want) => [...document.querySelectorAll('.output_area')]
    .some((e) => e.textContent.includes(want)), a.expect, { timeout: 60000 });
  await page.evaluate(() => Jupyter.notebook.save_notebook());
  if (a.screenshots) await page.screenshot({ path: join(a.screenshots, 'notebook.png'), fullPage: false });
  if (strays.length) throw new Error(`requests outside the notebook's path: ${strays.slice(0, 5).join(', ')}`);
  console.log(`ok: ${a.notebook} ran and printed ${a.expect}`);
} catch (e) {
  console.error(`FAIL: ${e.message}`);
  status = 1;
} finally {
  if (browser) await browser.close();
}
process.exit(status);
