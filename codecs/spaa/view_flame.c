/* The flamegraph view (view.h): the call tree of a stack set, laid out within a node budget by
 * merging a node's light children into one "other" node whose children are theirs merged by
 * name, so that every stack is still drawn to its leaf (cut only when the budget is below the
 * depth of the deepest stack), written as nested JSON to a sink in bounded pieces. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/idmap.h"
#include "spaa/view.h"

#define FLAME_FLUSH (1 << 16)
#define NONE UINT32_MAX /* no tree node: the end of a link */

/* A node of the call tree as it is built: the stacks whose paths begin with its path. */
struct fnode {
  uint32_t name;         /* index in the set's names (the root's unused) */
  uint32_t depth;        /* the root's is 0 */
  uint32_t kid, next;    /* first child, next sibling (NONE: none), in no particular order */
  spaa_vnum self, total; /* the stacks that end here; every stack through here */
};

/* A node of the built tree, renumbered breadth first: its children are consecutive nodes,
 * which the layout's passes read in turn rather than chasing links across memory. */
struct cnode {
  uint32_t name;         /* index in the set's names (the root's unused) */
  uint32_t depth;        /* the root's is 0 */
  uint32_t parent;       /* the root's is 0 */
  uint32_t first, nkids; /* its children: c[first .. first + nkids) */
  spaa_vnum self, total;
};

struct ftree {
  struct fnode *n;       /* while building: len nodes, n[0] the root */
  size_t len, cap;
  struct cnode *c;       /* once built: the same len nodes, breadth first, c[0] the root */
  uint32_t depth;        /* the deepest node's depth */
  const struct spaa_vset *v;
};

/* The child of `parent` named `name`, made when missing. 0 or SPAA_E_NOMEM. */
static int tree_child(struct ftree *t, struct spaa_idmap *ix, uint32_t parent, uint32_t name,
                      uint32_t *out)
{
  uint64_t key = ((uint64_t)parent << 32) | name;
  struct fnode *f;
  size_t at;
  if (spaa_idmap_get(ix, key, &at)) {
    *out = (uint32_t)at;
    return 0;
  }
  if (t->len >= NONE) /* links are 32 bits: more nodes than any memory holds anyway */
    return SPAA_E_NOMEM;
  if (t->len == t->cap) {
    size_t cap = t->cap * 2;
    struct fnode *a = realloc(t->n, cap * sizeof(*a));
    if (!a)
      return SPAA_E_NOMEM;
    t->n = a;
    t->cap = cap;
  }
  if (spaa_idmap_put(ix, key, t->len, NULL) < 0)
    return SPAA_E_NOMEM;
  f = &t->n[t->len];
  memset(f, 0, sizeof(*f));
  f->name = name;
  f->depth = t->n[parent].depth + 1;
  f->kid = NONE;
  f->next = t->n[parent].kid;
  t->n[parent].kid = (uint32_t)t->len;
  if (f->depth > t->depth)
    t->depth = f->depth;
  *out = (uint32_t)t->len++;
  return 0;
}

/* Renumber the built tree breadth first into t->c and release t->n. 0 or SPAA_E_NOMEM. */
static int tree_compact(struct ftree *t)
{
  struct cnode *c = malloc(t->len * sizeof(*c));
  uint32_t *q = malloc(t->len * sizeof(*q)); /* the built node at each new place */
  size_t head, tail = 1;
  uint32_t k;
  if (!c || !q) {
    free(c);
    free(q);
    return SPAA_E_NOMEM;
  }
  q[0] = 0;
  c[0].parent = 0;
  for (head = 0; head < tail; head++) {
    const struct fnode *f = &t->n[q[head]];
    struct cnode *x = &c[head];
    x->name = f->name;
    x->depth = f->depth;
    x->self = f->self;
    x->total = f->total;
    x->first = (uint32_t)tail;
    x->nkids = 0;
    for (k = f->kid; k != NONE; k = t->n[k].next) {
      c[tail].parent = (uint32_t)head;
      q[tail++] = k;
      x->nkids++;
    }
  }
  free(q);
  free(t->n);
  t->n = NULL;
  t->c = c;
  return 0;
}

static int tree_build(struct ftree *t)
{
  struct spaa_idmap ix;
  size_t i, j;
  uint32_t at;
  int rc = 0;
  spaa_idmap_init(&ix);
  t->cap = 256;
  if (!(t->n = calloc(t->cap, sizeof(*t->n))))
    return SPAA_E_NOMEM;
  t->len = 1;
  t->n[0].kid = t->n[0].next = NONE;
  for (i = 0; i < t->v->n_stacks && !rc; i++) {
    const struct spaa_vstack *s = &t->v->stacks[i];
    at = 0;
    t->n[0].total += s->value;
    for (j = 0; j < s->n && !rc; j++) {
      rc = tree_child(t, &ix, at, s->path[j], &at);
      if (!rc)
        t->n[at].total += s->value;
    }
    if (!rc)
      t->n[at].self += s->value;
  }
  spaa_idmap_free(&ix);
  return rc ? rc : tree_compact(t);
}

/* ---- ranks: the tree's nodes heaviest first ---------------------------------------------- */

/* A node as the ranking sorts it (qsort has no context: the keys travel with the index). */
struct fkey {
  spaa_vnum total;
  uint32_t depth;
  uint32_t name;    /* its name's place in byte order */
  uint32_t ix;      /* node index */
};

/* Heaviest first; at equal totals a parent before its children, then by name, then index. */
static int heavy_cmp(const void *a, const void *b)
{
  const struct fkey *x = a, *y = b;
  if (x->total != y->total)
    return x->total < y->total ? 1 : -1;
  if (x->depth != y->depth)
    return x->depth < y->depth ? -1 : 1;
  if (x->name != y->name)
    return x->name < y->name ? -1 : 1;
  return x->ix < y->ix ? -1 : 1;
}

struct nkey {
  const char *s;
  uint32_t ix;
};

static int name_cmp(const void *a, const void *b)
{
  return strcmp(((const struct nkey *)a)->s, ((const struct nkey *)b)->s);
}

/* order[r]: the node of place r among the nodes besides the root, heaviest first; rank[i]:
 * node i's place. Both malloc'ed (t->len entries). 0 or SPAA_E_NOMEM. */
static int tree_rank(const struct ftree *t, uint32_t **order, uint32_t **rank)
{
  size_t i, names = t->v->n_names;
  struct fkey *k = malloc(t->len * sizeof(*k));
  struct nkey *nk = malloc((names ? names : 1) * sizeof(*nk));
  uint32_t *by_name = malloc((names ? names : 1) * sizeof(*by_name));
  int rc = 0;
  *order = malloc(t->len * sizeof(**order));
  *rank = malloc(t->len * sizeof(**rank));
  if (!k || !nk || !by_name || !*order || !*rank) {
    rc = SPAA_E_NOMEM;
    goto out;
  }
  for (i = 0; i < names; i++) { /* names compared once each, not at every tie */
    nk[i].s = t->v->names[i];
    nk[i].ix = (uint32_t)i;
  }
  qsort(nk, names, sizeof(*nk), name_cmp);
  for (i = 0; i < names; i++)
    by_name[nk[i].ix] = (uint32_t)i;
  for (i = 1; i < t->len; i++) {
    struct fkey e = {t->c[i].total, t->c[i].depth, by_name[t->c[i].name], (uint32_t)i};
    k[i - 1] = e;
  }
  qsort(k, t->len - 1, sizeof(*k), heavy_cmp);
  (*rank)[0] = 0;
  for (i = 0; i + 1 < t->len; i++) {
    (*order)[i] = k[i].ix;
    (*rank)[k[i].ix] = (uint32_t)i;
  }
out:
  free(k);
  free(nk);
  free(by_name);
  return rc;
}

/* ---- the layout ----------------------------------------------------------------------------- */

/* A node of the answer: one node of the tree, or several drawn as one (in an "other" node's
 * subtree, the nodes of one name; an "other" node, the light children of its parent's). */
struct onode {
  size_t mfirst, mcount; /* the tree's nodes it stands for: mem[mfirst .. mfirst + mcount) */
  size_t first, count;   /* its children: o[first .. first + count) */
  spaa_vnum self, total;
  const char *name;      /* the set's name, "root" or "other" (borrowed) */
  uint32_t depth;
  unsigned char other;   /* 1: an "other" node */
  unsigned char merged;  /* 1: an "other" node or a node in its subtree */
  unsigned char cut;     /* 1: a leaf "other" standing for whole subtrees */
  unsigned char light;   /* 1: no heavier than the threshold */
  unsigned char plight;  /* 1: its parent is light */
};

/* The children of one answer node's tree nodes with one name. */
struct group {
  uint32_t name;         /* index in the set's names */
  uint32_t node;         /* its first tree node (its only one, unless merged) */
  size_t count, pos;     /* its tree nodes; where the next goes in mem */
  spaa_vnum self, total;
  int heavy;             /* 1: an answer node of its own */
};

struct layout {
  struct onode *o;       /* n answer nodes, o[0] the root; room for cap */
  size_t n, cap;
  uint32_t *mem;         /* tree nodes, answer node by answer node (one tree's worth) */
  size_t *stamp, *gix;   /* per name: the tick it was last grouped at, its group then */
  size_t tick;
  struct group *g;       /* one answer node's groups: at most one per name */
  size_t exact;          /* answer nodes that are one tree node under its own path */
  size_t others;         /* "other" nodes */
  spaa_vnum through;     /* total of the outermost "other" nodes */
  spaa_vnum cut_value;   /* total of the cut ones */
  spaa_vnum other_max;   /* the heaviest group merged into an "other" node */
  spaa_vnum heavy_min;   /* the lightest group kept for its weight (heavy_any: one was) */
  int heavy_any;
  spaa_vnum light_max;   /* the heaviest group at most the threshold, merged or kept alone */
};

static int onode_cmp(const void *a, const void *b)
{
  const struct onode *x = a, *y = b;
  if (x->total != y->total)
    return x->total < y->total ? 1 : -1;
  return strcmp(x->name, y->name);
}

/* Whether answer node c (a child of V) is light: no heavier than the threshold, when laying
 * out by one; the heaviest such node kept in L->light_max (every layout for a threshold down
 * to it is the same). */
static void flag_light(struct layout *L, struct onode *c, const struct onode *V,
                       const unsigned char *keep, const spaa_vnum *theta)
{
  c->plight = V->light;
  c->light = !keep && theta && c->total <= *theta;
  if (c->light && L->light_max < c->total)
    L->light_max = c->total;
}

/* Lay t out into L (see spaa_view_flamegraph). A group (the children of a node's tree nodes
 * with one name) is kept when heavier than *theta, or when it is one tree node of exactly that
 * weight whose rank is below p (never when theta is NULL: the coarsest layout); with `keep`
 * (cutting) when keep[] marks its node; without rank, theta and keep, always (the whole tree).
 * The light children of a node become one "other" node: merged and laid out further, or with
 * `keep` a cut leaf; a lone light child is kept (not when cutting: its subtree would be lost
 * under its own name). 0, 1 when more than `budget` nodes besides the root would be needed
 * (with `keep`, its marks are the budget), or SPAA_E_INTERNAL. */
static int lay_out(const struct ftree *t, const uint32_t *rank, const unsigned char *keep,
                   const spaa_vnum *theta, size_t p, size_t budget, struct layout *L)
{
  size_t q, mtop = 1;
  L->n = 1;
  L->exact = L->others = 0;
  L->through = L->cut_value = L->other_max = L->heavy_min = L->light_max = 0;
  L->heavy_any = 0;
  L->mem[0] = 0;
  memset(&L->o[0], 0, sizeof(L->o[0]));
  L->o[0].mcount = 1;
  L->o[0].self = t->c[0].self;
  L->o[0].total = t->c[0].total;
  L->o[0].name = "root";
  for (q = 0; q < L->n; q++) {
    struct onode *V = &L->o[q], *c;
    size_t ng = 0, nlight = 0, lone = 0, lcount = 0, opos, i, heavy0, made;
    spaa_vnum lself = 0, ltotal = 0, lmax = 0;
    uint32_t k;
    /* a light node under a light one is laid out no further: its children become one cut
     * "other", so that a light stack, however deep, costs a few nodes (its first light frame
     * and the one below are named), not one a frame */
    int light = V->light && V->plight, cutting = keep || light;
    V->first = L->n;
    V->count = 0;
    if (V->cut)
      continue;
    L->tick++;
    for (i = V->mfirst; i < V->mfirst + V->mcount; i++) {
      const struct cnode *m = &t->c[L->mem[i]];
      for (k = m->first; k < m->first + m->nkids; k++) {
        const struct cnode *f = &t->c[k];
        struct group *G;
        if (L->stamp[f->name] != L->tick) {
          L->stamp[f->name] = L->tick;
          L->gix[f->name] = ng;
          G = &L->g[ng++];
          memset(G, 0, sizeof(*G));
          G->name = f->name;
          G->node = k;
        }
        G = &L->g[L->gix[f->name]];
        G->count++;
        G->self += f->self;
        G->total += f->total;
      }
    }
    for (i = 0; i < ng; i++) {
      struct group *G = &L->g[i];
      if (keep)
        G->heavy = keep[G->node];
      else if (light)
        G->heavy = 0;
      else if (!rank)
        G->heavy = 1;
      else if (!theta)
        G->heavy = 0;
      else if (G->total > *theta) {
        G->heavy = 1;
        if (!L->heavy_any || G->total < L->heavy_min)
          L->heavy_min = G->total;
        L->heavy_any = 1;
      } else {
        G->heavy = !V->merged && G->total == *theta && rank[G->node] < p;
        if (L->light_max < G->total)
          L->light_max = G->total;
      }
      if (!G->heavy) {
        nlight++;
        lone = i;
        lcount += G->count;
        lself += G->self;
        ltotal += G->total;
        if (nlight == 1 || G->total > lmax)
          lmax = G->total;
      }
    }
    if (nlight == 1 && !cutting) { /* one light child: itself, not an "other" of one */
      L->g[lone].heavy = 1;
      nlight = lcount = 0;
    }
    made = ng - nlight + (nlight ? 1 : 0);
    if (!keep && L->n - 1 + made > budget)
      return 1;
    if (L->n + made > L->cap) /* room for budget nodes (cutting: and their "other" leaves) */
      return keep ? SPAA_E_INTERNAL : 1;
    /* where the groups' nodes go in mem: the kept groups in turn, then the light ones */
    for (i = 0; i < ng; i++) {
      if (L->g[i].heavy) {
        L->g[i].pos = mtop;
        mtop += L->g[i].count;
      }
    }
    opos = mtop;
    mtop += lcount;
    for (i = V->mfirst; i < V->mfirst + V->mcount; i++) {
      const struct cnode *m = &t->c[L->mem[i]];
      for (k = m->first; k < m->first + m->nkids; k++) {
        struct group *G = &L->g[L->gix[t->c[k].name]];
        if (G->heavy)
          L->mem[G->pos++] = k;
        else if (!cutting) /* a cut "other" keeps no nodes: nothing of it is laid out */
          L->mem[opos++] = k;
      }
    }
    heavy0 = L->n;
    for (i = 0; i < ng; i++) {
      const struct group *G = &L->g[i];
      if (!G->heavy)
        continue;
      c = &L->o[L->n++];
      memset(c, 0, sizeof(*c));
      c->mfirst = G->pos - G->count;
      c->mcount = G->count;
      c->self = G->self;
      c->total = G->total;
      c->name = t->v->names[G->name];
      c->depth = V->depth + 1;
      c->merged = V->merged;
      flag_light(L, c, V, keep, theta);
      L->exact += !V->merged;
    }
    qsort(&L->o[heavy0], L->n - heavy0, sizeof(L->o[0]), onode_cmp);
    if (nlight) {
      c = &L->o[L->n++];
      memset(c, 0, sizeof(*c));
      c->mfirst = cutting ? 0 : opos - lcount;
      c->mcount = lcount;
      c->self = cutting ? ltotal : lself;
      c->total = ltotal;
      c->name = "other";
      c->depth = V->depth + 1;
      c->other = c->merged = 1;
      c->cut = (unsigned char)cutting;
      flag_light(L, c, V, keep, theta);
      L->others++;
      if (!V->merged)
        L->through += ltotal;
      if (cutting)
        L->cut_value += ltotal;
      if (L->others == 1 || lmax > L->other_max)
        L->other_max = lmax;
    }
    L->o[q].count = L->n - L->o[q].first;
  }
  return 0;
}

/* Room for a layout of t in at most `budget` nodes besides the root (cutting: with their
 * "other" leaves). 0 or SPAA_E_NOMEM; layout_free releases it either way. */
static int layout_init(struct layout *L, const struct ftree *t, size_t budget)
{
  size_t names = t->v->n_names ? t->v->n_names : 1;
  memset(L, 0, sizeof(*L));
  L->cap = budget < t->len ? 2 * budget + 2 : t->len;
  L->o = malloc(L->cap * sizeof(*L->o));
  L->mem = malloc(t->len * sizeof(*L->mem));
  L->stamp = calloc(names, sizeof(*L->stamp));
  L->gix = malloc(names * sizeof(*L->gix));
  L->g = malloc(names * sizeof(*L->g));
  return L->o && L->mem && L->stamp && L->gix && L->g ? 0 : SPAA_E_NOMEM;
}

static void layout_free(struct layout *L)
{
  free(L->o);
  free(L->mem);
  free(L->stamp);
  free(L->gix);
  free(L->g);
}

/* The first place in `order` (heaviest first) whose node weighs at most x. */
static size_t first_at_most(const struct ftree *t, const uint32_t *order, size_t all, spaa_vnum x)
{
  size_t lo = 0, hi = all;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->c[order[mid]].total > x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Lay t out in at most `budget` nodes besides the root: the whole tree when it fits; else the
 * complete layout with the lowest weight threshold that fits (bisection over the weights that
 * make a difference: a layout that fits is the same for any threshold down to its heaviest
 * merged group, one that does not up to its lightest kept group), then as many of the tree
 * nodes of exactly that weight as fit (by rank, to within 1/32 of them); else, when even the
 * coarsest complete layout (one node per depth) does not fit, cut (the `budget` heaviest nodes
 * kept). 0 or SPAA_E_NOMEM. */
static int lay_out_within(const struct ftree *t, size_t budget, struct layout *L)
{
  uint32_t *order = NULL, *rank = NULL;
  unsigned char *keep = NULL;
  size_t all = t->len - 1, i, kept = 0, r0, r1, plo, phi, p, best;
  spaa_vnum hi, lo, mid, top = t->c[0].total;
  int rc, tries, fresh;
  if (budget >= all) /* without ranks every node is kept: the whole tree */
    return lay_out(t, NULL, NULL, NULL, 0, budget, L) ? SPAA_E_INTERNAL : 0;
  if ((rc = tree_rank(t, &order, &rank)))
    goto out;
  /* below the depth of the deepest stack, the heaviest nodes kept and the rest cut; else the
   * coarsest layout first, the threshold the root's weight (its children a node or three) */
  if (budget < t->depth || (rc = lay_out(t, rank, NULL, &top, 0, budget, L)) == 1) {
    if (!(keep = calloc(t->len, 1))) {
      rc = SPAA_E_NOMEM;
      goto out;
    }
    keep[0] = 1;
    for (i = 0; i < all && kept < budget; i++) { /* a parent ranks before its children */
      uint32_t x = order[i];
      if (keep[t->c[x].parent]) {
        keep[x] = 1;
        kept++;
      }
    }
    rc = lay_out(t, rank, keep, NULL, 0, budget, L);
    goto out;
  }
  if (rc)
    goto out;
  /* thresholds in [lo, hi): hi fits (the coarsest's heaviest light group), below the lightest
   * node the whole tree does not; a threshold equal to a group's weight merges it */
  hi = L->light_max;
  lo = t->c[order[all - 1]].total;
  lo = lo > 0 ? lo / 2 : lo - 1;
  fresh = 1; /* L holds the layout at hi */
  for (tries = 0; tries < 64 && lo < hi; tries++) {
    mid = lo > 0 ? sqrtl(lo * hi) : lo + (hi - lo) / 2;
    if (mid < lo || mid >= hi)
      mid = lo;
    if ((rc = lay_out(t, rank, NULL, &mid, 0, budget, L)) < 0)
      goto out;
    fresh = rc == 0;
    if (rc == 0) {
      hi = L->light_max; /* the same layout down to there */
    } else if (L->heavy_any && L->heavy_min > mid) {
      lo = L->heavy_min; /* the same layout up to there */
    } else {
      break; /* nothing lighter to keep: hi it is */
    }
  }
  /* the nodes weighing exactly hi, heaviest rank first: as many as fit */
  r0 = first_at_most(t, order, all, hi);
  for (r1 = r0; r1 < all && t->c[order[r1]].total == hi; r1++)
    ;
  best = r0;
  plo = r0 + 1;
  phi = r1;
  while (plo <= phi && phi - plo >= (r1 - r0) / 32) {
    p = plo + (phi - plo) / 2;
    if ((rc = lay_out(t, rank, NULL, &hi, p, budget, L)) < 0)
      goto out;
    fresh = rc == 0 && p > best;
    if (rc == 0) {
      best = p;
      plo = p + 1;
    } else {
      phi = p - 1;
    }
  }
  rc = fresh ? 0 : lay_out(t, rank, NULL, &hi, best, budget, L);
out:
  free(order);
  free(rank);
  free(keep);
  return rc < 0 ? rc : rc ? SPAA_E_INTERNAL : 0;
}

/* ---- writing ---------------------------------------------------------------------------------- */

static int flush(struct spaa_buf *b, spaa_sink_cb sink, void *ctx, int force)
{
  int rc = 0;
  if (b->len && (force || b->len >= FLAME_FLUSH)) {
    rc = sink(ctx, b->p, b->len);
    b->len = 0;
  }
  return rc;
}

static int node_open(struct spaa_buf *b, const struct onode *o)
{
  int rc = spaa_buf_adds(b, "{\"name\":");
  rc = rc ? rc : spaa_view_jstr(b, o->name);
  if (o->other)
    rc = rc ? rc : spaa_buf_addf(b, ",\"merged\":%zu", o->mcount);
  rc = rc ? rc : spaa_buf_adds(b, ",\"self\":");
  rc = rc ? rc : spaa_view_num(b, o->self);
  rc = rc ? rc : spaa_buf_adds(b, ",\"total\":");
  rc = rc ? rc : spaa_view_num(b, o->total);
  return rc ? rc : spaa_buf_adds(b, ",\"children\":[");
}

/* The answer's tree, depth first without recursion: pos[d] is the next child at depth d. */
static int tree_write(const struct layout *L, size_t depth, struct spaa_buf *b,
                      spaa_sink_cb sink, void *ctx)
{
  size_t *stack = malloc((depth + 2) * sizeof(*stack)), *pos = malloc((depth + 2) * sizeof(*pos));
  size_t d = 0;
  int rc = stack && pos ? 0 : SPAA_E_NOMEM;
  if (!rc) {
    stack[0] = pos[0] = 0;
    rc = node_open(b, &L->o[0]);
  }
  while (!rc) {
    const struct onode *f = &L->o[stack[d]];
    if (pos[d] < f->count) {
      size_t c = f->first + pos[d];
      rc = pos[d]++ ? spaa_buf_adds(b, ",") : 0;
      rc = rc ? rc : node_open(b, &L->o[c]);
      stack[++d] = c;
      pos[d] = 0;
    } else {
      rc = spaa_buf_adds(b, "]}");
      if (!d)
        break;
      d--;
    }
    rc = rc ? rc : flush(b, sink, ctx, 0);
  }
  free(stack);
  free(pos);
  return rc;
}

int spaa_view_flamegraph(const struct spaa_vset *v, size_t max_nodes, spaa_sink_cb sink,
                         void *ctx, struct spaa_err *err)
{
  struct ftree t = {.v = v};
  struct layout L;
  struct spaa_buf b;
  size_t named;
  int rc;
  memset(&L, 0, sizeof(L));
  spaa_buf_init(&b, 0);
  if ((rc = tree_build(&t)) ||
      (rc = layout_init(&L, &t, max_nodes && max_nodes < t.len ? max_nodes : t.len - 1)) ||
      (rc = lay_out_within(&t, max_nodes && max_nodes < t.len ? max_nodes : t.len - 1, &L)))
    goto out;
  named = L.n - 1 - L.others;
  rc = spaa_view__head(&b, v);
  rc = rc ? rc : spaa_buf_addf(&b, ",\"nodes\":%zu,\"trimmed_nodes\":%zu,\"trimmed_value\":",
                               named, t.len - 1 - L.exact);
  rc = rc ? rc : spaa_view_num(&b, L.through);
  rc = rc ? rc : spaa_buf_addf(&b, ",\"other_nodes\":%zu,\"other_max\":", L.others);
  rc = rc ? rc : L.others ? spaa_view_num(&b, L.other_max) : spaa_buf_adds(&b, "null");
  rc = rc ? rc : spaa_buf_adds(&b, ",\"cut_value\":");
  rc = rc ? rc : spaa_view_num(&b, L.cut_value);
  rc = rc ? rc : spaa_buf_adds(&b, ",\"tree\":");
  rc = rc ? rc : tree_write(&L, t.depth, &b, sink, ctx);
  rc = rc ? rc : spaa_buf_adds(&b, "}\n");
  rc = rc ? rc : flush(&b, sink, ctx, 1);
out:
  layout_free(&L);
  free(t.n);
  free(t.c);
  spaa_buf_free(&b);
  if (rc && !err->code)
    spaa_err_set(err, rc, 0, 0, "writing the flamegraph: %s", spaa_err_default(rc));
  return rc;
}
