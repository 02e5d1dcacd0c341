// Parts the flamegraph and diff views share: a sortable table (the top functions, the diff's
// movers), the export links with copy-as-curl, and the zoom breadcrumb.
import * as api from './api.js';
import { h, fill } from './util.js';

// A table sorted by clicking its column headers. columns: [{key, label, num, get(row),
// show(row) -> text or Node, desc (first click sorts descending)}]. onRow(row) when a row's
// button is pressed (the first column is a button: keyboard reachable).
export class SortTable {
  constructor(columns, { onRow, onSort, label, rowClass } = {}) {
    this.columns = columns;
    this.onRow = onRow;
    this.onSort = onSort;
    this.rowClass = rowClass;
    this.rows = [];
    this.sort = columns.find((c) => c.num)?.key || columns[0].key;
    this.dir = 'desc';
    this.limit = 300;
    this.el = h('div', { class: 'table-wrap sort-table', role: 'region', 'aria-label': label || 'Table', tabindex: '0' });
  }

  set(rows, sort, dir) {
    this.rows = rows;
    if (sort && this.columns.some((c) => c.key === sort)) this.sort = sort;
    if (dir === 'asc' || dir === 'desc') this.dir = dir;
    this.render();
  }

  sorted() {
    const col = this.columns.find((c) => c.key === this.sort);
    const get = col.get || ((r) => r[col.key]);
    const m = this.dir === 'asc' ? 1 : -1;
    return [...this.rows].sort((a, b) => {
      const x = get(a), y = get(b);
      return (x < y ? -1 : x > y ? 1 : 0) * m;
    });
  }

  render() {
    const rows = this.sorted();
    const head = this.columns.map((c) => {
      const active = c.key === this.sort;
      return h('th', {
        scope: 'col', class: c.num ? 'num' : null,
        'aria-sort': active ? (this.dir === 'asc' ? 'ascending' : 'descending') : 'none',
      }, h('button', {
        type: 'button', class: 'sort', 'data-key': c.key,
        text: c.label + (active ? (this.dir === 'asc' ? ' ▲' : ' ▼') : ''),
        onclick: () => {
          this.dir = active ? (this.dir === 'asc' ? 'desc' : 'asc') : (c.num ? 'desc' : 'asc');
          this.sort = c.key;
          this.render();
          if (this.onSort) this.onSort(this.sort, this.dir);
        },
      }));
    });
    const body = rows.slice(0, this.limit).map((r) => h('tr', { class: this.rowClass ? this.rowClass(r) : null },
      this.columns.map((c, i) => {
        const v = c.show ? c.show(r) : r[c.key];
        if (i === 0 && this.onRow) {
          return h('th', { scope: 'row' }, h('button', {
            type: 'button', class: 'row-button', title: String(r[c.key]), onclick: () => this.onRow(r),
          }, v));
        }
        return h('td', { class: c.num ? 'num' : null }, v);
      })));
    const more = rows.length > this.limit ? h('button', {
      type: 'button', class: 'more', text: `Show ${Math.min(300, rows.length - this.limit)} more of ${rows.length - this.limit}`,
      onclick: () => {
        this.limit += 300;
        this.render();
      },
    }) : '';
    fill(this.el, h('table', { class: 'grid' }, h('thead', {}, h('tr', {}, head)), h('tbody', {}, body)), more);
  }
}

// Export links (each [label, relative URL, file name] or [label, null, why not]) and a
// copy-as-curl button for the URL `curlOf()` gives.
export function exportBar(links, curlOf) {
  const out = h('output', { class: 'curl', hidden: true });
  const items = links.map(([label, rel, file]) => rel
    ? h('a', {
      class: 'button export', href: rel, download: file, 'data-export': label,
      onclick: async (e) => {
        if (!api.token()) return; // open relay: the browser follows the link
        e.preventDefault();
        try {
          await api.download(rel, file);
        } catch (err) {
          fill(out, 'Download failed: ' + err.message);
          out.hidden = false;
        }
      },
    }, label)
    : h('span', { class: 'button export disabled', 'aria-disabled': 'true', title: file, text: label }));
  const copy = h('button', {
    type: 'button', class: 'copy-curl', text: 'Copy as curl',
    onclick: async () => {
      const cmd = api.curlCommand(curlOf());
      fill(out, h('code', { text: cmd }));
      out.hidden = false;
      let copied = false;
      try {
        if (navigator.clipboard && window.isSecureContext) {
          await navigator.clipboard.writeText(cmd);
          copied = true;
        }
      } catch {
        copied = false;
      }
      copy.textContent = copied ? 'Copied' : 'Copy as curl';
      if (!copied) { // no clipboard here: select the command for Ctrl+C
        const r = document.createRange();
        r.selectNodeContents(out);
        getSelection().removeAllRanges();
        getSelection().addRange(r);
      }
    },
  });
  return h('div', { class: 'exports' }, h('span', { class: 'exports-label', text: 'Export:' }), items, copy, out);
}

// "all › a › b" buttons zooming to each ancestor of the zoomed node of `graph`.
export function breadcrumb(el, graph) {
  const t = graph.tree;
  if (!t) return fill(el);
  const chain = [];
  for (let i = graph.zoom; i >= 0; i = t.parent[i]) chain.push(i);
  chain.reverse();
  return fill(el, chain.map((i, k) => [k ? h('span', { class: 'sep', 'aria-hidden': 'true', text: '›' }) : '',
    h('button', {
      type: 'button', class: 'crumb', 'aria-current': i === graph.zoom ? 'true' : null,
      text: i === 0 ? 'all' : t.name[i], onclick: () => graph.zoomTo(i),
    })]));
}
