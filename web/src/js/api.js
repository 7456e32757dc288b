// The dashboard's only way to gpupoold: the public HTTP API (docs/api.md), with the token the
// user logged in with as a bearer token on every request. The token lives in sessionStorage:
// it is gone when the tab is closed, and other tabs do not share it.
//
// The API is found beside the page: a page served at PREFIX/ui/ talks to PREFIX/v1/..., so a
// reverse proxy that mounts gpupoold under a path prefix works unchanged.

const TOKEN_KEY = 'gpupool.token';

export const apiBase = location.pathname.replace(/\/ui(\/.*)?$/, '').replace(/\/$/, '');

// An API error: status is the HTTP status (0 when gpupoold could not be reached), code the
// API's error code (GP_EINVAL, ...) and message its message, which names the field or object.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let unauthorized = () => {};

// fn is called when the API answers 401: the token expired or was revoked.
export function onUnauthorized(fn) {
  unauthorized = fn;
}

export function getToken() {
  try {
    return sessionStorage.getItem(TOKEN_KEY);
  } catch {
    return null;
  }
}

export function setToken(token) {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

// The raw Response of METHOD path (path starts with /v1/); body is sent as JSON when given.
// Throws ApiError for a non-2xx answer or a network failure.
export async function request(method, path, body, { token = getToken(), signal, headers: extra } = {}) {
  const headers = { Accept: 'application/json', ...extra };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, signal, cache: 'no-store', credentials: 'omit' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let resp;
  try {
    resp = await fetch(apiBase + path, init);
  } catch (e) {
    if (e.name === 'AbortError') throw e;
    throw new ApiError(0, 'network', `cannot reach gpupoold (${e.message})`);
  }
  if (resp.ok) return resp;
  let code = `HTTP ${resp.status}`;
  let message = resp.statusText || code;
  try {
    const doc = await resp.json();
    if (doc && doc.error) {
      code = doc.error.code || code;
      message = doc.error.message || message;
    }
  } catch {
    // not JSON: keep the status line
  }
  if (resp.status === 429) {
    const after = resp.headers.get('Retry-After');
    if (after) message += ` (retry in ${after}s)`;
  }
  const err = new ApiError(resp.status, code, message);
  // Only the session's own token going bad logs the user out (not a token being tried at login).
  if (resp.status === 401 && token && token === getToken()) unauthorized(err);
  throw err;
}

async function json(method, path, body, opts) {
  const resp = await request(method, path, body, opts);
  const text = await resp.text();
  return text ? JSON.parse(text) : null;
}

export const get = (path, opts) => json('GET', path, undefined, opts);
export const post = (path, body, opts) => json('POST', path, body ?? {}, opts);

// Every item of a paged list (GET /v1/jobs): follows the cursor up to max items.
export async function getAll(path, { max = 5000, signal } = {}) {
  const items = [];
  let after = null;
  const sep = path.includes('?') ? '&' : '?';
  for (;;) {
    const page = await get(`${path}${sep}limit=1000${after ? `&after=${encodeURIComponent(after)}` : ''}`,
      { signal });
    items.push(...page.items);
    after = page.next;
    if (!after || items.length >= max) return { items, more: Boolean(after) };
  }
}

// A query string from an object, leaving out empty values.
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

// Saves what GET path answers as a file: the token travels in a header, so a plain link
// cannot fetch it; the answer becomes a Blob behind a temporary download link instead.
export async function download(path, fallbackName) {
  const resp = await request('GET', path);
  const blob = await resp.blob();
  let name = fallbackName;
  const cd = resp.headers.get('Content-Disposition') || '';
  const m = /filename\*?=(?:UTF-8'')?"?([^";]+)"?/i.exec(cd);
  if (m) name = decodeURIComponent(m[1]);
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
  return { name, size: blob.size };
}
