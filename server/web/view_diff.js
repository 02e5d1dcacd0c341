// The diff of two profiles (#/diff?base=ID&target=ID) or two selections (base.service=
// &base.from=...&target.service=...): a flamegraph whose widths are the two sides' shares
// and whose colours are the change of share (red: a larger share of the target, green: a
// smaller one, grey: unchanged), and the functions ranked by how much their share moved.
// Parameters besides the sides: metric, q (search), fn (highlighted function), zoom.
import * as api from './api.js';
import { FlameGraph } from './flame.js';
import { fromDiffCollapsed } from './tree.js';
import { SortTable, exportBar, breadcrumb } from './panels.js';
import { selectionOf, describe, isEmpty, FILTERS, TIME_BASES } from './selection.js';
import { h, fill, fmtValue, fmtPct, withParams, debounce } from './util.js';

const SIDES = ['base', 'target'];

export class DiffView {
  constructor(app) {
    this.app = app;
    this.key = '';
    this.services = null;
  }

  mount(main) {
    this.form = h('form', { class: 'diff-form', 'aria-label': 'Diff sides' });
    this.form.addEventListener('submit', (e) => {
      e.preventDefault();
      this.submit();
    });
    this.summary = h('div', { class: 'diff-summary', 'aria-live': 'polite' });
    this.search = h('input', {
      type: 'search', id: 'diff-search', placeholder: 'Search functions  ( / )', 'aria-label': 'Search functions',
      autocomplete: 'off', oninput: debounce(() => this.set({ q: this.search.value }), 150),
    });
    this.matches = h('span', { class: 'matches', 'aria-live': 'polite' });
    this.crumbs = h('nav', { class: 'crumbs', 'aria-label': 'Zoom path' });
    this.msg = h('div', { class: 'flame-msg' });
    this.host = h('div', { class: 'flame-host' });
    this.graph = new FlameGraph(this.host, {
      main: true, label: 'Diff flamegraph', tooltip: (i) => this.tooltip(i),
      onZoom: (i) => {
        this.set({ zoom: i ? JSON.stringify(this.graph.tree.path(i)) : null }, true);
        breadcrumb(this.crumbs, this.graph);
      },
    });
    this.table = new SortTable([
      { key: 'name', label: 'Function' },
      { key: 'base_pct', label: 'Base %', num: true, show: (r) => r.base_pct.toFixed(2) },
      { key: 'target_pct', label: 'Target %', num: true, show: (r) => r.target_pct.toFixed(2) },
      {
        key: 'move', label: 'Change (points)', num: true, get: (r) => Math.abs(r.delta_pct),
        show: (r) => h('span', { class: r.delta_pct > 0 ? 'up' : r.delta_pct < 0 ? 'down' : '', text: signed(r.delta_pct) }),
      },
      // by share, as the Change column (the API's status is of the raw values: a function
      // whose value stayed while the total grew is "same" there, yet its share fell)
      { key: 'status', label: 'Status', get: shareStatus, show: shareStatus },
    ], {
      label: 'Movers', onRow: (r) => this.set({ fn: r.name }),
      onSort: (sort, dir) => this.set({ sort, dir }),
      rowClass: (r) => (r.name === this.params.get('fn') ? 'current' : null),
    });
    this.table.sort = 'move';
    this.exports = h('div');
    this.toolbar = h('div', { class: 'toolbar' }, h('span', { class: 'search-box' }, this.search, this.matches),
      h('button', { type: 'button', class: 'reset-zoom', text: 'Reset zoom', onclick: () => this.graph.reset() }),
      legend());
    this.pane = h('section', { class: 'flame-pane diff-pane', 'aria-label': 'Diff flamegraph' }, this.crumbs, this.msg, this.host);
    this.movers = h('section', { class: 'movers', 'aria-label': 'Movers' }, h('h2', { text: 'Functions that moved most' }), this.table.el);
    main.append(h('div', { class: 'view-head' }, h('h1', { text: 'Diff' })), this.form, this.summary,
      this.toolbar, this.pane, this.movers, this.exports);
    this.clear();
  }

  // Take the shown diff off the page (another one is asked for, or none can be shown): its
  // summary, graph, movers and exports. `loading` keeps the pane for its "Loading…".
  clear(loading = false) {
    this.json = null;
    this.graph.clear();
    fill(this.crumbs);
    fill(this.msg);
    fill(this.summary);
    this.matches.textContent = '';
    this.matches.dataset.count = '';
    this.table.rows = [];
    fill(this.table.el);
    fill(this.exports);
    this.toolbar.hidden = true;
    this.pane.hidden = !loading;
    this.movers.hidden = true;
  }

  unmount() {
    this.graph.destroy();
  }

  set(changes, push = false) {
    this.params = withParams(this.params, changes);
    this.app.record('diff', this.params, push);
    if ('q' in changes || 'fn' in changes) {
      this.applySearch();
      this.table.render();
    }
  }

  // The API parameters of both sides and the metric.
  apiParams() {
    const p = new URLSearchParams();
    for (const s of SIDES) {
      if (this.params.get(s)) p.set(s, this.params.get(s));
      for (const [k, v] of selectionOf(this.params, s + '.')) p.append(s + '.' + k, v);
    }
    if (this.params.get('metric')) p.set('metric', this.params.get('metric'));
    return p;
  }

  sideGiven(s) {
    return this.params.get(s) || !isEmpty(selectionOf(this.params, s + '.'));
  }

  async update(params, force) {
    this.params = params;
    this.search.value = params.get('q') || '';
    if (!this.services) {
      try {
        this.services = (await api.getJSON('services', {}, api.ticket('d-services'))).services;
      } catch (e) {
        if (e.name === 'StaleError') return;
        this.key = '';
        this.clear();
        this.app.fail(e, this.summary);
        return;
      }
    }
    this.renderForm();
    if (!this.sideGiven('base') || !this.sideGiven('target')) {
      this.key = '';
      this.clear();
      fill(this.summary, h('p', { class: 'hint', text: 'Choose a base and a target: two profiles (their ids, or pick two in the Profiles view) or two selections.' }));
      return;
    }
    const p = this.apiParams();
    const key = p.toString();
    this.curlURL = api.apiPath('diff', p);
    if (!force && key === this.key) {
      if (!this.json) return; // still loading, or nothing to compare
      this.applyZoom();
      this.applySearch();
      this.table.set(this.table.rows, params.get('sort'), params.get('dir'));
      return;
    }
    this.key = key;
    // another diff: nothing of the previous one stays shown while this one loads
    this.clear(true);
    this.msg.textContent = 'Loading…';
    try {
      // both fail alike (a missing profile, a bad parameter): Promise.all gives one error
      const [json, folded] = await Promise.all([
        // ranked by the share moved, as the table shows: a function whose value stayed
        // while the total grew has moved, and must not fall past the limit
        api.getJSON('diff', withParams(p, { limit: 1000, sort: 'share' }), api.ticket('diff')),
        api.getText('diff', withParams(p, { format: 'collapsed' }), api.ticket('diff-folded')),
      ]);
      fill(this.msg);
      if (!json.base_total && !json.target_total) { // neither side has anything
        this.clear();
        this.renderSummary(json);
        return;
      }
      this.json = json;
      this.toolbar.hidden = false;
      this.pane.hidden = false;
      this.movers.hidden = false;
      const tree = fromDiffCollapsed(folded);
      this.graph.setTree(tree, this.zoomPath());
      breadcrumb(this.crumbs, this.graph);
      this.applySearch();
      this.renderSummary(json);
      this.table.set(json.functions, params.get('sort'), params.get('dir'));
      this.renderExports(p);
    } catch (e) {
      if (e.name === 'StaleError') return;
      this.clear();
      if (api.noMatch(e)) { // a side's selection matches no stored profile: an answer
        this.renderNothing(e);
        return; // the same sides again: the same answer, not asked twice
      }
      this.key = '';
      this.app.fail(e, this.summary);
    }
  }

  // The relay's 404 for sides whose selection matches no stored profile (its detail names
  // them): each side, which of them matched nothing, and nothing else of a diff.
  renderNothing(e) {
    const empty = (s) => !this.params.get(s) && (e.message.includes(`the ${s} selection`));
    const side = (s) => h('p', {}, h('strong', { text: s === 'base' ? 'Base: ' : 'Target: ' }), this.sideText(s),
      empty(s) ? ' — no stored profile matched this selection' : '');
    fill(this.summary, side('base'), side('target'),
      h('p', { class: 'status nothing' }, 'Nothing to compare: ', e.message,
        '. Change the selection above, or look at what is stored in ', h('a', { href: '#/profiles', text: 'Profiles' }), '.'));
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

  applySearch() {
    if (!this.graph.tree) return;
    const q = (this.params.get('q') || '').trim().toLowerCase();
    const fn = this.params.get('fn');
    const r = q ? this.graph.setSearch((n) => n.toLowerCase().includes(q))
      : fn ? this.graph.setSearch((n) => n === fn) : this.graph.setSearch(null);
    // a node's width is its two shares summed, so the root is 2 and r.share is their mean
    this.matches.textContent = r ? `${r.count} frames match: ${fmtPct(r.share)} (mean of the two sides' shares)` : '';
    this.matches.dataset.count = r ? String(r.count) : '';
  }

  renderSummary(j) {
    this.unit = j.unit || '';
    const change = j.base_total ? (j.target_total - j.base_total) / j.base_total : NaN;
    // a side without samples (a selection that matches nothing is the relay's 404, shown by
    // renderNothing): its profiles hold none, or none of the metric
    const total = (s, v) => (v ? `${fmtValue(v, this.unit)}${j.metric ? ' ' + j.metric : ''}` : 'no samples');
    fill(this.summary,
      h('p', {}, h('strong', { text: 'Base: ' }), this.sideText('base'), ' — ', total('base', j.base_total)),
      h('p', {}, h('strong', { text: 'Target: ' }), this.sideText('target'), ' — ', total('target', j.target_total),
        isFinite(change) ? ` (${change >= 0 ? '+' : ''}${(change * 100).toFixed(1)}% in total)` : ''),
      j.base_total || j.target_total
        ? h('p', { class: 'hint', text: `${j.n_functions} functions compared, shares of each side's own total.` })
        : h('p', { class: 'status nothing', text: 'Nothing to compare: neither side has samples.' }));
  }

  sideText(s) {
    const id = this.params.get(s);
    return id ? 'profile ' + id : describe(selectionOf(this.params, s + '.'));
  }

  tooltip(i) {
    const t = this.graph.tree;
    const name = i === 0 ? 'all' : t.name[i];
    const bs = t.baseTotal ? t.base[i] / t.baseTotal : 0, ts = t.targetTotal ? t.target[i] / t.targetTotal : 0;
    return [h('strong', { class: 'tip-name', text: name }),
      h('div', { text: `Base ${fmtValue(t.base[i], this.unit)} · ${fmtPct(bs)}` }),
      h('div', { text: `Target ${fmtValue(t.target[i], this.unit)} · ${fmtPct(ts)}` }),
      h('div', { class: t.delta[i] > 0 ? 'up' : t.delta[i] < 0 ? 'down' : '', text: `Change ${signed(t.delta[i] * 100)} points` }),
      h('small', { text: 'click: zoom' })];
  }

  renderForm() {
    const p = this.params;
    const metrics = new Set();
    for (const s of this.services) for (const ms of Object.values(s.events || {})) ms.forEach((m) => metrics.add(m));
    if (p.get('metric')) metrics.add(p.get('metric')); // one no service lists: kept, not dropped
    const sides = SIDES.map((s) => this.sideFields(s));
    fill(this.form, sides,
      h('div', { class: 'diff-go' },
        h('label', { class: 'field' }, h('span', { text: 'Metric' }),
          h('select', { name: 'metric', id: 'diff-metric' }, h('option', { value: '', text: "Base's primary" }),
            [...metrics].map((m) => h('option', { value: m, text: m, selected: p.get('metric') === m })))),
        h('button', { type: 'submit', class: 'primary', text: 'Compare' }),
        h('button', {
          type: 'button', text: 'Swap sides',
          onclick: () => {
            const q = new URLSearchParams();
            for (const [k, v] of p) q.append(k.replace(/^(base|target)(?=$|\.)/, (m) => (m === 'base' ? 'target' : 'base')), v);
            this.app.go('diff', q);
          },
        })));
  }

  sideFields(s) {
    const p = this.params;
    const sel = selectionOf(p, s + '.');
    const mode = p.get(s) || (isEmpty(sel) && p.get(s === 'base' ? 'target' : 'base')) ? 'profile' : 'selection';
    const fields = h('div', { class: 'side-fields' });
    const input = (name, label, value, placeholder) => h('label', { class: 'field' }, h('span', { text: label }),
      h('input', { name: s + '.' + name, value: value || '', placeholder, autocomplete: 'off' }));
    const profile = h('div', { class: 'side-profile', hidden: mode !== 'profile' },
      h('label', { class: 'field' }, h('span', { text: 'Profile id' }),
        h('input', { name: s, value: p.get(s) || '', placeholder: '32 hex digits', autocomplete: 'off' })));
    // a value the lists do not hold (a service with nothing stored, an event of none) is an
    // option too: the form keeps every filter of the URL when it is submitted again
    const choices = (name, label, values, value, any) => h('label', { class: 'field' }, h('span', { text: label }),
      h('select', { name: s + '.' + name }, h('option', { value: '', text: any }),
        [...new Set([...values, ...(value ? [value] : [])])].map((v) => h('option', { value: v, text: v, selected: value === v }))));
    const events = new Set();
    for (const x of this.services) Object.keys(x.events || {}).forEach((e) => events.add(e));
    const selection = h('div', { class: 'side-selection', hidden: mode !== 'selection' },
      choices('service', 'Service', this.services.map((x) => x.name), sel.get('service'), 'Any'),
      choices('event', 'Event', [...events], sel.get('event'), 'Any'),
      input('from', 'From', sel.get('from'), 'now-2h, 2024-05-01T12:00:00Z'),
      input('to', 'To', sel.get('to'), 'now-1h'),
      h('label', { class: 'field' }, h('span', { text: 'Time on' }),
        h('select', { name: s + '.time' }, TIME_BASES.map(([v, t]) => h('option', { value: v, text: t, selected: (sel.get('time') || '') === v })))),
      input('labels', 'Labels', sel.getAll('label').join(','), 'env:prod,region:eu'),
      input('source', 'Source', sel.get('source'), 'pprof'));
    const radio = (v, text) => h('label', { class: 'radio' }, h('input', {
      type: 'radio', name: s + '-mode', value: v, checked: mode === v,
      onchange: () => {
        profile.hidden = v !== 'profile';
        selection.hidden = v !== 'selection';
      },
    }), text);
    fields.append(profile, selection);
    return h('fieldset', { class: 'side side-' + s }, h('legend', { text: s === 'base' ? 'Base (before)' : 'Target (after)' }),
      h('div', { class: 'radios' }, radio('selection', 'A selection'), radio('profile', 'A profile')), fields);
  }

  submit() {
    const f = new FormData(this.form);
    const out = new URLSearchParams();
    for (const s of SIDES) {
      if (f.get(s + '-mode') === 'profile') {
        if (f.get(s)) out.set(s, f.get(s).trim());
        continue;
      }
      for (const k of FILTERS) {
        const v = (f.get(s + '.' + k) || '').trim();
        if (v) out.set(s + '.' + k, v);
      }
      for (const l of (f.get(s + '.labels') || '').split(',')) if (l.trim()) out.append(s + '.label', l.trim());
    }
    if (f.get('metric')) out.set('metric', f.get('metric'));
    this.app.go('diff', out);
  }

  renderExports(p) {
    fill(this.exports, exportBar([
      ['diff (collapsed)', api.apiPath('diff', withParams(p, { format: 'collapsed' })), 'diff.folded'],
      ['diff (JSON)', api.apiPath('diff', p), 'diff.json'],
      ['summary', api.apiPath('diff', withParams(p, { format: 'summary' })), 'diff.txt'],
    ], () => this.curlURL));
  }
}

// new and gone as the API says; else whether the share grew, fell or stayed (to the
// hundredth of a point the Change column shows)
function shareStatus(r) {
  if (r.status === 'new' || r.status === 'gone') return r.status;
  return r.delta_pct > 0 ? 'share up' : r.delta_pct < 0 ? 'share down' : 'same';
}

function signed(x) {
  return (x > 0 ? '+' : x < 0 ? '−' : '±') + Math.abs(x).toFixed(2);
}

function legend() {
  return h('span', { class: 'legend', 'aria-label': 'Colours' },
    h('span', { class: 'swatch up-bg' }), 'larger share in target ',
    h('span', { class: 'swatch down-bg' }), 'smaller ',
    h('span', { class: 'swatch same-bg' }), 'unchanged (< 0.1 point)');
}
