// Selections of stored profiles as the API's list filters (service, source, event, from, to,
// time, label=k:v...), shared by the profiles, flamegraph and diff views: picking them out of
// a view's parameters, describing them, and the period before a time range.
import { pick, fmtTime } from './util.js';

// time: what from/to select on, "received" (when the relay received a profile) or, absent,
// the profile's own time (api.js says time=profile to the API)
export const FILTERS = ['service', 'source', 'event', 'from', 'to', 'time', 'label'];

export const TIME_BASES = [['', 'profile time'], ['received', 'received time']];

export const PRESETS = [
  ['', 'All time'],
  ['now-15m', 'Last 15 minutes'],
  ['now-1h', 'Last hour'],
  ['now-6h', 'Last 6 hours'],
  ['now-24h', 'Last 24 hours'],
  ['now-7d', 'Last 7 days'],
  ['now-30d', 'Last 30 days'],
];

// The filters of params (with `prefix`, e.g. "base."), named without it.
export function selectionOf(params, prefix = '') {
  const out = new URLSearchParams();
  for (const [k, v] of params) {
    if (!k.startsWith(prefix)) continue;
    const key = k.slice(prefix.length);
    if (FILTERS.includes(key) && v !== '') out.append(key, v);
  }
  return out;
}

// The filters again under a prefix.
export function prefixed(sel, prefix) {
  const out = new URLSearchParams();
  for (const [k, v] of sel) out.append(prefix + k, v);
  return out;
}

// No filter (the time basis alone selects nothing).
export function isEmpty(sel) {
  return [...sel].every(([k]) => k === 'time');
}

// A time parameter for people: "last hour", "2024-05-01 12:00:00".
export function describeTime(v) {
  const p = PRESETS.find(([x]) => x === v);
  if (p) return p[1].toLowerCase();
  const m = /^now-(\d+)([smhd])$/.exec(v);
  if (m) return `now − ${m[1]}${m[2]}`;
  if (/^\d+(\.\d+)?$/.test(v)) return fmtTime(Number(v) * 1e9);
  return fmtTime(v);
}

// "service shop · source pprof · env=prod · from last hour".
export function describe(sel) {
  const parts = [];
  for (const [k, v] of sel) {
    if (k === 'time') continue;
    if (k === 'label') parts.push(v.replace(':', '='));
    else if (k === 'from') parts.push('from ' + describeTime(v));
    else if (k === 'to') parts.push('to ' + describeTime(v));
    else parts.push(`${k} ${v}`);
  }
  if (parts.length && (sel.get('from') || sel.get('to'))) {
    parts.push(sel.get('time') === 'received' ? 'on received time' : 'on profile time');
  }
  return parts.length ? parts.join(' · ') : 'every profile';
}

const UNIT_S = { s: 1, m: 60, h: 3600, d: 86400 };

// Seconds since the epoch of a time parameter (now-<N><u>, unix seconds, RFC 3339), or NaN.
export function timeSeconds(v, nowS = Date.now() / 1000) {
  if (!v) return NaN;
  if (v === 'now') return nowS;
  const m = /^now-(\d+)([smhd])$/.exec(v);
  if (m) return nowS - Number(m[1]) * UNIT_S[m[2]];
  if (/^\d+(\.\d+)?$/.test(v)) return Number(v);
  const t = Date.parse(v);
  return isNaN(t) ? NaN : t / 1000;
}

// The same selection over the period of equal length just before its time range, as
// {base, target} selections, or null when the range has no start. Both sides select on the
// time the relay received each profile, one instant a profile: on their own time a profile
// whose range spans the boundary would be in both periods (the API selects profiles whose
// range overlaps). A relative start stays relative ("now-1h" -> base from now-2h to now-1h).
export function previousPeriod(sel) {
  const from = sel.get('from'), to = sel.get('to');
  if (!from) return null;
  const base = pick(sel, FILTERS.filter((k) => k !== 'from' && k !== 'to' && k !== 'time'));
  const target = new URLSearchParams(sel);
  target.set('time', 'received');
  base.set('time', 'received');
  const m = /^now-(\d+)([smhd])$/.exec(from);
  if (m && (!to || to === 'now')) {
    base.set('from', `now-${2 * Number(m[1])}${m[2]}`);
    base.set('to', from);
    return { base, target };
  }
  const f = timeSeconds(from), t = to ? timeSeconds(to) : Date.now() / 1000;
  if (!isFinite(f) || !isFinite(t) || t <= f) return null;
  base.set('from', new Date((2 * f - t) * 1000).toISOString());
  base.set('to', new Date(f * 1000).toISOString());
  return { base, target };
}
