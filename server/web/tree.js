// Flamegraph trees as flat arrays in pre-order (a node's subtree is the index range
// [i, end[i])), built from the API's nested flamegraph JSON, from collapsed stacks, from a
// diff's two-column collapsed stacks, or as the two halves of a sandwich. Each node has a
// start (its offset from the root's left edge, in value units), total and self; children
// are laid out left to right, heaviest first.

export class Tree {
  constructor(cap) {
    this.n = 0;
    this.name = [];
    this.depth = new Int32Array(cap);
    this.parent = new Int32Array(cap);
    this.end = new Int32Array(cap);
    this.start = new Float64Array(cap);
    this.total = new Float64Array(cap);
    this.self = new Float64Array(cap);
    this.other = new Uint8Array(cap); // 1: an "other" node of the API (lighter frames merged)
    this.merged = [];  // "other" nodes: how many of the whole tree's nodes they stand for
    this.maxDepth = 0;
    this.base = null;   // diff trees: each side's raw value per node
    this.target = null;
  }

  push(name, depth, parent, start, total, self) {
    const i = this.n++;
    this.name.push(name);
    this.depth[i] = depth;
    this.parent[i] = parent;
    this.start[i] = start;
    this.total[i] = total;
    this.self[i] = self;
    if (depth > this.maxDepth) this.maxDepth = depth;
    return i;
  }

  // Names from the root to node i (the root excluded).
  path(i) {
    const out = [];
    for (; i > 0; i = this.parent[i]) out.push(this.name[i]);
    return out.reverse();
  }

  // The node at a path of names from the root, or -1.
  find(path) {
    let i = 0;
    for (const name of path) {
      let c = i + 1, found = -1;
      while (c < this.end[i]) {
        if (this.name[c] === name) {
          found = c;
          break;
        }
        c = this.end[c];
      }
      if (found < 0) return -1;
      i = found;
    }
    return i;
  }

  // Children of i, in order.
  children(i) {
    const out = [];
    for (let c = i + 1; c < this.end[i]; c = this.end[c]) out.push(c);
    return out;
  }

  // Flags of the nodes whose name `test` accepts, and the share of the root's total they
  // cover (a match inside a match counted once).
  search(test) {
    const hit = new Uint8Array(this.n);
    let count = 0, value = 0, until = 0;
    for (let i = 0; i < this.n; i++) {
      if (i > 0 && test(this.name[i])) {
        hit[i] = 1;
        count++;
        if (i >= until) {
          value += this.total[i];
          until = this.end[i];
        }
      }
    }
    const all = this.total[0];
    return { hit, count, value, share: all > 0 ? value / all : 0 };
  }
}

// The API's {"tree":{"name","self","total","children":[...]}} as a Tree.
export function fromApiTree(json) {
  const root = json.tree;
  const tree = new Tree(Math.max(1, (json.nodes || 0) + 1));
  const stack = [[root, 0, -1, 0]];
  const open = []; // indexes whose end is pending, by depth
  while (stack.length) {
    const [node, depth, parent, start] = stack.pop();
    while (open.length > depth) tree.end[open.pop()] = tree.n;
    const i = grow(tree).push(node.name, depth, parent, start, node.total, node.self);
    if (node.merged !== undefined) {
      tree.other[i] = 1;
      tree.merged[i] = node.merged;
    }
    open.push(i);
    const kids = node.children || [];
    let x = start, starts = [];
    for (const k of kids) {
      starts.push(x);
      x += k.total;
    }
    for (let k = kids.length - 1; k >= 0; k--) stack.push([kids[k], depth + 1, i, starts[k]]);
  }
  while (open.length) tree.end[open.pop()] = tree.n;
  return tree;
}

// Make room for one more node.
function grow(tree) {
  if (tree.n < tree.depth.length) return tree;
  const cap = tree.depth.length * 2;
  for (const k of ['depth', 'parent', 'end']) {
    const a = new Int32Array(cap);
    a.set(tree[k]);
    tree[k] = a;
  }
  const o = new Uint8Array(cap);
  o.set(tree.other);
  tree.other = o;
  for (const k of ['start', 'total', 'self', 'base', 'target']) {
    if (!tree[k]) continue;
    const a = new Float64Array(cap);
    a.set(tree[k]);
    tree[k] = a;
  }
  return tree;
}

// A trie of stacks: node = {name, v: [values...], kids: Map}.
class Trie {
  constructor(width) {
    this.width = width;
    this.root = { name: 'root', v: new Float64Array(width), self: new Float64Array(width), kids: new Map() };
    this.count = 1;
  }

  add(frames, values) {
    let node = this.root;
    for (let k = 0; k < this.width; k++) node.v[k] += values[k];
    for (const f of frames) {
      let c = node.kids.get(f);
      if (!c) {
        c = { name: f, v: new Float64Array(this.width), self: new Float64Array(this.width), kids: new Map() };
        node.kids.set(f, c);
        this.count++;
      }
      for (let k = 0; k < this.width; k++) c.v[k] += values[k];
      node = c;
    }
    for (let k = 0; k < this.width; k++) node.self[k] += values[k];
  }

  // Flatten into a Tree whose total is weigh(node.v) (self likewise), heaviest first.
  flatten(weigh, keep) {
    const tree = new Tree(this.count);
    const walk = (node, depth, parent, start) => {
      const i = tree.push(node.name, depth, parent, start, weigh(node.v), weigh(node.self));
      if (keep) keep(tree, i, node);
      const kids = [...node.kids.values()].map((c) => [weigh(c.v), c]);
      kids.sort((a, b) => b[0] - a[0] || (a[1].name < b[1].name ? -1 : 1));
      let x = start;
      for (const [w, c] of kids) {
        walk(c, depth + 1, i, x);
        x += w;
      }
      tree.end[i] = tree.n;
    };
    walk(this.root, 0, -1, 0);
    return tree;
  }
}

// "a;b;c 12" lines (root first) as a Tree.
export function fromCollapsed(text) {
  const trie = new Trie(1);
  const v = [0];
  for (const line of text.split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    v[0] = Number(line.slice(sp + 1));
    if (!isFinite(v[0])) continue;
    trie.add(line.slice(0, sp).split(';'), v);
  }
  return trie.flatten((x) => x[0]);
}

// The diff's "path base target" lines as a Tree whose widths are the two sides' shares
// summed (each side normalized by its own total, so a side twice as large does not look
// twice as slow); base and target keep the raw values, delta is the change of share.
export function fromDiffCollapsed(text) {
  const trie = new Trie(2);
  const v = [0, 0];
  for (const line of text.split('\n')) {
    const b = line.lastIndexOf(' ');
    const a = b > 0 ? line.lastIndexOf(' ', b - 1) : -1;
    if (a <= 0) continue;
    v[0] = Number(line.slice(a + 1, b));
    v[1] = Number(line.slice(b + 1));
    if (!isFinite(v[0]) || !isFinite(v[1])) continue;
    trie.add(line.slice(0, a).split(';'), v);
  }
  const bt = trie.root.v[0] || 1, tt = trie.root.v[1] || 1;
  let base = [], target = [];
  const tree = trie.flatten((x) => x[0] / bt + x[1] / tt, (t, i, node) => {
    base[i] = node.v[0];
    target[i] = node.v[1];
  });
  tree.base = Float64Array.from(base);
  tree.target = Float64Array.from(target);
  tree.baseTotal = trie.root.v[0];
  tree.targetTotal = trie.root.v[1];
  tree.delta = new Float64Array(tree.n);
  for (let i = 0; i < tree.n; i++) {
    tree.delta[i] = (trie.root.v[1] ? tree.target[i] / tt : 0) - (trie.root.v[0] ? tree.base[i] / bt : 0);
  }
  return tree;
}

// The sandwich of function fn from collapsed stacks that go through it: callers (fn at the
// root, its callers as children, outward) and callees (fn at the root, what it calls). The
// first (outermost) appearance in each stack is used, so both roots' totals are fn's total
// as the top table counts it (a stack once however often fn recurs in it).
export function sandwich(text, fn) {
  const want = fn.replace(/;/g, ':'); // collapsed stacks write ';' in a name as ':'
  const callers = new Trie(1), callees = new Trie(1);
  const v = [0];
  for (const line of text.split('\n')) {
    const sp = line.lastIndexOf(' ');
    if (sp <= 0) continue;
    const frames = line.slice(0, sp).split(';');
    const at = frames.indexOf(want);
    if (at < 0) continue;
    v[0] = Number(line.slice(sp + 1));
    if (!isFinite(v[0])) continue;
    callers.add(frames.slice(0, at + 1).reverse(), v);
    callees.add(frames.slice(at), v);
  }
  // the tries' roots are synthetic: fn itself, their only child, becomes the root
  for (const t of [callers, callees]) {
    if (t.root.kids.size === 1) t.root = t.root.kids.values().next().value;
  }
  return { callers: callers.flatten((x) => x[0]), callees: callees.flatten((x) => x[0]) };
}
