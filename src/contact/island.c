// island.c - the constraint problem split into islands (issue 19 item 1).
//
// A kinematic tree is the set of dofs below one root dof (dof_parentid = -1); it is named by that root dof,
// the smallest dof index of the tree. Two trees belong to one island when a row of the problem reaches both:
// a contact between their bodies, a tendon limit spanning them, an equality constraint eliminated from the
// problem (its rows Je couple every tree they touch through the Schur complement). A row's trees are those
// of the dofs where its Jacobian row is nonzero (contacts: the chains of its two bodies, read from the
// geoms without scanning the row). Union-find over the root dofs, the smaller root kept as the
// representative, so an island is named by its smallest tree and islands come in that order; rows keep
// their order inside an island (contacts first, then limits, as in the whole problem).
//
// With M~ block diagonal over trees, G = J M~^-1 J' has G_ij = 0 exactly between rows of different islands
// (assemble.c sums products over the rows' common dofs only), and the impulse problems (lcp, cone, ccp: each
// couples a contact's three rows only through G and its own mu) separate: the solution of the whole problem
// is the islands' solutions side by side. Each island's sub-problem takes its rows of G, g, mu, the warm
// guesses and gpos, its contacts, and its dofs' count as the rank bound p->nv; J is not gathered (the solvers
// never read it: NULL in the sub-problem). A problem that is one island is solved as it is (the same bits as
// without islands); PHYS_DSBL_ISLAND turns the split off.
// Once per step: the assembly computes the islands of its rows (p->isl, assemble.c), its Delassus product
// multiplies inside them, and the solves of that problem (the impulses', the position correction's) reuse them
// unless equality rows join more trees. A model of one tree (a robot, a free body) has one island of all rows
// whenever every row reaches a dof: that case skips the union-find.
#include <string.h>

#include "arena.h"
#include "contact.h"
#include "dyn.h"

// n ints from d's arena
static int* island_ints(physData* d, size_t n) { return (int*)phys_stack_alloc(d, n / 2 + 1); }

// the representative (smallest root dof) of root r's set, with path halving
static int uf_find(int* parent, int r) {
  while (parent[r] != r) {
    parent[r] = parent[parent[r]];
    r = parent[r];
  }
  return r;
}

// join the sets of roots a and b (either may be -1: the world, no dof), the smaller representative kept
static void uf_join(int* parent, int a, int b) {
  if (a < 0 || b < 0) return;
  a = uf_find(parent, a);
  b = uf_find(parent, b);
  if (a < b) parent[b] = a;
  else if (b < a) parent[a] = b;
}

// the root dof of body's tree, -1 for a body without dofs on its chain (the world, a welded body)
static int body_root(const physModel* m, const int* droot, int body) {
  int j = phys_body_lastdof(m, body);
  return j < 0 ? -1 : droot[j];
}

// join every tree row reaches with the first one: its nv numbers, or with s not NULL only the dofs s (nv of
// them, descending: row is 0 elsewhere), ascending; the first root reached, -1 if none
static int join_row(int* parent, const int* droot, const double* row, const int* s, int nv) {
  int first = -1;
  for (int t = 0; t < nv; t++) {
    int j = s ? s[nv - 1 - t] : t;
    if (row[j] == 0) continue;
    if (first < 0) first = droot[j];
    else uf_join(parent, first, droot[j]);
  }
  return first;
}

// the island (representative root) of each row of p into rep (n; -1: a row that reaches no dof), the trees
// joined by the rows and by the ne equality rows Je (ne x nv, may be NULL); droot (nv) the dofs' roots
static void row_roots(const physModel* m, const physConstraintProblem* p, const double* Je, int ne,
                      int* parent, const int* droot, int* rep) {
  int nv = m->nv;
  for (int k = 0; k < ne; k++) join_row(parent, droot, Je + (size_t)k * nv, NULL, nv);
  for (int i = 0; i < p->nc; i++) {
    const physContact* c = p->con + i;
    int a = body_root(m, droot, m->geom_bodyid[c->geom[0]]);
    int b = body_root(m, droot, m->geom_bodyid[c->geom[1]]);
    uf_join(parent, a, b);
    rep[3 * i] = rep[3 * i + 1] = rep[3 * i + 2] = a >= 0 ? a : b;
  }
  for (int r = 3 * p->nc; r < p->n; r++) {
    const int* s;
    int k = phys_constraint_row_dofs(p, r, &s);
    rep[r] = join_row(parent, droot, p->J + (size_t)r * nv, s, k);
  }
  for (int r = 0; r < p->n; r++) rep[r] = rep[r] < 0 ? -1 : uf_find(parent, rep[r]);
}

// the trees joined by the rows of p and the ne equality rows Je: each dof's root into droot and the union-find
// parent over the roots into parent (nv each, from d's arena), each row's representative root into rep (n)
static void islands_union(const physModel* m, physData* d, const physConstraintProblem* p, const double* Je, int ne,
                          int** droot, int** parent, int* rep) {
  int nv = m->nv;
  int* dr = *droot = island_ints(d, (size_t)nv + 1);
  int* pa = *parent = island_ints(d, (size_t)nv + 1);
  for (int j = 0; j < nv; j++) {
    dr[j] = m->dof_parentid[j] < 0 ? j : dr[m->dof_parentid[j]];
    pa[j] = j;
  }
  row_roots(m, p, Je, ne, pa, dr, rep);
}

int phys_one_tree(const physModel* m) {
  int roots = 0;
  for (int j = 0; j < m->nv && roots < 2; j++) roots += m->dof_parentid[j] < 0;
  return roots == 1;
}

// 1 if row r of p reaches a dof: a contact with a body that has one on its chain, a limit row nonzero on one of
// its dofs (its joint's dof, the first of its list, descending), a tendon's row nonzero somewhere
static int row_reaches(const physModel* m, const physConstraintProblem* p, int r) {
  if (r < 3 * p->nc) {
    const physContact* c = p->con + r / 3;
    return phys_body_lastdof(m, m->geom_bodyid[c->geom[1]]) >= 0 || phys_body_lastdof(m, m->geom_bodyid[c->geom[0]]) >= 0;
  }
  const int* s;
  int k = phys_constraint_row_dofs(p, r, &s);
  const double* Jr = p->J + (size_t)r * m->nv;
  for (int t = 0; t < k; t++)
    if (Jr[s ? s[t] : k - 1 - t] != 0) return 1;
  return 0;
}

// the islands of a model with one tree whose every row reaches a dof: one island of all rows and all nv dofs
// (what the union-find below gives then, equality rows or not, without it); 0 if some row reaches no dof
static int one_island(const physModel* m, const physConstraintProblem* p, physIslands* isl) {
  for (int r = 0; r < p->n; r += r < 3 * p->nc ? 3 : 1)   // (a contact's three rows reach the same dofs)
    if (!row_reaches(m, p, r)) return 0;
  isl->n = 1;
  isl->start[0] = 0, isl->start[1] = p->n;
  for (int r = 0; r < p->n; r++) isl->row[r] = r;
  isl->ndof[0] = m->nv;
  return 1;
}

// Islands of p (arena memory of the caller's mark: start, row and ndof, 3 n + 4 ints; the union-find's scratch
// is released): returns their number, 0 if p has no rows
int phys_islands(const physModel* m, physData* d, const physConstraintProblem* p, const double* Je, int ne,
                 physIslands* isl) {
  int nv = m->nv, n = p->n;
  memset(isl, 0, sizeof *isl);
  if (n <= 0) return 0;
  isl->start = island_ints(d, (size_t)n + 2);   // (at most n islands: each has a row)
  isl->row = island_ints(d, (size_t)n + 1);
  isl->ndof = island_ints(d, (size_t)n + 1);
  if (phys_one_tree(m) && one_island(m, p, isl)) return 1;   // (equality rows join nothing more then)
  size_t mark = phys_stack_mark(d);
  int *droot, *parent;
  int* rep = island_ints(d, (size_t)n + 1);
  int* slot = island_ints(d, (size_t)nv + 2);   // island of each representative root, +1 (0: none)
  islands_union(m, d, p, Je, ne, &droot, &parent, rep);
  // islands in the order of their representatives (rows reaching no dof: one island after them, each alone)
  memset(slot, 0, sizeof(int) * ((size_t)nv + 2));
  for (int r = 0; r < n; r++)
    if (rep[r] >= 0) slot[rep[r]] = 1;
  int ni = 0;
  for (int j = 0; j < nv; j++)
    if (slot[j]) slot[j] = ++ni;
  int nfree = 0;
  for (int r = 0; r < n; r++) nfree += rep[r] < 0;
  isl->n = ni + (nfree > 0);
  memset(isl->start, 0, sizeof(int) * ((size_t)isl->n + 2));
  memset(isl->ndof, 0, sizeof(int) * ((size_t)isl->n + 1));
  for (int r = 0; r < n; r++) isl->start[(rep[r] >= 0 ? slot[rep[r]] - 1 : ni) + 1]++;
  for (int k = 0; k < isl->n; k++) isl->start[k + 1] += isl->start[k];
  int* fill = island_ints(d, (size_t)isl->n + 1);
  memcpy(fill, isl->start, sizeof(int) * (size_t)isl->n);
  for (int r = 0; r < n; r++) isl->row[fill[rep[r] >= 0 ? slot[rep[r]] - 1 : ni]++] = r;
  for (int j = 0; j < nv; j++) {
    int s = slot[uf_find(parent, droot[j])];
    if (s) isl->ndof[s - 1]++;
  }
  phys_stack_free(d, mark);
  return isl->n;
}

// the first root a friction row of fr reaches after joining every tree it reaches (a dof row: its dof's tree;
// a tendon row: the trees of its moment's nonzeros; an angular row: its contact's two bodies'), -1 if none
static int friction_row_root(const physModel* m, const physConstraintProblem* p, const physFrictionRows* fr,
                             int i, int* parent, const int* droot) {
  int n0 = fr->nf - fr->nfa;
  if (i < fr->nfd) return droot[fr->dof[i]];
  if (i < n0) return join_row(parent, droot, fr->R + (size_t)(i - fr->nfd) * m->nv, NULL, m->nv);
  const physContact* c = p->con + fr->acon[i - n0];
  int a = body_root(m, droot, m->geom_bodyid[c->geom[0]]), b = body_root(m, droot, m->geom_bodyid[c->geom[1]]);
  uf_join(parent, a, b);
  return a >= 0 ? a : b;
}

// Groups of trees coupled through the friction rows fr (contact.h)
int phys_friction_groups(const physModel* m, physData* d, const physConstraintProblem* p, const double* Je, int ne,
                         const physFrictionRows* fr, int* rgroup, int* fgroup, int* gdof) {
  int nv = m->nv, n = p->n, nf = fr->nf;
  size_t mark = phys_stack_mark(d);
  int *droot, *parent;
  int* rep = island_ints(d, (size_t)n + 1);
  int* frep = island_ints(d, (size_t)nf + 1);
  int* slot = island_ints(d, (size_t)nv + 1);   // group of each representative root, +1 (0: none)
  islands_union(m, d, p, Je, ne, &droot, &parent, rep);
  for (int i = 0; i < nf; i++) frep[i] = friction_row_root(m, p, fr, i, parent, droot);
  memset(slot, 0, sizeof(int) * (size_t)nv);
  for (int i = 0; i < nf; i++)
    if (frep[i] >= 0) slot[uf_find(parent, frep[i])] = 1;
  int ng = 0;
  for (int j = 0; j < nv; j++)
    if (slot[j]) slot[j] = ++ng;
  for (int i = 0; i < nf; i++) fgroup[i] = frep[i] < 0 ? -1 : slot[uf_find(parent, frep[i])] - 1;
  for (int r = 0; r < n; r++) rgroup[r] = rep[r] < 0 ? -1 : slot[uf_find(parent, rep[r])] - 1;
  memset(gdof, 0, sizeof(int) * (size_t)(ng + 1));
  for (int j = 0; j < nv; j++) {
    int s = slot[uf_find(parent, droot[j])];
    if (s) gdof[s - 1]++;
  }
  phys_stack_free(d, mark);
  return ng;
}

//---------------------------------------------------------------------------------------------------------
// the solve by islands

// the sub-problem q of p on the nk rows rows (ascending) of one island with ndof dofs (contact.h)
void phys_island_problem(physData* d, const physConstraintProblem* p, const int* rows, int nk, int ndof,
                         physConstraintProblem* q) {
  memset(q, 0, sizeof *q);
  int nc = 0;
  for (int k = 0; k < nk; k++) nc += rows[k] < 3 * p->nc && rows[k] % 3 == 0;
  double* G = phys_stack_alloc(d, (size_t)nk * (size_t)nk + 1);
  double* g = phys_stack_alloc(d, (size_t)nk + 1);
  double* gpos = phys_stack_alloc(d, (size_t)nk + 1);
  double* mu = phys_stack_alloc(d, (size_t)nc + 1);
  physContact* con = (physContact*)phys_stack_alloc(d, (sizeof(physContact) * (size_t)nc) / sizeof(double) + 1);
  for (int a = 0; a < nk; a++) {
    const double* Ga = p->G + (size_t)rows[a] * p->n;
    for (int b = 0; b < nk; b++) G[(size_t)a * nk + b] = Ga[rows[b]];
    g[a] = p->g[rows[a]];
    gpos[a] = p->gpos ? p->gpos[rows[a]] : 0;
    q->npos += gpos[a] < 0;
  }
  for (int i = 0; i < nc; i++) {
    con[i] = p->con[rows[3 * i] / 3];
    mu[i] = p->mu[rows[3 * i] / 3];
    q->nmargin += con[i].dist > 0;
  }
  if (p->warm) {
    int* warm = island_ints(d, (size_t)nk + 1);
    for (int a = 0; a < nk; a++) warm[a] = p->warm[rows[a]];
    q->warm = warm;
  }
  if (p->lambda0) {
    double* l0 = phys_stack_alloc(d, (size_t)nk + 1);
    for (int a = 0; a < nk; a++) l0[a] = p->lambda0[rows[a]];
    q->lambda0 = l0;
  }
  q->nc = nc, q->con = con, q->nl = nk - 3 * nc, q->n = nk, q->nv = ndof;
  q->G = G, q->g = g, q->gpos = p->gpos ? gpos : NULL, q->mu = mu;
}

// solve p island by island with solver into sol (p->n lambda and state, caller-owned): each island's
// sub-problem solved on its own, its impulses and row states scattered back; iterations summed, the residual
// the largest, warm_used 1 if every island kept its guess; the first status that is not PHYS_OK (every island
// is solved). One island, or PHYS_DSBL_ISLAND: solver(m, d, p, sol) itself
physStatus phys_solve_islands(const physModel* m, physData* d, physIslandSolver solver,
                              const physConstraintProblem* p, const double* Je, int ne,
                              physConstraintSolution* sol) {
  if (p->n <= 0) return solver(m, d, p, sol);
  size_t mark = phys_stack_mark(d);
  physIslands isl = {0};
  if (ne == 0 && p->isl && p->isl->n > 0 && p->isl->start[p->isl->n] == p->n) isl = *p->isl;   // the assembly's
  else if (!(m->opt.disableflags & PHYS_DSBL_ISLAND)) phys_islands(m, d, p, Je, ne, &isl);
  if ((m->opt.disableflags & PHYS_DSBL_ISLAND) || isl.n <= 1) {
    phys_stack_free(d, mark);
    return solver(m, d, p, sol);
  }
  physStatus status = PHYS_OK;
  int iterations = 0, warm_used = 1;
  double residual = 0;
  for (int k = 0; k < isl.n; k++) {
    size_t mk = phys_stack_mark(d);
    const int* rows = isl.row + isl.start[k];
    int nk = isl.start[k + 1] - isl.start[k];
    physConstraintProblem q;
    phys_island_problem(d, p, rows, nk, isl.ndof[k], &q);
    physConstraintSolution s = {.lambda = phys_stack_alloc(d, (size_t)nk + 1),
                                .state = island_ints(d, (size_t)nk + 1)};
    memset(s.lambda, 0, sizeof(double) * (size_t)nk);
    memset(s.state, 0, sizeof(int) * (size_t)nk);
    physStatus st = solver(m, d, &q, &s);
    if (status == PHYS_OK) status = st;
    for (int a = 0; a < nk; a++) {
      sol->lambda[rows[a]] = s.lambda[a];
      sol->state[rows[a]] = s.state[a];
    }
    iterations += s.iterations;
    residual = s.residual > residual ? s.residual : residual;
    warm_used &= s.warm_used;
    phys_stack_free(d, mk);
  }
  sol->iterations = iterations;
  sol->residual = residual;
  sol->warm_used = warm_used;
  phys_stack_free(d, mark);
  return status;
}
