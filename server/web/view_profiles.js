// Profiles of a selection (#/profiles?service=&source=&event=&metric=&from=&to=&time=
// &label=k:v&cursor=): the filters (times on the profiles' own time, or with time=received on
// when the relay received them), a strip of the selection's profile count over time (click a
// bar to narrow the range to it; a range without an end ends now), the list newest first with
// paging and totals in their units, and the ways on: one profile's flamegraph, the merged
// flamegraph, a diff of two picked profiles or of the selection against its previous period.
import * as api from './api.js';
import {
  h, fill, fmtTime, fmtAgo, fmtDuration, fmtCount, fmtWithUnit, hashOf, withParams, toLocalInput,
  fromLocalInput, toDate, debugHook,
} from './util.js';
import { PRESETS, TIME_BASES, selectionOf, describe, previousPeriod, prefixed } from './selection.js';

const PAGE = 50;
const BUCKETS = 60;
const SOURCES = ['sentry', 'otlp', 'pprof', 'folded', 'spaa'];

export class ProfilesView {
  constructor(app) {
    this.app = app;
    this.services = null;
    this.labelKeys = null;
    this.picked = new Set();
    // units of the totals, by service, source, event and metric: the list does not give
    // them, a profile's top answer does (null: none, or none could be read)
    this.units = new Map();
    this.totalCells = []; // [td, profile] of the list's totals, written again as units come
  }

  mount(main) {
    this.title = h('h1', { text: 'Profiles' });
    this.form = h('form', { class: 'filters', 'aria-label': 'Selection' });
    this.form.addEventListener('submit', (e) => e.preventDefault());
    this.strip = new Strip((from, to) => this.go({ from, to, cursor: null }));
    this.actions = h('div', { class: 'actions' });
    this.status = h('p', { class: 'status', 'aria-live': 'polite' });
    this.list = h('div', { class: 'table-wrap' });
    this.pager = h('div', { class: 'pager' });
    main.append(h('div', { class: 'view-head' }, this.title), this.form, this.strip.el,
      this.actions, this.status, this.list, this.pager);
  }

  unmount() {
    this.strip.hideTip();
  }

  go(changes) {
    this.app.go('profiles', withParams(this.params, changes));
  }

  async update(params) {
    this.params = params;
    this.picked.clear();
    const sel = selectionOf(params);
    this.title.textContent = 'Profiles — ' + describe(sel);
    try {
      if (!this.services) {
        const [s, l] = await Promise.all([
          api.getJSON('services', {}, api.ticket('p-services')),
          api.getJSON('labels', {}, api.ticket('p-labels')),
        ]);
        this.services = s.services;
        this.labelKeys = l.labels.map((x) => x.name);
      }
    } catch (e) {
      if (e.name === 'StaleError') return;
      this.clear();
      this.app.fail(e, this.list);
      return;
    }
    this.renderForm();
    this.renderActions();
    this.load(sel);
  }

  async load(sel) {
    this.status.textContent = 'Loading…';
    this.list.setAttribute('aria-busy', 'true');
    delete this.list.dataset.units;
    // a range without an end ends now (the API's timeline would end at the newest profile:
    // the last hour's strip would not reach the present)
    const upToNow = sel.get('from') && !sel.get('to') ? withParams(sel, { to: 'now' }) : sel;
    const listParams = withParams(upToNow, { limit: PAGE, cursor: this.params.get('cursor') });
    try {
      const [page, tl] = await Promise.all([
        api.getJSON('profiles', listParams, api.ticket('p-list')),
        api.getJSON('timeline', withParams(upToNow, { buckets: BUCKETS }), api.ticket('p-timeline')),
      ]);
      this.page = page;
      this.strip.set(tl);
      this.renderList(page, tl);
      this.loadUnits(page);
    } catch (e) {
      if (e.name === 'StaleError') return; // a newer selection's answer fills the view
      this.clear();
      this.app.fail(e, this.list);
    } finally {
      this.list.removeAttribute('aria-busy');
    }
  }

  // The unit of a total of profile p (event ev, metric m), when known.
  unitOf(p, ev, m) {
    return this.units.get([p.service, p.source, ev, m].join('\t'));
  }

  fmtTotal(p, ev, m, v) {
    const u = this.unitOf(p, ev, m);
    return u === undefined ? fmtCount(v) : fmtWithUnit(v, u);
  }

  // "cpu: cpu 240 s, samples 24k" (the metric asked for only, when one is).
  totalsText(p) {
    const metric = this.params.get('metric');
    return p.events.map((ev) => {
      const ms = Object.entries(ev.totals).filter(([m]) => !metric || m === metric);
      return `${ev.name}: ` + ms.map(([m, v]) => `${m} ${this.fmtTotal(p, ev.name, m, v)}`).join(', ');
    }).join('; ');
  }

  // Learn the units of the page's totals: for each service, source, event and metric not
  // known yet, the top answer (one function) of the newest listed profile that has it, one
  // request at a time; then the totals are written again with them.
  async loadUnits(page) {
    const asks = new Map();
    for (const p of page.profiles) {
      for (const ev of p.events) {
        for (const m of Object.keys(ev.totals)) {
          const key = [p.service, p.source, ev.name, m].join('\t');
          if (!this.units.has(key) && !asks.has(key)) asks.set(key, { id: p.id, event: ev.name, metric: m });
        }
      }
    }
    if (!asks.size) {
      this.list.dataset.units = 'done';
      return;
    }
    for (const [key, a] of asks) {
      this.units.set(key, null);
      try {
        const top = await api.getJSON('profiles/' + encodeURIComponent(a.id) + '/top',
          { limit: 1, event: a.event || null, metric: a.metric });
        this.units.set(key, top.unit);
      } catch {
        // no unit then: the total is shown as a count
      }
    }
    // the list shown now (this page's, or a newer one whose units these may be)
    for (const [td, p] of this.totalCells) td.textContent = this.totalsText(p);
    if (this.page === page) this.list.dataset.units = 'done'; // for tests: the units are in
  }

  // Take the previous selection's strip, list and pager off the page (its load failed).
  clear() {
    this.page = null;
    this.strip.clear();
    this.status.textContent = '';
    fill(this.list);
    fill(this.pager);
    if (this.diffPicked) this.diffPicked.disabled = true;
  }

  // The events (and their metrics) of the chosen service, or of every service.
  events() {
    const svc = this.params.get('service');
    const out = new Map();
    for (const s of this.services) {
      if (svc && s.name !== svc) continue;
      for (const [ev, ms] of Object.entries(s.events || {})) {
        if (!out.has(ev)) out.set(ev, new Set());
        ms.forEach((m) => out.get(ev).add(m));
      }
    }
    return out;
  }

  renderForm() {
    const p = this.params;
    const events = this.events();
    const metrics = new Set();
    for (const [ev, ms] of events) if (!p.get('event') || ev === p.get('event')) ms.forEach((m) => metrics.add(m));
    const field = (label, control) => h('label', { class: 'field' }, h('span', { text: label }), control);
    const change = (key) => (e) => this.go({ [key]: e.target.value, cursor: null });
    fill(this.form,
      field('Service', select('service', [['', 'Any'], ...this.services.map((s) => [s.name, s.name])],
        p.get('service'), change('service'))),
      field('Source', select('source', [['', 'Any'], ...SOURCES.map((s) => [s, s])], p.get('source'), change('source'))),
      field('Event', select('event', [['', 'Any'], ...[...events.keys()].map((e) => [e, e])], p.get('event'), change('event'))),
      field('Metric', select('metric', [['', 'Primary'], ...[...metrics].map((m) => [m, m])], p.get('metric'),
        (e) => this.go({ metric: e.target.value }))),
      this.timeField(),
      this.labelField());
  }

  timeField() {
    const p = this.params;
    const from = p.get('from') || '', to = p.get('to') || '';
    const preset = !to && PRESETS.some(([v]) => v === from) ? from : 'custom';
    const custom = h('span', { class: 'custom-range', hidden: preset !== 'custom' });
    const fromIn = h('input', { type: 'datetime-local', 'aria-label': 'From', value: localOf(from) });
    const toIn = h('input', { type: 'datetime-local', 'aria-label': 'To', value: localOf(to) });
    const apply = h('button', {
      type: 'button', text: 'Apply',
      onclick: () => this.go({ from: fromLocalInput(fromIn.value), to: fromLocalInput(toIn.value), cursor: null }),
    });
    custom.append(fromIn, ' – ', toIn, apply);
    const sel = select('time', [...PRESETS, ['custom', 'Custom range…']], preset, (e) => {
      if (e.target.value === 'custom') {
        custom.hidden = false;
        fromIn.focus();
      } else this.go({ from: e.target.value, to: null, cursor: null });
    });
    // what the range is on: the profiles' own time (the default) or when they were received
    const basis = select('time-basis', TIME_BASES, p.get('time'), (e) => this.go({ time: e.target.value, cursor: null }),
      'Time on');
    return h('div', { class: 'field' }, h('label', { for: 'f-time', text: 'Time' }),
      h('span', { class: 'field-row' }, sel, h('span', { class: 'on', text: 'on' }), basis, custom));
  }

  labelField() {
    const labels = this.params.getAll('label');
    const chips = labels.map((l) => h('span', { class: 'chip removable' }, l.replace(':', '='),
      h('button', {
        type: 'button', class: 'chip-x', 'aria-label': 'Remove label ' + l, text: '×',
        onclick: () => this.go({ label: labels.filter((x) => x !== l), cursor: null }),
      })));
    const keySel = select('label-key', [['', 'key…'], ...this.labelKeys.map((k) => [k, k])], '', async () => {
      fill(valSel, h('option', { value: '', text: '…' }));
      if (!keySel.value) return;
      try {
        const v = await api.getJSON('labels/' + encodeURIComponent(keySel.value) + '/values', {});
        fill(valSel, h('option', { value: '', text: 'value…' }),
          v.values.map((x) => h('option', { value: x.value, text: `${x.value} (${x.profiles})` })));
      } catch (e) {
        this.app.fail(e, this.status);
      }
    }, 'Label key');
    const valSel = select('label-value', [['', 'value…']], '', () => {}, 'Label value');
    const add = h('button', {
      type: 'button', text: 'Add label',
      onclick: () => {
        if (keySel.value && valSel.value) this.go({ label: [...labels, `${keySel.value}:${valSel.value}`], cursor: null });
      },
    });
    return h('div', { class: 'field' }, h('span', { text: 'Labels' }),
      h('span', { class: 'field-row' }, h('span', { class: 'chips' }, chips), keySel, valSel, add));
  }

  renderActions() {
    const sel = selectionOf(this.params);
    const metric = this.params.get('metric');
    const flame = withParams(sel, { metric });
    const prev = previousPeriod(sel);
    const diffPrev = prev ? new URLSearchParams([...prefixed(prev.base, 'base.'), ...prefixed(prev.target, 'target.')]) : null;
    if (diffPrev && metric) diffPrev.set('metric', metric);
    this.diffPicked = h('button', {
      type: 'button', class: 'diff-picked', disabled: true, text: 'Diff the 2 picked profiles',
      onclick: () => {
        const ids = [...this.picked];
        const rows = this.page.profiles.filter((x) => ids.includes(x.id));
        // the older is the base: by the profiles' own time when both have one (an upload
        // buffered through an outage arrives after newer ones), else by arrival
        const own = rows.every((x) => x.start_at);
        const at = (x) => (own ? x.start_at : x.received_at);
        rows.sort((a, b) => (at(a) < at(b) ? -1 : 1));
        this.app.go('diff', withParams({}, { base: rows[0].id, target: rows[1].id, metric }));
      },
    });
    fill(this.actions,
      h('a', { class: 'button', href: hashOf('flame', flame), text: 'Merged flamegraph of the selection' }),
      diffPrev ? h('a', {
        class: 'button', href: hashOf('diff', diffPrev), 'data-action': 'previous-period',
        text: 'Compare with the previous period' + (sel.get('time') === 'received' ? '' : ' (by received time)'),
        // on their own time a profile whose range spans the boundary would be in both periods
        title: 'Both periods select on the time the relay received each profile: one instant a profile, so none counts in both',
      }) : h('span', { class: 'hint', text: 'Pick a start time to compare with the period before it.' }),
      this.diffPicked);
  }

  renderList(page, tl) {
    const profiles = page.profiles;
    const cursor = this.params.get('cursor');
    this.status.textContent = tl.profiles === 0 ? 'No profile matches this selection.'
      : `${tl.profiles} profiles in the selection; ${cursor ? 'an older page' : 'the newest'} ${profiles.length} shown`;
    const metric = this.params.get('metric');
    this.totalCells = [];
    const rows = profiles.map((p) => {
      const box = h('input', {
        type: 'checkbox', 'aria-label': 'Pick profile ' + p.id + ' for a diff',
        onchange: (e) => {
          if (e.target.checked) this.picked.add(p.id);
          else this.picked.delete(p.id);
          this.diffPicked.disabled = this.picked.size !== 2;
        },
      });
      const totals = h('td', { class: 'events', text: this.totalsText(p), title: exactTotals(p) });
      this.totalCells.push([totals, p]);
      const labels = Object.entries(p.labels || {}).map(([k, v]) => h('span', { class: 'chip', text: `${k}=${v}` }));
      return h('tr', { 'data-id': p.id },
        h('td', {}, box),
        h('td', { title: fmtTime(p.received_at), text: fmtAgo(p.received_at) }),
        h('td', { text: p.service }),
        h('td', { text: p.source }),
        h('td', { text: p.start ? fmtTime(p.start) + (p.end ? ' · ' + fmtDuration(p.end - p.start) : '') : '–' }),
        totals,
        h('td', { class: 'num', text: fmtCount(p.samples) }),
        h('td', { class: 'labels' }, labels),
        h('td', {}, h('a', {
          class: 'open-profile', href: hashOf('flame', withParams({}, { id: p.id, metric })), text: 'Flamegraph',
        })));
    });
    fill(this.list, profiles.length ? h('table', { class: 'grid profiles' },
      h('thead', {}, h('tr', {}, ['', 'Received', 'Service', 'Source', 'Profile time', 'Totals', 'Samples', 'Labels', 'Open']
        .map((x, i) => h('th', { scope: 'col', class: i === 6 ? 'num' : null, text: x })))),
      h('tbody', {}, rows)) : '');
    fill(this.pager,
      cursor ? h('button', { type: 'button', text: '« Newest', onclick: () => this.go({ cursor: null }) }) : '',
      page.next_cursor ? h('button', {
        type: 'button', class: 'older', text: 'Older »', onclick: () => this.go({ cursor: page.next_cursor }),
      }) : '');
  }
}

// Every total of profile p as an exact number, for the totals cell's title.
function exactTotals(p) {
  return p.events.map((ev) => `${ev.name}: ` + Object.entries(ev.totals).map(([m, v]) => `${m} ${v}`).join(', ')).join('; ');
}

// A <select> with options [[value, text]...], one selected.
function select(id, options, value, onchange, label) {
  return h('select', { id: 'f-' + id, onchange, 'aria-label': label || null },
    options.map(([v, t]) => h('option', { value: v, text: t, selected: (value || '') === v })));
}

function localOf(v) {
  if (!v) return '';
  const d = /^now/.test(v) ? null : toDate(/^\d+$/.test(v) ? Number(v) * 1e9 : v);
  return d && !isNaN(d) ? toLocalInput(d) : '';
}

// The count-over-time strip: one bar per bucket of GET /api/v1/timeline; hover for the
// bucket's range and count, click to narrow the selection to it.
class Strip {
  constructor(onPick) {
    this.onPick = onPick;
    this.canvas = h('canvas', { class: 'strip-canvas', tabindex: '0', role: 'img', 'aria-label': 'Profiles over time' });
    this.caption = h('p', { class: 'strip-caption' });
    this.el = h('figure', { class: 'strip' }, this.canvas, this.caption);
    this.tip = document.getElementById('tooltip');
    this.canvas.addEventListener('mousemove', (e) => this.move(e));
    this.canvas.addEventListener('mouseleave', () => this.hideTip());
    this.canvas.addEventListener('click', (e) => this.click(e));
    this.canvas.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' && this.data) this.pick(this.peak());
    });
    new ResizeObserver(() => this.draw()).observe(this.el);
  }

  set(tl) {
    this.data = tl;
    debugHook().timeline = tl;
    this.caption.textContent = tl.profiles
      ? `${tl.profiles} profiles, ${fmtTime(tl.from)} – ${fmtTime(tl.to)}; each bar ${fmtDuration(tl.bucket_ns)}`
      : 'No profiles in this range.';
    this.canvas.setAttribute('aria-label', `Profiles over time: ${tl.profiles} profiles in ${tl.buckets} bars` +
      (tl.profiles ? '; Enter narrows to the busiest bar' : ''));
    this.draw();
  }

  // No timeline (its load failed): nothing drawn, no caption.
  clear() {
    this.data = null;
    debugHook().timeline = null;
    this.hideTip();
    this.caption.textContent = '';
    this.canvas.setAttribute('aria-label', 'Profiles over time');
    this.canvas.width = 0;
    this.canvas.height = 0;
    this.canvas.style.height = '0px';
  }

  draw() {
    if (!this.data) return;
    const W = Math.max(100, this.el.clientWidth), H = 56, dpr = window.devicePixelRatio || 1;
    const c = this.canvas, g = c.getContext('2d');
    c.width = W * dpr;
    c.height = H * dpr;
    c.style.width = W + 'px';
    c.style.height = H + 'px';
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    const counts = this.data.counts, max = Math.max(1, ...counts), bw = W / counts.length;
    g.fillStyle = '#e7e5e4';
    g.fillRect(0, H - 1, W, 1);
    g.fillStyle = '#ea580c';
    counts.forEach((n, i) => {
      if (!n) return;
      const bh = Math.max(2, (n / max) * (H - 4));
      g.fillRect(i * bw + 0.5, H - bh, Math.max(1, bw - 1), bh);
    });
  }

  bucketAt(e) {
    const r = this.canvas.getBoundingClientRect();
    const i = Math.floor(((e.clientX - r.left) / r.width) * this.data.counts.length);
    return i >= 0 && i < this.data.counts.length ? i : -1;
  }

  range(i) {
    const from = this.data.from + i * this.data.bucket_ns;
    return [from, from + this.data.bucket_ns];
  }

  move(e) {
    if (!this.data || !this.data.profiles) return;
    const i = this.bucketAt(e);
    if (i < 0) return this.hideTip();
    const [a, b] = this.range(i);
    this.tip.replaceChildren(h('strong', { text: `${this.data.counts[i]} profiles` }), h('br'),
      `${fmtTime(a)} – ${fmtTime(b)}`, h('br'), h('small', { text: 'click to narrow the range' }));
    this.tip.hidden = false;
    this.tip.style.left = Math.min(e.clientX + 12, window.innerWidth - 260) + 'px';
    this.tip.style.top = e.clientY + 14 + 'px';
  }

  hideTip() {
    if (this.tip) this.tip.hidden = true;
  }

  peak() {
    const c = this.data.counts;
    return c.indexOf(Math.max(...c));
  }

  click(e) {
    if (!this.data || !this.data.profiles) return;
    const i = this.bucketAt(e);
    if (i >= 0 && this.data.counts[i]) this.pick(i);
  }

  pick(i) {
    const [a, b] = this.range(i);
    this.hideTip();
    this.onPick(new Date(a / 1e6).toISOString(), new Date(Math.ceil(b / 1e6)).toISOString());
  }
}

