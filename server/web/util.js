// Small helpers shared by the views: building DOM nodes without HTML strings, formatting
// numbers, units and times, query strings, and stable colours for function names.

// h('a', {href: '#/x', class: 'c', onclick: fn}, 'text', child...) -> Element.
// Attributes are set with setAttribute (never "style": the page's CSP has no inline styles;
// set el.style.x from code instead); "on*" keys add listeners; null/false values are skipped.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked' || k === 'disabled' || k === 'selected' || k === 'hidden') el[k] = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// Replace every child of el.
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// A query string from [key, value] pairs or an object, values as strings; empty values and
// null are left out. Encoded with encodeURIComponent (the server does not read '+' as a
// space) plus the characters it leaves alone that a shell or a URL may trip on.
export function qs(params) {
  const pairs = params instanceof URLSearchParams || Array.isArray(params)
    ? [...params] : Object.entries(params || {});
  const enc = (s) => encodeURIComponent(s).replace(/[!'()*]/g,
    (c) => '%' + c.charCodeAt(0).toString(16).toUpperCase());
  const out = [];
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === '') continue;
    out.push(enc(k) + '=' + enc(String(v)));
  }
  return out.join('&');
}

// "#/<view>?<params>".
export function hashOf(name, params) {
  const q = qs(params || {});
  return '#/' + name + (q ? '?' + q : '');
}

// An error as an alert box: "400: bad 'metric' ...".
export function errorBox(e) {
  const status = e && e.status ? `${e.status}: ` : '';
  return h('div', { class: 'error', role: 'alert' }, status + (e && e.message ? e.message : String(e)));
}

// A copy of URLSearchParams with some keys set (value null/'' deletes them).
export function withParams(params, changes) {
  const p = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    p.delete(k);
    if (Array.isArray(v)) v.forEach((x) => p.append(k, x));
    else if (v !== null && v !== undefined && v !== '') p.set(k, String(v));
  }
  return p;
}

// Only the given keys of params (repeatable keys kept whole).
export function pick(params, keys) {
  const p = new URLSearchParams();
  for (const [k, v] of params) if (keys.includes(k)) p.append(k, v);
  return p;
}

const UNIT_STEPS = {
  nanoseconds: [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']],
  microseconds: [[1e6, 's'], [1e3, 'ms'], [1, 'µs']],
  milliseconds: [[1e3, 's'], [1, 'ms']],
  seconds: [[1, 's']],
  bytes: [[2 ** 30, 'GiB'], [2 ** 20, 'MiB'], [2 ** 10, 'KiB'], [1, 'B']],
};

// A value in its unit, short: "1.23 s", "4.5 MiB", "12.3k".
export function fmtValue(v, unit) {
  const steps = UNIT_STEPS[unit];
  if (steps) {
    for (const [div, name] of steps) {
      if (Math.abs(v) >= div || div === steps[steps.length - 1][0]) {
        return trim(v / div) + ' ' + name;
      }
    }
  }
  return fmtCount(v);
}

// A value with its unit for people: fmtValue's for the units it scales ("240 s", "4.5 MiB"),
// else the count followed by the unit when there is one other than "count" ("12 objects").
export function fmtWithUnit(v, unit) {
  if (UNIT_STEPS[unit]) return fmtValue(v, unit);
  return fmtCount(v) + (unit && unit !== 'count' ? ' ' + unit : '');
}

export function fmtCount(v) {
  const a = Math.abs(v);
  if (a >= 1e9) return trim(v / 1e9) + 'G';
  if (a >= 1e6) return trim(v / 1e6) + 'M';
  if (a >= 1e4) return trim(v / 1e3) + 'k';
  return Number.isInteger(v) ? String(v) : trim(v);
}

function trim(x) {
  const a = Math.abs(x);
  const s = a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(2);
  return s.includes('.') ? s.replace(/\.?0+$/, '') : s;
}

// A share in percent: "12.34%", "<0.01%" for tiny non-zero shares.
export function fmtPct(share) {
  if (!isFinite(share)) return '–';
  const p = share * 100;
  if (p !== 0 && Math.abs(p) < 0.01) return (p < 0 ? '>-' : '<') + '0.01%';
  return p.toFixed(2) + '%';
}

// Unix nanoseconds (number or RFC 3339 string) -> Date.
export function toDate(t) {
  if (typeof t === 'string') return new Date(t);
  return new Date(t / 1e6);
}

const pad = (n, w = 2) => String(n).padStart(w, '0');

// "2024-05-01 12:34:56" in local time.
export function fmtTime(t) {
  const d = toDate(t);
  if (isNaN(d)) return '–';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

// "5 min ago", "3 h ago", "2 d ago".
export function fmtAgo(t, now = Date.now()) {
  const s = (now - toDate(t).getTime()) / 1000;
  if (!isFinite(s)) return '–';
  if (s < 60) return 'just now';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

// A duration in nanoseconds, short: "240 s", "52.4 h", "2.2 d".
export function fmtDuration(ns) {
  const s = ns / 1e9;
  if (s >= 2 * 86400) return trim(s / 86400) + ' d';
  if (s >= 2 * 3600) return trim(s / 3600) + ' h';
  if (s >= 2 * 60) return trim(s / 60) + ' min';
  return fmtValue(ns, 'nanoseconds');
}

// The value of an <input type="datetime-local"> for a Date, and back to RFC 3339.
export function toLocalInput(d) {
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
export function fromLocalInput(s) {
  const d = new Date(s);
  return isNaN(d) ? '' : d.toISOString();
}

// A stable hash of a string (FNV-1a, 32 bits).
export function hash(s) {
  let x = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    x ^= s.charCodeAt(i);
    x = Math.imul(x, 0x01000193);
  }
  return x >>> 0;
}

// The flamegraph colour of a function: warm hues, the same name always the same colour,
// functions of one package (the text before the last '.', '::' or '/') close together.
export function nameColor(name) {
  const pkg = name.replace(/[.:/][^.:/]*$/, '');
  const hp = hash(pkg), hn = hash(name);
  const hue = 8 + (hp % 44);
  const sat = 62 + (hn % 20);
  const light = 58 + ((hn >>> 8) % 14);
  return `hsl(${hue} ${sat}% ${light}%)`;
}

// A regular expression matching exactly `s` (for the API's focus= parameter, POSIX ERE).
// Special characters go in brackets ("[.]"), which glibc's regcomp reads the same way
// whatever the character; '^' and '\\' cannot, and get their own forms.
export function exactRegex(s) {
  return '^' + s.replace(/[\\^$.|?*+()[\]{}]/g, (c) =>
    c === '^' ? '\\^' : c === '\\' ? '[\\]' : c === ']' ? '[]]' : '[' + c + ']') + '$';
}

// Call fn at most once every `ms` after the last call.
export function debounce(fn, ms) {
  let t = 0;
  return (...a) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...a), ms);
  };
}

// A "function (file:line)" name of by=frame split in two; loc '' when there is none.
export function splitFrame(name) {
  const m = /^(.*) \(([^()]*:\d+)\)$/.exec(name);
  return m ? { fn: m[1], loc: m[2] } : { fn: name, loc: '' };
}

// window.__spaaDebug, for tests and benchmarks: the main flamegraph (its nodes with their
// drawn geometry, its zoom path), how often it was drawn and when (performance.now()), the
// last timeline the profiles view drew.
export function debugHook() {
  if (!window.__spaaDebug) {
    const d = { main: null, draws: 0, drawnAt: 0, timeline: null };
    Object.defineProperty(d, 'nodes', { get: () => (d.main ? d.main.debugNodes() : []) });
    Object.defineProperty(d, 'nodeCount', { get: () => (d.main && d.main.tree ? d.main.tree.n : 0) });
    Object.defineProperty(d, 'zoomPath', {
      get: () => (d.main && d.main.tree ? d.main.tree.path(d.main.zoom) : []),
    });
    window.__spaaDebug = d;
  }
  return window.__spaaDebug;
}
