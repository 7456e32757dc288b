// The dashboard's shell: login, the hash router (#/overview, #/nodes, #/jobs, #/jobs/ID,
// #/submit, #/notebook, #/tenants, #/usage, #/login), the navigation, the status and error regions.
//
// A page is a module whose render(ctx) fills ctx.root. ctx carries the route's parameters and
// query, the logged-in identity (GET /v1/whoami: role, token name, tenant), an AbortSignal that
// fires when the user leaves the page, every(fn, ms) for periodic refreshes (paused while the
// tab is hidden, stopped on leaving) and confirm(), announce() and fail() for the user.

import { ApiError, get, getToken, setToken, clearToken, onUnauthorized } from './api.js';
import { h } from './dom.js';
import overview from './pages/overview.js';
import nodes from './pages/nodes.js';
import jobs from './pages/jobs.js';
import job from './pages/job.js';
import submit, { notebookPage } from './pages/submit.js';
import tenants from './pages/tenants.js';
import usage from './pages/usage.js';
import login from './pages/login.js';

const routes = [
  { re: /^\/overview$/, page: overview, nav: 'overview' },
  { re: /^\/nodes$/, page: nodes, nav: 'nodes' },
  { re: /^\/jobs$/, page: jobs, nav: 'jobs' },
  { re: /^\/jobs\/([^/]+)$/, page: job, nav: 'jobs', keys: ['job'] },
  { re: /^\/submit$/, page: submit, nav: 'submit' },
  { re: /^\/notebook$/, page: notebookPage, nav: 'notebook' },
  { re: /^\/tenants$/, page: tenants, nav: 'tenants' },
  { re: /^\/usage$/, page: usage, nav: 'usage' },
  { re: /^\/login$/, page: login, nav: null, open: true },
];

const main = document.getElementById('main');
const statusEl = document.getElementById('status');
const alertEl = document.getElementById('alert');
let me = null; // GET /v1/whoami of the token in use
let current = null; // {controller, timers}

export const isOperator = (who) => Boolean(who) && (who.role === 'admin' || who.role === 'operator');

let statusTimer = 0;
export function announce(text) {
  statusEl.textContent = '';
  clearTimeout(statusTimer);
  // A fresh text node so that screen readers announce a repeated message too; it goes away by
  // itself (the same words stay wherever the page shows the change).
  requestAnimationFrame(() => { statusEl.textContent = text; });
  statusTimer = setTimeout(() => { statusEl.textContent = ''; }, 5000);
}

export function fail(err) {
  const msg = err instanceof ApiError ? `${err.message}${err.status ? ` (${err.code})` : ''}` : String(err && err.message ? err.message : err);
  alertEl.replaceChildren(h('span', null, msg),
    h('button', { type: 'button', class: 'btn btn-quiet', 'aria-label': 'Dismiss the error',
      onclick: () => { alertEl.hidden = true; } }, '×'));
  alertEl.hidden = false;
}

function clearFail() {
  alertEl.hidden = true;
  alertEl.replaceChildren();
}

// A modal question; resolves true when confirmed.
export function confirmDialog(title, text, action = 'Confirm') {
  const dlg = document.getElementById('confirm');
  dlg.querySelector('#confirm-title').textContent = title;
  dlg.querySelector('#confirm-text').textContent = text;
  dlg.querySelector('#confirm-yes').textContent = action;
  dlg.returnValue = '';
  return new Promise((resolve) => {
    dlg.addEventListener('close', () => resolve(dlg.returnValue === 'ok'), { once: true });
    dlg.showModal();
    dlg.querySelector('#confirm-no').focus();
  });
}

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/overview';
  const at = raw.indexOf('?');
  const path = decodeURIComponent(at < 0 ? raw : raw.slice(0, at));
  return { path: path || '/overview', query: new URLSearchParams(at < 0 ? '' : raw.slice(at + 1)) };
}

// Navigates to a route (#/jobs?state=Running); replace: without a history entry.
export function go(hash, { replace = false } = {}) {
  if (replace) history.replaceState(null, '', hash);
  else history.pushState(null, '', hash);
  route();
}

function leave() {
  if (!current) return;
  current.controller.abort();
  for (const t of current.timers) clearInterval(t);
  document.removeEventListener('visibilitychange', current.onVisible);
  current = null;
}

function shell(show) {
  document.getElementById('topbar').hidden = !show;
  if (show && me) {
    const who = me.tenant ? `${me.token} · ${me.tenant} (${me.role})` : `${me.token} (${me.role})`;
    document.getElementById('who').textContent = who;
    document.body.dataset.role = me.role;
  }
}

async function whoami() {
  if (me || !getToken()) return me;
  try {
    me = await get('/v1/whoami');
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      clearToken();
      return null;
    }
    throw e;
  }
  return me;
}

let seq = 0;

export async function route() {
  if (location.hash && !location.hash.startsWith('#/')) return; // an in-page anchor, not a route
  const mine = ++seq;
  leave();
  clearFail();
  const { path, query } = parseHash();
  let match = null;
  let params = {};
  for (const r of routes) {
    const m = r.re.exec(path);
    if (m) {
      match = r;
      params = Object.fromEntries((r.keys || []).map((k, i) => [k, m[i + 1]]));
      break;
    }
  }
  if (!match) {
    go('#/overview', { replace: true });
    return;
  }
  let who = null;
  try {
    who = await whoami();
  } catch (e) {
    if (mine !== seq) return;
    shell(false);
    main.replaceChildren(h('h1', { tabindex: '-1' }, 'gpupool'), h('p', null, 'Cannot reach gpupoold: ', e.message));
    fail(e);
    return;
  }
  if (mine !== seq) return; // another navigation started meanwhile
  if (!who && !match.open) {
    sessionStorage.setItem('gpupool.next', location.hash || '#/overview');
    go('#/login', { replace: true });
    return;
  }
  shell(Boolean(who) && !match.open);
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.route === match.nav) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  const controller = new AbortController();
  const timers = [];
  const refreshers = [];
  const ctx = {
    root: main, params, query, me: who, signal: controller.signal,
    operator: isOperator(who),
    // fn runs every ms while the tab is visible, never twice at once; an error it reports is
    // taken back when a later run succeeds (gpupoold was restarted, the network came back).
    every(fn, ms) {
      let busy = false;
      let failed = false;
      const run = async () => {
        if (busy || document.hidden || controller.signal.aborted) return;
        busy = true;
        try {
          await fn();
          if (failed) clearFail();
          failed = false;
        } catch (e) {
          if (e && e.name === 'AbortError') return;
          failed = true;
          report(e);
        } finally {
          busy = false;
        }
      };
      refreshers.push(run);
      timers.push(setInterval(run, ms));
    },
    announce, fail, confirm: confirmDialog, go,
    login: async (token) => {
      const doc = await get('/v1/whoami', { token });
      if (doc.role === 'join' || doc.role === 'agent') {
        throw new Error(`a ${doc.role} token is for nodes, not for people: use an admin, operator or user token`);
      }
      setToken(token);
      me = doc;
      return doc;
    },
  };
  const onVisible = () => {
    if (!document.hidden) for (const run of refreshers) run();
  };
  document.addEventListener('visibilitychange', onVisible);
  current = { controller, timers, onVisible };
  main.replaceChildren();
  document.title = `${match.page.title(params)} · gpupool`;
  main.dataset.page = match.nav || 'login';
  try {
    await match.page.render(ctx);
  } catch (e) {
    report(e);
  }
  const h1 = main.querySelector('h1');
  if (h1 && !controller.signal.aborted) {
    h1.tabIndex = -1;
    if (document.activeElement === document.body || !main.contains(document.activeElement)) {
      h1.focus({ preventScroll: true });
    }
  }
}

function report(e) {
  if (e && e.name === 'AbortError') return;
  fail(e);
}

export function logout(message) {
  clearToken();
  me = null;
  delete document.body.dataset.role;
  sessionStorage.removeItem('gpupool.next');
  go('#/login', { replace: true });
  if (message) fail(message);
}

onUnauthorized(() => logout('Your token is no longer valid (expired or revoked): log in again.'));
document.getElementById('logout').addEventListener('click', () => logout());
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault(); // the hash is the route: move the focus without touching it
  main.focus();
});
// Links and the history buttons change the hash; go() routes itself (pushState fires nothing).
window.addEventListener('hashchange', route);
route();
