// The flamegraph of one profile (#/flame?id=) or of a merged selection (#/flame?service=
// &from=&label=...), with the top functions beside it. Parameters: metric, event, by
// (function|frame), max_nodes, q (search), zoom (the zoomed node's path, JSON), fn (a
// function: the graph keeps only the stacks through it and its sandwich is shown), show
// (both|flame|top), sort/dir (the table's order).
import * as api from './api.js';
import { FlameGraph } from './flame.js';
import { fromApiTree, sandwich } from './tree.js';
import { SortTable, exportBar, breadcrumb } from './panels.js';
import { selectionOf, describe, isEmpty } from './selection.js';
import {
  h, fill, fmtValue, fmtPct, fmtTime, fmtAgo, withParams, hashOf, exactRegex, splitFrame, debounce,
} from './util.js';

const MAX_NODES = ['500', '2000', '10000', '50000'];
const TOP_LIMIT = 1000;

// What a view's answers are of: the profile or selection, metric, event and by.
const viewOf = (src) => src.path('') + '?' + src.args({});

export class FlameView {
  constructor(app) {
    this.app = app;
    this.keys = {};
    this.meta = null;
    this.metaKey = '';
    this.locs = null;
    this.srcKey = '';  // the profile or selection shown: 'p:<id>' or 's:<filters>'
    this.blank = null; // 'failed' or 'nothing' (nothing matched): no graph, table or tools shown
  }

  mount(main) {
    this.title = h('h1', { text: 'Flamegraph' });
    this.sub = h('p', { class: 'subtitle' });
    // the one message of a load that failed, or that found nothing to draw
    this.notice = h('div', { class: 'notice' });
    this.toolbar = h('div', { class: 'toolbar', role: 'toolbar', 'aria-label': 'Flamegraph settings' });
    this.search = h('input', {
      type: 'search', id: 'flame-search', placeholder: 'Search functions  ( / )', 'aria-label': 'Search functions',
      autocomplete: 'off', oninput: debounce(() => this.set({ q: this.search.value }), 150),
    });
    this.matches = h('span', { class: 'matches', 'aria-live': 'polite' });
    this.info = h('p', { class: 'info', 'aria-live': 'polite' });
    this.focusLine = h('p', { class: 'focus-line', hidden: true });
    this.crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Zoom path' });
    this.graphHost = h('div', { class: 'flame-host' });
    this.flameMsg = h('div', { class: 'flame-msg' });
    this.flamePane = h('section', { class: 'flame-pane', 'aria-label': 'Flamegraph' },
      this.crumbs, this.flameMsg, this.graphHost);
    this.table = new SortTable([
      { key: 'name', label: 'Function', show: (r) => r.name },
      { key: 'self', label: 'Self', num: true, show: (r) => fmtValue(r.self, this.unit) },
      { key: 'self_pct', label: 'Self %', num: true, show: (r) => r.self_pct.toFixed(2) },
      { key: 'total', label: 'Total', num: true, show: (r) => fmtValue(r.total, this.unit) },
      { key: 'total_pct', label: 'Total %', num: true, show: (r) => r.total_pct.toFixed(2) },
    ], {
      label: 'Top functions',
      onRow: (r) => this.app.go('flame', withParams(this.params, { fn: r.name, zoom: null })),
      onSort: (sort, dir) => this.set({ sort, dir }),
      rowClass: (r) => (r.name === this.params.get('fn') ? 'current' : null),
    });
    this.topNote = h('p', { class: 'top-note' });
    this.topPane = h('section', { class: 'top-pane', 'aria-label': 'Top functions' },
      h('h2', { text: 'Top functions' }), this.topNote, this.table.el);
    this.split = h('div', { class: 'split' }, this.flamePane, this.topPane);
    this.sandEl = h('section', { class: 'sandwich', hidden: true, 'aria-label': 'Sandwich' });
    this.exports = h('div');
    this.graph = new FlameGraph(this.graphHost, {
      main: true, label: 'Flamegraph',
      tooltip: (i) => this.tooltip(this.graph, i),
      onZoom: (i) => {
        this.set({ zoom: i ? JSON.stringify(this.graph.tree.path(i)) : null }, true);
        breadcrumb(this.crumbs, this.graph);
      },
      onPick: (i) => this.app.go('flame', withParams(this.params, { fn: this.graph.tree.name[i], zoom: null })),
    });
    main.append(h('div', { class: 'view-head' }, this.title), this.sub, this.notice, this.toolbar, this.info,
      this.focusLine, this.split, this.sandEl, this.exports);
  }

  unmount() {
    this.graph.destroy();
    for (const g of this.sandGraphs || []) g.destroy();
  }

  // Record display changes in the URL (no reload); push makes a history entry.
  set(changes, push = false) {
    this.params = withParams(this.params, changes);
    this.app.record('flame', this.params, push);
    if ('q' in changes || 'fn' in changes) this.applySearch();
    if ('q' in changes) this.renderTop();
  }

  // The API paths and parameters of this view's source.
  source() {
    const id = this.params.get('id');
    const view = {};
    for (const k of ['metric', 'event', 'by']) if (this.params.get(k)) view[k] = this.params.get(k);
    if (id) {
      const base = 'profiles/' + encodeURIComponent(id) + '/';
      return { id, path: (v) => base + v, args: (extra) => withParams(view, extra || {}) };
    }
    const sel = selectionOf(this.params);
    return { sel, path: (v) => v, args: (extra) => withParams(withParams(sel, view), extra || {}) };
  }

  update(params, force) {
    this.params = params;
    const src = this.source();
    this.search.value = params.get('q') || '';
    if (!src.id && isEmpty(src.sel) && !params.has('all')) {
      this.clear();
      this.srcKey = '';
      this.renderEmpty();
      return;
    }
    // another profile or selection: nothing of the previous one stays on the page
    const srcKey = src.id ? 'p:' + src.id : 's:' + src.sel;
    if (srcKey !== this.srcKey) {
      this.clear();
      this.srcKey = srcKey;
    }
    const fn = params.get('fn');
    const flameArgs = src.args({ max_nodes: params.get('max_nodes'), focus: fn ? exactRegex(fn) : null });
    const topArgs = src.args({ limit: TOP_LIMIT });
    const flameKey = src.path('flamegraph') + '?' + flameArgs;
    const topKey = src.path('top') + '?' + topArgs;
    const reload = force || flameKey !== this.keys.flame;
    if (reload && this.blank) this.clear(); // a new try after a failure or an empty answer
    this.renderHead(src);
    if (this.blank) return; // the same answer as before: still nothing to show
    this.flameURL = api.apiPath(src.path('flamegraph'), flameArgs);
    this.topURL = api.apiPath(src.path('top'), topArgs);
    // the graph first: the top table's answer costs the server as much (it reads the same
    // profiles), and asked at once it would slow the graph on a small machine
    const flame = reload ? this.loadFlame(src, flameArgs, flameKey) : null;
    if (!flame) this.applyZoom();
    if (force || topKey !== this.keys.top) {
      const top = () => this.loadTop(src, topArgs, topKey);
      if (flame && params.get('show') !== 'top') flame.then((drawn) => drawn && top());
      else top();
    } else this.renderTop();
    this.loadMeta(src);
    this.loadSandwich(src, fn, force);
    this.renderToolbar();
    if (!flame) this.renderExports(src);
    this.split.dataset.show = params.get('show') || 'both';
  }

  // Take off the page whatever was shown of a profile or selection: its graph, totals, tools,
  // table, sandwich and exports. `state`: why ('failed', 'nothing'), or null (a new load).
  blankView(state) {
    this.blank = state;
    this.flame = null;
    this.top = null;
    this.graph.clear();
    fill(this.crumbs);
    fill(this.flameMsg);
    this.flamePane.removeAttribute('aria-busy');
    fill(this.info);
    fill(this.toolbar);
    this.matches.textContent = '';
    this.focusLine.hidden = true;
    fill(this.focusLine);
    this.table.rows = [];
    fill(this.table.el);
    fill(this.topNote);
    for (const g of this.sandGraphs || []) g.destroy();
    this.sandGraphs = [];
    this.sand = null;
    this.sandTotal = null;
    this.sandEl.hidden = true;
    fill(this.sandEl);
    fill(this.exports);
    this.split.dataset.show = 'none';
    if (this.params && this.params.get('id')) fill(this.sub); // the profile's line
    fill(this.notice);
  }

  // Forget the profile or selection shown before (another one is asked for).
  clear() {
    this.blankView(null);
    this.keys = {};
    this.locs = null;
    if (this.metaKey !== 'services') {
      this.meta = null;
      this.metaKey = '';
    }
  }

  // A request of this view failed: one message, and nothing of the profile left shown (the
  // other requests of the same load, failing alike, add no second message).
  failLoad(e) {
    if ((e && e.name === 'StaleError') || this.blank === 'failed') return;
    this.blankView('failed');
    this.keys = {};
    this.app.fail(e, this.notice);
  }

  // A request of this view failed: for a selection, a 404 saying that no stored profile
  // matches it is an answer (nothing matched: the note, not an error banner); anything
  // else is a failure.
  loadFailed(e, src) {
    if (e && e.name === 'StaleError') return;
    if (!src.id && api.noMatch(e)) this.showNothing(src);
    else this.failLoad(e);
  }

  // Nothing to draw: no stored profile matched the selection (the relay's 404, or an answer
  // without a metric), or the profile has no samples. Said so, with nothing else shown.
  showNothing(src) {
    if (this.blank === 'nothing' || this.blank === 'failed') return; // said once per load
    this.blankView('nothing');
    fill(this.notice, h('p', { class: 'status nothing' }, src.id
      ? 'This profile holds no samples: there is nothing to draw.'
      : ['No stored profile matched this selection (', describe(src.sel), '): there is nothing to draw. Change it in ',
        h('a', { href: hashOf('profiles', src.sel), text: 'Profiles' }), '.']));
  }

  renderEmpty() {
    this.title.textContent = 'Flamegraph';
    fill(this.sub, 'Open a profile from ', h('a', { href: '#/profiles', text: 'Profiles' }),
      ', a merged flamegraph from ', h('a', { href: '#/services', text: 'Services' }), ', or ',
      h('a', { href: hashOf('flame', { all: '1' }), text: 'merge every stored profile' }), '.');
    fill(this.toolbar);
    fill(this.info);
    this.split.dataset.show = 'none';
  }

  renderHead(src) {
    if (src.id) {
      this.title.textContent = 'Profile ' + src.id;
      const m = !this.blank && this.metaKey === 'p:' + src.id ? this.meta : null;
      if (!m) fill(this.sub);
      else {
        fill(this.sub, `${m.service} · ${m.source} · received ${fmtAgo(m.received_at)} (${fmtTime(m.received_at)})`,
          m.start ? ` · profile time ${fmtTime(m.start)}` : '', ' · ',
          h('a', { href: hashOf('profiles', { service: m.service }), text: 'other profiles of ' + m.service }));
      }
    } else {
      this.title.textContent = 'Merged flamegraph';
      fill(this.sub, describe(src.sel), ' · ', h('a', { href: hashOf('profiles', src.sel), text: 'list these profiles' }));
    }
  }

  // Resolves to true when the graph was drawn; false when a newer graph was asked for
  // meanwhile, the load failed or it found nothing.
  async loadFlame(src, args, key) {
    this.keys.flame = key;
    this.flameMsg.textContent = 'Loading…';
    this.flamePane.setAttribute('aria-busy', 'true');
    try {
      const json = await api.getJSON(src.path('flamegraph'), args, api.ticket('flame'));
      if (this.blank) return false; // another request of this load failed meanwhile
      if (json.metric === null || json.metric === undefined) {
        this.showNothing(src);
        return false;
      }
      this.flame = json;
      this.unit = json.unit;
      fill(this.flameMsg);
      this.graph.setTree(fromApiTree(json), this.zoomPath());
      breadcrumb(this.crumbs, this.graph);
      this.applySearch();
      this.renderInfo();
      this.renderToolbar();
      this.renderExports(src);
      return true;
    } catch (e) {
      this.loadFailed(e, src);
      return false;
    } finally {
      this.flamePane.removeAttribute('aria-busy');
    }
  }

  zoomPath() {
    try {
      const z = JSON.parse(this.params.get('zoom') || '[]');
      return Array.isArray(z) ? z.map(String) : [];
    } catch {
      return [];
    }
  }

  applyZoom() {
    if (!this.graph.tree) return;
    const path = this.zoomPath();
    const i = path.length ? this.graph.tree.find(path) : 0;
    if (i >= 0 && i !== this.graph.zoom) this.graph.zoomTo(i, false);
    breadcrumb(this.crumbs, this.graph);
  }

  // The search (q) highlights its matches; without one, the focused function's nodes.
  applySearch() {
    if (!this.graph.tree) return;
    const q = (this.params.get('q') || '').trim();
    const fn = this.params.get('fn');
    let r = null;
    if (q) {
      const ql = q.toLowerCase();
      r = this.graph.setSearch((name) => name.toLowerCase().includes(ql));
      // the graph holds the kept nodes only: with some merged into "other", what they hold
      // is not searched, and the share is a floor
      const floor = this.flame && this.flame.trimmed_nodes ? 'at least ' : '';
      this.matches.textContent = r.count
        ? `${r.count} frames match “${q}”: ${floor}${fmtPct(r.share)} of the total (${fmtValue(r.value, this.unit)})` +
          (floor ? '; nodes merged into “other” are not searched' : '')
        : `No drawn frame matches “${q}”.`;
    } else if (fn) {
      r = this.graph.setSearch((name) => name === fn);
      this.fnFrames = r.count;
      this.renderFnShare();
      return;
    } else {
      this.graph.setSearch(null);
      this.matches.textContent = '';
    }
    this.matches.dataset.share = r ? String(r.share) : '';
    this.matches.dataset.count = r ? String(r.count) : '';
  }

  // The focused function's total (as the top table counts it: a stack once) and its share of
  // the whole profile or selection, not of the graph focused on it (whose root it is). From
  // the sandwich's answer and the top table's (unfocused) total and unit, whichever order they
  // come in: null until both have.
  fnShare() {
    const fn = this.params.get('fn');
    // both answers of the metric, event and selection shown (another's may still be here)
    if (!fn || !this.sand || this.sand.fn !== fn || !this.top || this.top.view !== this.sand.view) return null;
    const total = this.sand.callers.total[0];
    return { fn, total, share: this.top.total ? total / this.top.total : 0, unit: this.top.unit };
  }

  // The lines that say the focused function's share (the sandwich's and the search's), again
  // as each answer comes.
  renderFnShare() {
    const fn = this.params.get('fn');
    const f = this.fnShare();
    const whole = this.params.get('id') ? 'the profile' : 'the selection';
    if (this.sandTotal && this.sand && this.sand.fn === fn) {
      const total = this.sand.callers.total[0];
      const unit = f ? f.unit : this.flame ? this.flame.unit : undefined;
      fill(this.sandTotal, `${fn}: total `, unit !== undefined ? fmtValue(total, unit) : '…',
        ' · ', f ? h('strong', { text: fmtPct(f.share) }) : '…', ` of ${whole}`);
      this.sandTotal.dataset.share = f ? String(f.share) : '';
    }
    if (!fn || (this.params.get('q') || '').trim() || !this.graph.tree) return;
    this.matches.textContent = `${this.fnFrames || 0} frames of ${fn}` +
      (f ? ` · ${fmtPct(f.share)} of ${whole} (${fmtValue(f.total, f.unit)})` : '');
    this.matches.dataset.share = f ? String(f.share) : '';
    this.matches.dataset.count = String(this.fnFrames || 0);
  }

  renderInfo() {
    const j = this.flame;
    if (!j) return;
    const share = (x) => h('strong', { text: fmtPct(j.total ? x / j.total : 0) });
    // the API lays a large tree out in Max nodes: lighter frames merged into "other" nodes,
    // light stacks ending in an "other" leaf (cut short)
    const cut = j.cut_value
      ? ['; ', share(j.cut_value), ' of the total ends in an “other” leaf before its stack\'s leaf']
      : ['; every stack drawn to its leaf'];
    const trimmed = j.other_nodes
      ? h('span', { class: 'trimmed' }, ' · a frame\'s callees of at most ',
        fmtValue(j.other_max, j.unit), ' each are merged into one “other” when it has two or more (',
        `${j.other_nodes} such nodes): `, share(j.trimmed_value), ' of the total passes through one',
        ...cut, ' (raise Max nodes to name lighter frames)')
      : ' · nothing merged';
    fill(this.info, `Total ${fmtValue(j.total, j.unit)} of ${j.metric}${j.unit ? ' (' + j.unit + ')' : ''} · `,
      `${j.nodes} nodes`, trimmed);
    const fn = this.params.get('fn');
    this.focusLine.hidden = !fn;
    if (fn) {
      fill(this.focusLine, 'Only the stacks through ', h('strong', { text: fn }), ' are shown. ',
        h('button', { type: 'button', class: 'clear-fn', text: 'Show every stack', onclick: () => this.app.go('flame', withParams(this.params, { fn: null, zoom: null })) }));
    }
  }

  async loadTop(src, args, key) {
    this.keys.top = key;
    try {
      const top = await api.getJSON(src.path('top'), args, api.ticket('top'));
      if (this.blank) return;
      top.view = viewOf(src);
      this.top = top;
      this.unit = top.unit;
      this.renderTop();
      this.renderFnShare();
    } catch (e) {
      this.loadFailed(e, src);
    }
  }

  renderTop() {
    if (!this.top || this.blank) return;
    const q = (this.params.get('q') || '').trim().toLowerCase();
    const rows = q ? this.top.top.filter((r) => r.name.toLowerCase().includes(q)) : this.top.top;
    this.table.set(rows, this.params.get('sort'), this.params.get('dir'));
    this.topNote.textContent = `${rows.length} of ${this.top.functions} functions` +
      (this.top.functions > this.top.top.length ? ` (the ${this.top.top.length} heaviest by self)` : '') +
      '. Press a function to focus on it and see its callers and callees.';
  }

  async loadMeta(src) {
    const key = src.id ? 'p:' + src.id : 'services';
    if (this.metaKey === key) return;
    this.metaKey = key;
    this.meta = null;
    try {
      const meta = src.id
        ? await api.getJSON(src.path('').replace(/\/$/, ''), {}, api.ticket('meta'))
        : await api.getJSON('services', {}, api.ticket('meta'));
      if (this.metaKey !== key) return; // the view moved on to another profile
      this.meta = meta;
      if (this.blank) return;
      if (src.id) this.renderHead(src);
      this.renderToolbar();
    } catch (e) {
      if (e.name === 'StaleError' || this.metaKey !== key) return;
      this.metaKey = '';
      this.failLoad(e);
    }
  }

  // Events and their metrics: the profile's, or the selection's services'.
  events() {
    const out = new Map();
    if (!this.meta) return out;
    if (this.meta.events && Array.isArray(this.meta.events)) {
      for (const e of this.meta.events) out.set(e.name, Object.keys(e.totals));
      return out;
    }
    const svc = this.params.get('service');
    for (const s of this.meta.services || []) {
      if (svc && s.name !== svc) continue;
      for (const [ev, ms] of Object.entries(s.events || {})) {
        out.set(ev, [...new Set([...(out.get(ev) || []), ...ms])]);
      }
    }
    return out;
  }

  renderToolbar() {
    if (this.blank) return;
    const p = this.params;
    const events = this.events();
    const event = p.get('event') || (p.get('id') ? [...events.keys()][0] : '');
    const metrics = event ? events.get(event) || [] : [...new Set([...events.values()].flat())];
    const metric = p.get('metric') || (this.flame ? this.flame.metric : '');
    if (metric && !metrics.includes(metric)) metrics.unshift(metric);
    // another event keeps the metric only when that event has it (else the answer is a 400
    // and the page is left without its controls)
    const change = (key, v) => {
      const next = { [key]: v, zoom: null };
      const kept = key === 'event' && p.get('metric') &&
        (v ? events.get(v) || [] : [...new Set([...events.values()].flat())]);
      if (kept && !kept.includes(p.get('metric'))) next.metric = null;
      return next;
    };
    const sel = (id, label, options, value, key) => h('label', { class: 'field' }, h('span', { text: label }),
      h('select', { id, onchange: (e) => this.app.go('flame', withParams(p, change(key, e.target.value))) },
        options.map(([v, t]) => h('option', { value: v, text: t, selected: v === (value || '') }))));
    const show = p.get('show') || 'both';
    // the search box moves into the new toolbar: keep its focus and caret while typing
    const typing = document.activeElement === this.search;
    const caret = typing ? [this.search.selectionStart, this.search.selectionEnd] : null;
    fill(this.toolbar,
      sel('flame-metric', 'Metric', metrics.map((m) => [m, m]), metric, 'metric'),
      sel('flame-event', 'Event', [...(p.get('id') ? [] : [['', 'Any']]), ...[...events.keys()].map((e) => [e, e])], event, 'event'),
      sel('flame-by', 'By', [['', 'function'], ['frame', 'line']], p.get('by'), 'by'),
      sel('flame-max', 'Max nodes', MAX_NODES.map((n) => [n === '2000' ? '' : n, n]), p.get('max_nodes'), 'max_nodes'),
      h('span', { class: 'search-box' }, this.search, this.matches),
      h('button', { type: 'button', class: 'reset-zoom', text: 'Reset zoom', onclick: () => this.graph.reset() }),
      h('span', { class: 'segmented', role: 'group', 'aria-label': 'Show' },
        [['both', 'Both'], ['flame', 'Flamegraph'], ['top', 'Top table']].map(([v, t]) => h('button', {
          type: 'button', 'data-show': v, 'aria-pressed': String(show === v), text: t,
          onclick: () => {
            this.set({ show: v === 'both' ? null : v });
            this.split.dataset.show = v;
            this.renderToolbar();
            this.graph.draw();
          },
        }))));
    if (typing) {
      this.search.focus();
      this.search.setSelectionRange(...caret);
    }
  }

  renderExports(src) {
    if (this.blank || !this.flame) return fill(this.exports); // no export of what is not shown
    const fn = this.params.get('fn');
    const view = src.args({ focus: fn ? exactRegex(fn) : null });
    const name = src.id || (this.params.get('service') || 'merged');
    const ev = this.params.get('event') ? { event: this.params.get('event') } : {};
    const links = src.id ? [
      ['pprof', api.apiPath(src.path('pprof'), ev), name + '.pb.gz'],
      ['collapsed', api.apiPath(src.path('collapsed'), view), name + '.folded'],
      ['speedscope', api.apiPath(src.path('speedscope'), view), name + '.speedscope.json'],
      ['SPAA', api.apiPath(src.path('spaa')), name + '.spaa'],
    ] : [
      ['pprof', api.apiPath('pprof', withParams(src.sel, { metric: this.params.get('metric'), focus: fn ? exactRegex(fn) : null })), name + '.pb.gz'],
      ['collapsed', api.apiPath('collapsed', view), name + '.folded'],
      ['speedscope', api.apiPath('speedscope', view), name + '.speedscope.json'],
      ['SPAA', null, 'SPAA holds one profile: open one from the list to export it'],
    ];
    // copy-as-curl fetches what the view shows: the top table alone, else the graph
    fill(this.exports, exportBar(links, () => (this.params.get('show') === 'top' ? this.topURL : this.flameURL)));
  }

  // The tooltip of node i of graph g: function, file:line, total and self with shares.
  tooltip(g, i) {
    const t = g.tree;
    const all = t.total[0] || 1;
    if (t.other[i]) {
      return [h('strong', { class: 'tip-name', text: 'other' }),
        h('div', { text: `${t.merged[i]} lighter frames merged into one` }),
        h('div', { text: `Total ${fmtValue(t.total[i], this.unit)} · ${fmtPct(t.total[i] / all)}` }),
        h('div', { text: `Self ${fmtValue(t.self[i], this.unit)} · ${fmtPct(t.self[i] / all)}` }),
        h('small', { text: 'click: zoom · raise Max nodes to name them' })];
    }
    const name = i === 0 ? g.opts.rootName || 'all' : t.name[i];
    const { fn, loc } = splitFrame(name);
    const out = [h('strong', { class: 'tip-name', text: fn })];
    const where = loc || this.locationsOf(fn);
    if (where) out.push(h('div', { class: 'tip-loc', text: where }));
    out.push(h('div', { text: `Total ${fmtValue(t.total[i], this.unit)} · ${fmtPct(t.total[i] / all)}` }),
      h('div', { text: `Self ${fmtValue(t.self[i], this.unit)} · ${fmtPct(t.self[i] / all)}` }));
    if (g.zoom > 0 && g === this.graph) {
      out.push(h('div', { text: `${fmtPct(t.total[i] / t.total[g.zoom])} of the zoomed frame` }));
    }
    out.push(h('small', { text: 'click: zoom · shift+click: callers and callees' }));
    return out;
  }

  // "file:line" of a function (by=function views): from the by=frame top list, fetched on
  // the first hover; '' while it loads or when the function has no source line.
  locationsOf(fn) {
    if (this.params.get('by') === 'frame' || fn === 'all' || fn === 'other') return '';
    const src = this.source();
    const args = src.args({ by: 'frame', limit: 10000 });
    const key = src.path('top') + '?' + args;
    if (!this.locs || this.locs.key !== key) {
      this.locs = { key, map: null };
      api.getJSON(src.path('top'), args, api.ticket('locs')).then((j) => {
        if (this.locs.key !== key) return;
        const map = new Map();
        for (const r of j.top) {
          const { fn: f, loc } = splitFrame(r.name);
          if (!loc) continue;
          if (!map.has(f)) map.set(f, []);
          map.get(f).push([loc, r.total]);
        }
        this.locs.map = map;
        this.graph.refreshTip();
        for (const g of this.sandGraphs || []) g.refreshTip();
      }).catch((e) => {
        if (e.name !== 'StaleError') this.locs.map = new Map();
      });
      return 'file:line loading…';
    }
    if (!this.locs.map) return 'file:line loading…';
    const l = this.locs.map.get(fn);
    if (!l) return '';
    l.sort((a, b) => b[1] - a[1]);
    return l.slice(0, 2).map((x) => x[0]).join(', ') + (l.length > 2 ? ` (+${l.length - 2} more lines)` : '');
  }

  async loadSandwich(src, fn, force) {
    const key = fn ? src.path('collapsed') + '?' + src.args({ focus: exactRegex(fn) }) : '';
    if (!force && key === this.keys.sand) return;
    this.keys.sand = key;
    for (const g of this.sandGraphs || []) g.destroy();
    this.sandGraphs = [];
    this.sand = null;
    this.sandTotal = null;
    this.sandEl.hidden = !fn;
    if (!fn) return fill(this.sandEl);
    fill(this.sandEl, h('h2', { text: 'Sandwich: ' + fn }), h('p', { class: 'status', text: 'Loading…' }));
    try {
      const text = await api.getText(src.path('collapsed'), src.args({ focus: exactRegex(fn) }), api.ticket('sand'));
      if (this.blank) return;
      const { callers, callees } = sandwich(text, fn);
      const up = h('div', { class: 'flame-host' }), down = h('div', { class: 'flame-host' });
      this.sand = { fn, callers, callees, view: viewOf(src) };
      this.sandTotal = h('span', { class: 'sand-share' });
      fill(this.sandEl, h('h2', { text: 'Sandwich: ' + fn }),
        h('p', { class: 'sand-total' }, this.sandTotal,
          ' ', h('button', { type: 'button', text: 'Close', onclick: () => this.app.go('flame', withParams(this.params, { fn: null })) })),
        h('h3', { text: 'Callers (who calls it, outward from it)' }), up,
        h('h3', { text: 'Callees (what it calls)' }), down);
      const callersG = new FlameGraph(up, { inverted: true, label: 'Callers of ' + fn, rootName: fn, tooltip: (i) => this.tooltip(callersG, i) });
      const calleesG = new FlameGraph(down, { label: 'Callees of ' + fn, rootName: fn, tooltip: (i) => this.tooltip(calleesG, i) });
      callersG.setTree(callers);
      calleesG.setTree(callees);
      this.sandGraphs = [callersG, calleesG];
      this.sandEl.dataset.callersTotal = String(callers.total[0]);
      this.sandEl.dataset.calleesTotal = String(callees.total[0]);
      this.renderFnShare();
    } catch (e) {
      this.loadFailed(e, src);
    }
  }
}
