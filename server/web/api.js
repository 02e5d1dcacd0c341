// The read API as the page uses it: relative URLs (the page works behind a path prefix),
// the read token from sessionStorage sent as a Bearer token, errors as ApiError with the
// server's JSON detail, downloads that carry the token, and copy-as-curl.
import { qs } from './util.js';

const TOKEN_KEY = 'spaa-relay.read-token';

export class ApiError extends Error {
  constructor(status, detail, url, code = '') {
    super(detail || `HTTP ${status}`);
    this.status = status;
    this.url = url;
    this.code = code; // the answer's "error" ("not_found", "bad_request"...), or ''
  }
}

// True when e is the relay's answer to a selection that matches no stored profile: a 404
// not_found whose detail says so ("no stored profile matches the selection (...)" of a
// merged view, "the target selection matches no stored profile (...)" of a diff). Not an
// error to show: an answer, "nothing matched". A missing profile id is another 404
// ("no profile with id ..."), and stays an error.
export function noMatch(e) {
  return !!e && e.status === 404 && e.code === 'not_found' && /(no stored profile|match(es)? none)/.test(e.message);
}

export function token() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) || '';
  } catch {
    return '';
  }
}

export function setToken(t) {
  if (t) sessionStorage.setItem(TOKEN_KEY, t);
  else sessionStorage.removeItem(TOKEN_KEY);
}

function headers(t = token()) {
  return t ? { Authorization: 'Bearer ' + t } : {};
}

// The page's time ranges are on the profiles' own time (what its strip counts) unless the
// selection says time=received: said to the API, whose from/to select on received time
// unless time=profile (each diff side too).
function timeBase(path, params) {
  const p = new URLSearchParams(qs(params || {}));
  if (path === 'timeline' && !p.has('time')) p.set('time', 'profile'); // the strip, always
  for (const pre of ['', 'base.', 'target.'])
    if ((p.has(pre + 'from') || p.has(pre + 'to')) && !p.has(pre + 'time')) p.set(pre + 'time', 'profile');
  return p;
}

// "api/v1/<path>?<params>", relative to the page.
export function apiPath(path, params) {
  const q = qs(timeBase(path, params));
  return 'api/v1/' + path + (q ? '?' + q : '');
}

// The absolute URL of a relative one.
export function absolute(rel) {
  return new URL(rel, document.baseURI).href;
}

// The read API's access: {read_token_required, authorized} for token t (default: stored).
export async function access(t = token()) {
  const r = await fetch(apiPath('access'), { headers: headers(t), cache: 'no-store' });
  if (!r.ok) throw new ApiError(r.status, 'cannot reach the relay', r.url);
  return r.json();
}

const latest = new Map(); // key -> number of the newest ticket

// The error of an answer that came after a newer request of the same kind.
export class StaleError extends Error {
  constructor() {
    super('a newer request replaced this one');
    this.name = 'StaleError';
  }
}

async function request(rel) {
  let r;
  try {
    r = await fetch(rel, { headers: headers() });
  } catch (e) {
    throw new ApiError(0, 'the relay did not answer: ' + e.message, rel);
  }
  if (!r.ok) {
    let detail = '', code = '';
    try {
      const j = await r.json();
      detail = j.detail || j.error || '';
      code = typeof j.error === 'string' ? j.error : '';
    } catch {
      detail = r.statusText;
    }
    throw new ApiError(r.status, detail, rel, code);
  }
  return r;
}

// A ticket for a view's request of one kind (`key`): current() is false once a newer
// ticket of the same key was taken, and the older answer is then dropped (StaleError).
// Nothing is aborted: the relay finishes the work anyway, and a page that cancels its own
// requests could not tell them from failed ones.
export function ticket(key) {
  const n = (latest.get(key) || 0) + 1;
  latest.set(key, n);
  return () => latest.get(key) === n;
}

// GET a JSON answer; `current` (a ticket) drops a stale one.
export async function getJSON(path, params, current) {
  const r = await request(apiPath(path, params));
  const j = await r.json();
  if (current && !current()) throw new StaleError();
  return j;
}

// GET a text answer (collapsed stacks).
export async function getText(path, params, current) {
  const r = await request(apiPath(path, params));
  const t = await r.text();
  if (current && !current()) throw new StaleError();
  return t;
}

// A shell command fetching rel with curl; the token is named, not written out.
export function curlCommand(rel) {
  const auth = token() ? ` -H "Authorization: Bearer $SPAA_READ_TOKEN"` : '';
  return `curl -sS --compressed${auth} '${absolute(rel).replace(/'/g, "'\\''")}'`;
}

// Download rel as `filename`: through fetch with the token (a plain link cannot send it),
// else let the browser follow the link. Returns true when it handled the download.
export async function download(rel, filename) {
  if (!token()) return false;
  const r = await request(rel);
  const url = URL.createObjectURL(await r.blob());
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
  return true;
}
