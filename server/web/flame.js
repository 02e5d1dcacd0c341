// The flamegraph on a canvas: an icicle (root on top; `inverted` puts it at the bottom, for
// callers), widths by total, click to zoom (an ancestor bar zooms back out), hover or
// keyboard cursor with a tooltip, search highlighting, diff colouring by change of share.
// Every draw records each node's geometry for hit-testing and for the debug hook.
import { h, nameColor, debugHook } from './util.js';

const ROW = 18;        // row height, CSS pixels
const MIN_W = 0.35;    // narrower nodes (and their subtrees) are not drawn
const FONT = '12px ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace';

export class FlameGraph {
  // host: the element to draw in. opts: {label, inverted, tooltip(i) -> Node[],
  // onZoom(i), onPick(i) (Shift+click or "s": a function chosen; never the root nor an
  // "other" node, which stands for many), main (the debug hook's)}
  constructor(host, opts = {}) {
    this.opts = opts;
    this.tree = null;
    this.zoom = 0;
    this.cursor = -1;
    this.hit = null;
    this.draws = 0;
    this.canvas = h('canvas', {
      class: 'flame-canvas', tabindex: '0', role: 'img', 'aria-describedby': 'tooltip',
      'aria-label': (opts.label || 'Flamegraph') +
        ': arrow keys move, Enter zooms, Escape resets, S opens the sandwich',
    });
    this.tip = document.getElementById('tooltip');
    this.empty = h('p', { class: 'flame-empty', hidden: true, text: 'Nothing to draw: no samples.' });
    host.append(this.canvas, this.empty);
    this.host = host;
    this.canvas.addEventListener('mousemove', (e) => this.onMove(e));
    this.canvas.addEventListener('mouseleave', () => this.hideTip());
    this.canvas.addEventListener('click', (e) => this.onClick(e));
    this.canvas.addEventListener('keydown', (e) => this.onKey(e));
    this.canvas.addEventListener('blur', () => this.hideTip());
    this.width = 0;
    this.ro = new ResizeObserver(() => {
      if (this.host.clientWidth !== this.width) this.draw();
    });
    this.ro.observe(host);
    if (opts.main) debugHook().main = this;
  }

  destroy() {
    this.ro.disconnect();
    this.hideTip();
    if (debugHook().main === this) debugHook().main = null;
  }

  // A new tree; zoom to the node at `zoomPath` (names from the root) when there is one.
  setTree(tree, zoomPath) {
    this.tree = tree;
    this.hit = null;
    this.colors = new Array(tree.n);
    const z = zoomPath && zoomPath.length ? tree.find(zoomPath) : 0;
    this.zoom = z > 0 ? z : 0;
    this.cursor = -1;
    this.draw();
  }

  // Drop the tree (a load that failed or found nothing): nothing drawn, nothing to hover.
  clear() {
    this.tree = null;
    this.hit = null;
    this.zoom = 0;
    this.cursor = -1;
    this.nrows = 0;
    this.hideTip();
    this.empty.hidden = true;
    this.canvas.width = 0;
    this.canvas.height = 0;
    this.canvas.style.height = '0px';
  }

  // Highlight the nodes `test` accepts (null: none); returns {count, value, share}.
  setSearch(test) {
    if (!this.tree) return null;
    const r = test ? this.tree.search(test) : null;
    this.hit = r ? r.hit : null;
    this.draw();
    return r;
  }

  zoomTo(i, notify = true) {
    if (!this.tree || i < 0 || i >= this.tree.n) return;
    this.zoom = i;
    this.cursor = i;
    this.draw();
    if (notify && this.opts.onZoom) this.opts.onZoom(i);
  }

  reset() {
    this.zoomTo(0);
  }

  // The rows shown: the zoomed node's ancestors, then its subtree down to the deepest node
  // wide enough to draw at width W.
  rows(W) {
    const t = this.tree, z = this.zoom, scale = W / t.total[z];
    let d = t.depth[z];
    for (let i = z; i < t.end[z];) {
      if (t.total[i] * scale < MIN_W) {
        i = t.end[i];
        continue;
      }
      if (t.depth[i] > d) d = t.depth[i];
      i++;
    }
    return d + 1;
  }

  rowOf(depth) {
    return this.opts.inverted ? this.nrows - 1 - depth : depth;
  }

  draw() {
    const t = this.tree;
    if (!t) return;
    const t0 = performance.now();
    const W = Math.max(100, this.host.clientWidth);
    this.width = this.host.clientWidth;
    this.empty.hidden = t.total[0] > 0;
    this.nrows = t.total[0] > 0 ? this.rows(W) : 0;
    const H = this.nrows * ROW;
    const dpr = window.devicePixelRatio || 1;
    const c = this.canvas;
    c.width = Math.round(W * dpr);
    c.height = Math.max(1, Math.round(H * dpr));
    c.style.width = W + 'px';
    c.style.height = H + 'px';
    const g = c.getContext('2d');
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    g.clearRect(0, 0, W, H);
    g.font = FONT;
    g.textBaseline = 'middle';
    this.charW = g.measureText('mmmmmmmmmm').width / 10;
    this.x = new Float32Array(t.n).fill(NaN);
    this.w = new Float32Array(t.n);
    if (t.total[0] > 0) this.paint(g, W);
    this.draws++;
    this.drawMs = performance.now() - t0;
    if (this.opts.main) {
      const d = debugHook();
      d.draws = (d.draws || 0) + 1;
      d.drawnAt = performance.now();
      performance.mark('spaa-flame-drawn');
    }
  }

  paint(g, W) {
    const t = this.tree, z = this.zoom;
    const x0 = t.start[z], scale = W / t.total[z];
    for (let a = t.parent[z]; a >= 0; a = t.parent[a]) this.rect(g, a, 0, W, true);
    for (let i = z; i < t.end[z];) {
      const w = t.total[i] * scale;
      if (w < MIN_W) {
        i = t.end[i];
        continue;
      }
      this.rect(g, i, (t.start[i] - x0) * scale, w, false);
      i++;
    }
  }

  color(i) {
    const t = this.tree;
    if (t.delta) return deltaColor(t, i);
    if (this.hit) return this.hit[i] ? '#c026d3' : (i === 0 ? '#d4d4d8' : '#e7e2dc');
    if (i === 0) return '#c8c8d0';
    return this.colors[i] || (this.colors[i] = nameColor(t.name[i]));
  }

  rect(g, i, x, w, ancestor) {
    const t = this.tree;
    const y = this.rowOf(t.depth[i]) * ROW;
    this.x[i] = x;
    this.w[i] = w;
    g.globalAlpha = ancestor ? 0.55 : 1;
    g.fillStyle = this.color(i);
    g.fillRect(x, y, Math.max(w - (w > 3 ? 1 : 0), 0.5), ROW - 1);
    if (this.hit && this.hit[i] && t.delta) { // diff: matches outlined, colours kept
      g.strokeStyle = '#c026d3';
      g.lineWidth = 2;
      g.strokeRect(x + 1, y + 1, w - 3, ROW - 3);
    }
    if (i === this.cursor && document.activeElement === this.canvas) {
      g.strokeStyle = '#111';
      g.lineWidth = 2;
      g.strokeRect(x + 1, y + 1, Math.max(w - 3, 1), ROW - 3);
    }
    g.globalAlpha = 1;
    const room = Math.floor((w - 6) / this.charW);
    if (room >= 3) {
      const name = i === 0 ? (this.opts.rootName || 'all') : t.name[i];
      g.fillStyle = this.hit && this.hit[i] && !t.delta ? '#fff' : '#1c1917';
      g.fillText(name.length > room ? name.slice(0, room - 1) + '…' : name, x + 3, y + ROW / 2);
    }
  }

  // The node under canvas point (px, py), or -1.
  nodeAt(px, py) {
    const t = this.tree;
    if (!t || !this.nrows) return -1;
    const row = Math.floor(py / ROW);
    const depth = this.opts.inverted ? this.nrows - 1 - row : row;
    if (depth < 0 || depth >= this.nrows) return -1;
    if (depth < t.depth[this.zoom]) { // an ancestor bar
      let a = this.zoom;
      while (t.depth[a] > depth) a = t.parent[a];
      return a;
    }
    let i = this.zoom;
    while (t.depth[i] < depth) {
      let next = -1;
      for (let c = i + 1; c < t.end[i]; c = t.end[c]) {
        if (!isNaN(this.x[c]) && px >= this.x[c] && px < this.x[c] + this.w[c]) {
          next = c;
          break;
        }
      }
      if (next < 0) return -1;
      i = next;
    }
    return !isNaN(this.x[i]) && px >= this.x[i] && px < this.x[i] + this.w[i] ? i : -1;
  }

  point(e) {
    const r = this.canvas.getBoundingClientRect();
    return [e.clientX - r.left, e.clientY - r.top];
  }

  onMove(e) {
    const i = this.nodeAt(...this.point(e));
    this.canvas.style.cursor = i >= 0 ? 'pointer' : 'default';
    if (i < 0) this.hideTip();
    else this.showTip(i, e.clientX, e.clientY);
  }

  onClick(e) {
    const i = this.nodeAt(...this.point(e));
    if (i < 0) return;
    if (e.shiftKey) {
      if (this.pickable(i)) this.opts.onPick(i);
    } else this.zoomTo(i);
  }

  onKey(e) {
    const t = this.tree;
    if (!t || !t.n) return;
    let i = this.cursor >= 0 ? this.cursor : this.zoom;
    const up = this.opts.inverted ? 'ArrowDown' : 'ArrowUp';
    const down = this.opts.inverted ? 'ArrowUp' : 'ArrowDown';
    if (e.key === up) i = t.parent[i] >= 0 ? t.parent[i] : i;
    else if (e.key === down) i = i + 1 < t.end[i] && this.visible(i + 1) ? i + 1 : i;
    else if (e.key === 'ArrowLeft' || e.key === 'ArrowRight') i = this.sibling(i, e.key === 'ArrowRight');
    else if (e.key === 'Enter' || e.key === ' ') {
      this.zoomTo(i);
      i = this.cursor;
    } else if (e.key === 'Escape') {
      this.reset();
      i = 0;
    } else if (e.key === 's' || e.key === 'S') {
      if (this.pickable(i)) this.opts.onPick(i);
    } else return;
    e.preventDefault();
    this.cursor = i;
    this.draw();
    const r = this.canvas.getBoundingClientRect();
    if (!isNaN(this.x[i])) {
      this.showTip(i, r.left + this.x[i] + Math.min(this.w[i], 40),
        r.top + this.rowOf(t.depth[i]) * ROW + ROW);
    }
  }

  // Whether node i can be picked (Shift+click, "s"): a function, not the root nor an "other"
  // node, which stands for many.
  pickable(i) {
    return !!this.opts.onPick && i > 0 && !this.tree.other[i];
  }

  visible(i) {
    return !isNaN(this.x[i]);
  }

  // The previous or next drawn node on i's row, in the zoomed view.
  sibling(i, next) {
    const t = this.tree, d = t.depth[i];
    if (d <= t.depth[this.zoom]) return i;
    const step = next ? 1 : -1;
    for (let j = i + step; j >= this.zoom && j < t.end[this.zoom]; j += step) {
      if (t.depth[j] === d && this.visible(j)) return j;
    }
    return i;
  }

  showTip(i, cx, cy) {
    if (!this.opts.tooltip || !this.tip) return;
    this.tipAt = [i, cx, cy];
    this.tip.replaceChildren(...this.opts.tooltip(i));
    this.tip.hidden = false;
    const r = this.tip.getBoundingClientRect();
    const x = cx + 14 + r.width > window.innerWidth ? Math.max(4, cx - 14 - r.width) : cx + 14;
    const y = cy + 14 + r.height > window.innerHeight ? Math.max(4, cy - 14 - r.height) : cy + 14;
    this.tip.style.left = x + 'px';
    this.tip.style.top = y + 'px';
  }

  hideTip() {
    this.tipAt = null;
    if (this.tip) this.tip.hidden = true;
  }

  // Fill the shown tooltip again (what it says has arrived since).
  refreshTip() {
    if (this.tipAt && this.tip && !this.tip.hidden) this.showTip(...this.tipAt);
  }

  // Every node with its last drawn geometry (x, w in CSS pixels; drawn false when it was
  // too thin or outside the zoom), for tests.
  debugNodes() {
    const t = this.tree;
    if (!t) return [];
    const out = [];
    for (let i = 0; i < t.n; i++) {
      out.push({
        name: t.name[i], depth: t.depth[i], self: t.self[i], total: t.total[i],
        x: this.x[i], w: this.w[i], drawn: !isNaN(this.x[i]), match: !!(this.hit && this.hit[i]),
        other: !!t.other[i],
        delta: t.delta ? t.delta[i] : undefined,
      });
    }
    return out;
  }
}

// Diff colours: red where the share grew, green where it shrank, grey when it moved by
// less than 0.1 point of the total; the stronger, the larger the change against the largest.
function deltaColor(t, i) {
  if (!t.maxDelta) {
    let m = 0;
    for (let k = 1; k < t.n; k++) m = Math.max(m, Math.abs(t.delta[k]));
    t.maxDelta = m || 1;
  }
  const d = t.delta[i];
  if (Math.abs(d) < 0.001) return '#d6d3d1';
  const s = Math.min(1, Math.abs(d) / t.maxDelta);
  const light = Math.round(88 - 42 * Math.sqrt(s));
  return d > 0 ? `hsl(0 80% ${light}%)` : `hsl(130 55% ${light}%)`;
}
