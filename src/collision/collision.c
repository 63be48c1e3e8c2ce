// collision.c - collision detection driver: dispatch table, MJCF filtering, broad phase, contact list.
//
// Pipeline of phys_collision (allocates nothing; scratch from d's arena):
//  1. explicit <pair>s, in model order, with the pair's own friction, restitution and margin;
//  2. broad phase: sort and sweep of the geoms' bounding spheres (centre geom_xpos, radius geom_rbound +
//     geom_margin) along the axis of largest spread of the centres; planes (rbound 0, infinite) are tested
//     against every other geom by signed height. Candidates pass the MJCF filter, then are sorted by geom
//     id pair, so the contact list does not depend on the sweep: the same pairs in the same order as an
//     O(n^2) loop over (g1 < g2);
//  3. narrow phase per pair (phys_collide_geoms), friction = max of the geoms' sliding friction,
//     restitution = max of the geoms' restitution, margin = max of the geoms' margins (for the ccp contact
//     model at least its collision envelope, below).
// Contacts beyond nconmax are dropped, counted in d->ncon_dropped and reported as one data warning.
#include "collision.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "primitive.h"

// Registration point of the convex routines (src/collision/convex.h: GJK/EPA for ellipsoids, cylinders and
// meshes): every pair without a closed-form function below goes to phys_collide_convex_plane (plane with
// anything) or phys_collide_convex_convex (the rest). Guarded so the table builds without convex.h.
#if defined(__has_include)
#if __has_include("convex.h")
#include "convex.h"
#endif
#endif

// larger of a and b (inline; libm's fmax is a call)
static inline double maxd(double a, double b) { return a > b ? a : b; }

//---------------------------------------------------------------------------------------------------------
// dispatch

// closed-form pair functions, [t1][t2] with t1 <= t2 (PLANE SPHERE CAPSULE ELLIPSOID CYLINDER BOX MESH)
static const physCollideFn PRIMITIVE[PHYS_NGEOMTYPE][PHYS_NGEOMTYPE] = {
    [PHYS_GEOM_PLANE] = {[PHYS_GEOM_SPHERE] = phys_collide_plane_sphere,
                         [PHYS_GEOM_CAPSULE] = phys_collide_plane_capsule,
                         [PHYS_GEOM_ELLIPSOID] = phys_collide_plane_ellipsoid,
                         [PHYS_GEOM_CYLINDER] = phys_collide_plane_cylinder,
                         [PHYS_GEOM_BOX] = phys_collide_plane_box},
    [PHYS_GEOM_SPHERE] = {[PHYS_GEOM_SPHERE] = phys_collide_sphere_sphere,
                          [PHYS_GEOM_CAPSULE] = phys_collide_sphere_capsule,
                          [PHYS_GEOM_CYLINDER] = phys_collide_sphere_cylinder,
                          [PHYS_GEOM_BOX] = phys_collide_sphere_box},
    [PHYS_GEOM_CAPSULE] = {[PHYS_GEOM_CAPSULE] = phys_collide_capsule_capsule,
                           [PHYS_GEOM_BOX] = phys_collide_capsule_box},
    [PHYS_GEOM_BOX] = {[PHYS_GEOM_BOX] = phys_collide_box_box},
};

// the pair function of valid types t1 <= t2: closed form, else the convex routines (never plane-plane)
static inline physCollideFn pair_fn(int t1, int t2) {
  physCollideFn fn = PRIMITIVE[t1][t2];
#ifdef PHYS_CONVEX_H
  if (!fn && t2 != PHYS_GEOM_PLANE) fn = t1 == PHYS_GEOM_PLANE ? phys_collide_convex_plane : phys_collide_convex_convex;
#endif
  return fn;
}

physCollideFn phys_collide_fn(int type1, int type2, int* swap) {
  if (swap) *swap = type1 > type2;
  if (type1 < 0 || type2 < 0 || type1 >= PHYS_NGEOMTYPE || type2 >= PHYS_NGEOMTYPE) return NULL;
  return type1 <= type2 ? pair_fn(type1, type2) : pair_fn(type2, type1);
}

// pair functions take the lower type first; for equal types the lower geom id goes first, so the result
// does not depend on the argument order (only the normal flips, and the features swap); each contact records
// that order and its number among the call's outputs (pairflip, pairout: the derivatives differentiate it from them)
int phys_collide_geoms(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out) {
  int t1 = m->geom_type[g1], t2 = m->geom_type[g2], swap = t1 > t2;
  physCollideFn fn = swap ? pair_fn(t2, t1) : pair_fn(t1, t2);
  if (!fn) return 0;
  int flip = swap || (t1 == t2 && g1 > g2);
  int n = flip ? fn(m, d, g2, g1, margin, out) : fn(m, d, g1, g2, margin, out);
  for (int i = 0; i < n; i++) {
    if (flip) {
      double nrm[3] = {-out[i].frame[0], -out[i].frame[1], -out[i].frame[2]};
      phys_contact_frame(out[i].frame, nrm);
      int f = out[i].feature[0], w[3];
      out[i].feature[0] = out[i].feature[1], out[i].feature[1] = f;
      double a = out[i].featangle[0];
      out[i].featangle[0] = out[i].featangle[1], out[i].featangle[1] = a;
      memcpy(w, out[i].witness[0], sizeof(w));
      memcpy(out[i].witness[0], out[i].witness[1], sizeof(w));
      memcpy(out[i].witness[1], w, sizeof(w));
    }
    out[i].geom[0] = g1;
    out[i].geom[1] = g2;
    out[i].pairflip = flip;
    out[i].pairout = i;
  }
  return n;
}

// t1 = the world axis e (x, or y when n is within ~37 degrees of x) made orthogonal to n, t2 = n x t1:
// ground contacts (n = +-z) get t1 = x
void phys_contact_frame(double frame[9], const double n[3]) {
  double e[3] = {0, 0, 0};
  e[fabs(n[0]) < 0.8 ? 0 : 1] = 1;
  double en = e[0] * n[0] + e[1] * n[1] + e[2] * n[2];
  double t1[3] = {e[0] - en * n[0], e[1] - en * n[1], e[2] - en * n[2]};
  double len = sqrt(t1[0] * t1[0] + t1[1] * t1[1] + t1[2] * t1[2]);
  for (int k = 0; k < 3; k++) t1[k] /= len;
  frame[0] = n[0], frame[1] = n[1], frame[2] = n[2];
  frame[3] = t1[0], frame[4] = t1[1], frame[5] = t1[2];
  frame[6] = n[1] * t1[2] - n[2] * t1[1];
  frame[7] = n[2] * t1[0] - n[0] * t1[2];
  frame[8] = n[0] * t1[1] - n[1] * t1[0];
}

//---------------------------------------------------------------------------------------------------------
// filter (MJCF semantics, as MuJoCo 2.2.2)

// weld body's parent weld body: weldid(parent(weldid(b))) (-1 for the world)
static int weld_parent(const physModel* m, int w) {
  int p = m->body_parentid[w];
  return p < 0 ? -1 : m->body_weldid[p];
}

int phys_collision_filter(const physModel* m, int g1, int g2) {
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return 0;  // same rigid body (or both static)
  // one kinematic tree when self-collision is off (URDF default); the world's own geoms are their own tree
  if ((m->opt.disableflags & PHYS_DSBL_SELFCOLLISION) && b1 && b2 && m->body_rootid[b1] == m->body_rootid[b2]) return 0;
  if (!((m->geom_contype[g1] & m->geom_conaffinity[g2]) || (m->geom_contype[g2] & m->geom_conaffinity[g1])))
    return 0;
  if (w1 != 0 && w2 != 0 && (w1 == weld_parent(m, w2) || w2 == weld_parent(m, w1))) return 0;  // parent-child
  for (int i = 0; i < m->nexclude; i++) {
    int e1 = m->exclude_body1[i], e2 = m->exclude_body2[i];
    if ((e1 == b1 && e2 == b2) || (e1 == b2 && e2 == b1)) return 0;
  }
  return 1;
}

// 1 if an explicit <pair> joins the bodies of g1 and g2: MuJoCo then skips the broad-phase contacts of that
// body pair (the predefined pairs replace them)
static int body_pair_predefined(const physModel* m, int g1, int g2) {
  int b1 = m->geom_bodyid[g1], b2 = m->geom_bodyid[g2];
  for (int i = 0; i < m->npair; i++) {
    int p1 = m->geom_bodyid[m->pair_geom1[i]], p2 = m->geom_bodyid[m->pair_geom2[i]];
    if ((p1 == b1 && p2 == b2) || (p1 == b2 && p2 == b1)) return 1;
  }
  return 0;
}

//---------------------------------------------------------------------------------------------------------
// sorting helpers (no allocation): insertion sort for short lists, heap sort otherwise; keys are unique

// sift down for a max-heap of uint64 keys
static void sift_u64(uint64_t* a, int n, int i) {
  for (;;) {
    int c = 2 * i + 1;
    if (c >= n) return;
    if (c + 1 < n && a[c + 1] > a[c]) c++;
    if (a[i] >= a[c]) return;
    uint64_t t = a[i];
    a[i] = a[c];
    a[c] = t;
    i = c;
  }
}

// ascending sort of unique uint64 keys
static void sort_u64(uint64_t* a, int n) {
  if (n <= 24) {
    for (int i = 1; i < n; i++) {
      uint64_t x = a[i];
      int j = i - 1;
      while (j >= 0 && a[j] > x) a[j + 1] = a[j], j--;
      a[j + 1] = x;
    }
    return;
  }
  for (int i = n / 2 - 1; i >= 0; i--) sift_u64(a, n, i);
  for (int e = n - 1; e > 0; e--) {
    uint64_t t = a[0];
    a[0] = a[e];
    a[e] = t;
    sift_u64(a, e, 0);
  }
}

// one geom of the sweep: its interval [lo, hi] on the sweep axis, centre, bounding radius, margin, weld body
typedef struct {
  double lo, hi, x[3], r, margin;
  int g, weld;
} sweep_t;
_Static_assert(sizeof(sweep_t) <= 9 * sizeof(double), "data.c's broad_phase_size counts 9 doubles per entry");

// ascending sort of the sweep entries by (lo, position): ord gets the permutation, key the sorted lo values
// (entries stay in place); insertion sort for short lists (stable: ties keep id order), heap sort otherwise
static void sort_sweep(int* ord, double* key, const sweep_t* S, int n) {
  for (int i = 0; i < n; i++) ord[i] = i, key[i] = S[i].lo;
  if (n <= 32) {
    for (int i = 1; i < n; i++) {
      int x = ord[i], j = i - 1;
      double lx = key[i];
      while (j >= 0 && key[j] > lx) ord[j + 1] = ord[j], key[j + 1] = key[j], j--;
      ord[j + 1] = x, key[j + 1] = lx;
    }
    return;
  }
#define SWEEP_LESS(a, b) (key[a] < key[b] || (key[a] == key[b] && ord[a] < ord[b]))
#define SWEEP_SWAP(a, b) \
  do { \
    int t_ = ord[a]; double k_ = key[a]; \
    ord[a] = ord[b], key[a] = key[b], ord[b] = t_, key[b] = k_; \
  } while (0)
  for (int start = n / 2 - 1, end = n; end > 1;) {
    int i;
    if (start >= 0) {
      i = start--;
    } else {
      end--;
      SWEEP_SWAP(0, end);
      i = 0;
    }
    for (;;) {  // sift down position i within [0, end)
      int c = 2 * i + 1;
      if (c >= end) break;
      if (c + 1 < end && SWEEP_LESS(c, c + 1)) c++;
      if (!SWEEP_LESS(i, c)) break;
      SWEEP_SWAP(i, c);
      i = c;
    }
  }
#undef SWEEP_LESS
#undef SWEEP_SWAP
}

//---------------------------------------------------------------------------------------------------------
// ccp's collision envelope

// Anitescu's relaxation (the ccp contact model, src/contact/ccp.c) makes a sliding contact separate at the
// normal velocity mu |v_t|: over a step the gap opens by dt mu |v_t|, and with a detection margin of 0 the
// contact is lost and the body hops. For ccp, pairs are detected within an envelope larger than that gap:
// margin >= 2 dt mu (s1 + s2), s = |v_c| + |omega| rbound, the largest speed of a point of the geom (v_c the
// velocity of its centre), which bounds the slip speed |v_t| of any contact of the pair; the factor 2 keeps
// a contact gliding at exactly dt mu |v_t| inside. The constraint problem closes such a gap within the
// step (contact.h: g_n += dist/dt for dist > 0), so the body glides at height dt mu |v_t| (Tasora and
// Anitescu's collision envelope). 0 for the other models and for resting bodies.

// largest point speed of geom g: |lin + ang x x_g| + |ang| rbound (cvel of its body, about the world origin)
static double geom_speed(const physModel* m, const physData* d, int g) {
  const double* v = d->cvel + 6 * m->geom_bodyid[g];
  const double* x = d->geom_xpos + 3 * g;
  double p[3] = {v[3] + v[1] * x[2] - v[2] * x[1], v[4] + v[2] * x[0] - v[0] * x[2], v[5] + v[0] * x[1] - v[1] * x[0]};
  double w = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  return sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) + w * m->geom_rbound[g];
}

// The velocity-level models (lcp, cone, ccp) also detect within PHYS_ENVELOPE_MIN: a body resting at
// distance 0 (an exact velocity solve leaves it there) would otherwise lose and regain contacts as rounding
// moves its corners by 1e-17 m, each loss a different, badly conditioned problem; within the envelope a
// contact at dist > 0 only closes its gap. 1e-5 m: contact.h's PHYS_CONTACT_SLOP, the depth tolerated on the
// other side. Under lcp a 10,000 kg box resting on a 1 kg box kept 2 of the light box's 4 floor corners after
// one step (the others at +1e-17 m): the light box tipped, both fell a whole step (g dt) and bounced back
// with restitution 1, the energy growing 20-fold in 50 steps (tests/contact/test_scene_rest.c).
#define PHYS_ENVELOPE_MIN 1e-5
// lcp's envelope: only rounding (1e-17 m per step; 1e-9 m after 1e8 steps) is to be absorbed. Its exact
// pivoting handles any contact set, so the contacts of a gap left open by a bounce or a margin need not be kept
// (the humanoid lying under lcp met one near-degenerate problem with 1e-5 m)
#define PHYS_ENVELOPE_LCP 1e-9

// 1 if the model's contact solver uses the envelope (lcp, cone, ccp; not penalty, whose force needs dist < 0)
static int envelope_model(const physModel* m) { return m->opt.contact != PHYS_CONTACT_PENALTY; }

// the pbd integrator (issue 17, src/step/pbd.c) detects once per step and re-evaluates each contact's distance
// at every substep: pairs are kept within the distance their points can close over the step, 2 dt s + |g| dt^2
// (s: the sum of the two geoms' largest point speeds), at least PHYS_ENVELOPE_MIN; a geom's broad-phase share is
// the same with s = 2 of its own speed (the larger share covers the pair's)
static double pbd_envelope(const physModel* m, double s) {
  double dt = m->opt.timestep;
  return maxd(2 * dt * s + sqrt(m->opt.gravity[0] * m->opt.gravity[0] + m->opt.gravity[1] * m->opt.gravity[1] +
                                m->opt.gravity[2] * m->opt.gravity[2]) * dt * dt, PHYS_ENVELOPE_MIN);
}

// envelope of a pair with friction mu: ccp max(2 dt mu (s1 + s2), PHYS_ENVELOPE_MIN); lcp and cone
// PHYS_ENVELOPE_MIN; 0 for penalty
static double pair_envelope(const physModel* m, const physData* d, int g1, int g2, double mu) {
  if (m->opt.integrator == PHYS_INT_PBD) return pbd_envelope(m, geom_speed(m, d, g1) + geom_speed(m, d, g2));
  if (!envelope_model(m)) return 0;
  if (m->opt.contact == PHYS_CONTACT_LCP) return PHYS_ENVELOPE_LCP;
  if (m->opt.contact != PHYS_CONTACT_CCP || !(mu > 0)) return PHYS_ENVELOPE_MIN;
  return maxd(2 * m->opt.timestep * mu * (geom_speed(m, d, g1) + geom_speed(m, d, g2)), PHYS_ENVELOPE_MIN);
}

// broad-phase share of geom g (mu_max: the largest friction of the model): 4 dt mu_max s (ccp), so that the
// larger of two geoms' shares covers their pair's envelope, 2 dt mu (s1 + s2) <= 4 dt mu_max max(s1, s2)
static double geom_envelope(const physModel* m, const physData* d, int g, double mu_max) {
  if (m->opt.integrator == PHYS_INT_PBD) return pbd_envelope(m, 2 * geom_speed(m, d, g));
  if (!envelope_model(m)) return 0;
  if (m->opt.contact == PHYS_CONTACT_LCP) return PHYS_ENVELOPE_LCP;
  if (m->opt.contact != PHYS_CONTACT_CCP) return PHYS_ENVELOPE_MIN;
  return maxd(4 * m->opt.timestep * mu_max * geom_speed(m, d, g), PHYS_ENVELOPE_MIN);
}

//---------------------------------------------------------------------------------------------------------
// contact list

// sliding friction of a contact: the <pair>'s, else the larger of the geoms' (MuJoCo); 0 when the pair's
// contact dimension, the larger of the geoms' condim (MuJoCo's rule), is 1: a frictionless contact.
// Torsional and rolling friction: phys_contact_friction_ang.
static double contact_friction(const physModel* m, int g1, int g2, int pair) {
  if (pair >= 0) return m->pair_friction[pair];
  int condim = m->geom_condim[g1] > m->geom_condim[g2] ? m->geom_condim[g1] : m->geom_condim[g2];
  return condim == 1 ? 0 : maxd(m->geom_friction[3 * g1], m->geom_friction[3 * g2]);
}

void phys_contact_friction_ang(const physModel* m, const physContact* c, double ang[2]) {
  int g1 = c->geom[0], g2 = c->geom[1];
  int condim = m->geom_condim[g1] > m->geom_condim[g2] ? m->geom_condim[g1] : m->geom_condim[g2];
  ang[0] = c->pair < 0 && condim >= 4 ? maxd(m->geom_friction[3 * g1 + 1], m->geom_friction[3 * g2 + 1]) : 0;
  ang[1] = c->pair < 0 && condim == 6 ? maxd(m->geom_friction[3 * g1 + 2], m->geom_friction[3 * g2 + 2]) : 0;
}

int phys_contact_material_moves(const physModel* m, const physContact* c, int g, int what) {
  int g0 = c->geom[0], g1 = c->geom[1];
  if (c->pair >= 0 || (g != g0 && g != g1)) return 0;
  int condim = m->geom_condim[g0] > m->geom_condim[g1] ? m->geom_condim[g0] : m->geom_condim[g1];
  if (what == 0 && condim == 1) return 0;   // frictionless by dimension (a friction of 0 still moves)
  if ((what == 2 && condim < 4) || (what == 3 && condim < 6)) return 0;   // no torsion, no rolling by dimension
  int f = what == 2 ? 1 : what == 3 ? 2 : 0;   // (geom_friction's column)
  double a = what == 1 ? m->geom_restitution[g0] : m->geom_friction[3 * g0 + f];
  double b = what == 1 ? m->geom_restitution[g1] : m->geom_friction[3 * g1 + f];
  return g == g0 ? a >= b : b >= a;
}

// narrow phase of one pair, appended to list with its material; overflow counted in list->dropped
static void add_pair(const physModel* m, const physData* d, physContactList* list, int g1, int g2, int pair) {
  double margin = pair >= 0 ? m->pair_margin[pair] : maxd(m->geom_margin[g1], m->geom_margin[g2]);
  double mu_pair = contact_friction(m, g1, g2, pair);
  margin = maxd(margin, pair_envelope(m, d, g1, g2, mu_pair));
  physContact tmp[PHYS_MAXPAIRCON];
  int room = list->cap - list->n;
  physContact* out = room >= PHYS_MAXPAIRCON ? list->con + list->n : tmp;
  int n = phys_collide_geoms(m, d, g1, g2, margin, out);
  if (n == 0) return;
  if (n > room) list->dropped += n - room, n = room;
  if (out == tmp && n > 0) memcpy(list->con + list->n, tmp, sizeof(physContact) * (size_t)n);
  double mu = mu_pair, eps = pair >= 0 ? m->pair_restitution[pair] : maxd(m->geom_restitution[g1], m->geom_restitution[g2]);
  for (int i = 0; i < n; i++) {
    physContact* c = list->con + list->n + i;
    c->mu = mu;
    c->restitution = eps;
    c->pair = pair;
    c->efc_adr = -1;
    c->lambda[0] = c->lambda[1] = c->lambda[2] = 0;
    c->state[0] = c->state[1] = c->state[2] = PHYS_ROW_SEPARATING;
  }
  list->n += n;
}

// narrow phase of the candidate pairs (keys g1 << 32 | g2), in key order
static void flush_pairs(const physModel* m, const physData* d, physContactList* list, uint64_t* keys, int n) {
  sort_u64(keys, n);
  for (int i = 0; i < n; i++) add_pair(m, d, list, (int)(keys[i] >> 32), (int)(keys[i] & 0xffffffffu), -1);
}

// 1 if a geom takes part in broad-phase collisions: some contact bit and a pair function exists for it
static int collidable(const physModel* m, int g) {
  return (m->geom_contype[g] | m->geom_conaffinity[g]) != 0;
}

// candidate test of two sweep entries whose intervals overlap: different weld bodies, bounding spheres
// within the larger margin, the MJCF filter, no predefined pair of the bodies, a pair function exists
static int candidate(const physModel* m, const sweep_t* A, const sweep_t* B) {
  if (A->weld == B->weld) return 0;
  double dx = A->x[0] - B->x[0], dy = A->x[1] - B->x[1], dz = A->x[2] - B->x[2];
  double reach = A->r + B->r + maxd(A->margin, B->margin);
  if (dx * dx + dy * dy + dz * dz > reach * reach) return 0;
  int t1 = m->geom_type[A->g], t2 = m->geom_type[B->g];
  return phys_collision_filter(m, A->g, B->g) && (t1 <= t2 ? pair_fn(t1, t2) : pair_fn(t2, t1)) &&
         !(m->npair && body_pair_predefined(m, A->g, B->g));
}

// plane candidate: the geom's bounding sphere reaches below the plane's margin: (c - p0).n <= rbound + margin
// (margin_g: the geom's margin, at least its ccp envelope share)
static int plane_candidate(const physModel* m, const physData* d, int p, int g, double margin_g) {
  const double *R = d->geom_xmat + 9 * p, *p0 = d->geom_xpos + 3 * p, *c = d->geom_xpos + 3 * g;
  double h = (c[0] - p0[0]) * R[2] + (c[1] - p0[1]) * R[5] + (c[2] - p0[2]) * R[8];
  if (h > m->geom_rbound[g] + maxd(m->geom_margin[p], margin_g)) return 0;
  return phys_collision_filter(m, p, g) && pair_fn(PHYS_GEOM_PLANE, m->geom_type[g]) &&
         !(m->npair && body_pair_predefined(m, p, g));
}

// push a candidate key; flush when the buffer is full (the order then is per flush, still deterministic)
static void push_pair(const physModel* m, const physData* d, physContactList* list, uint64_t* keys, int* n, int cap,
                      int g1, int g2) {
  if (*n == cap) {
    flush_pairs(m, d, list, keys, *n);
    *n = 0;
  }
  int a = g1 < g2 ? g1 : g2, b = g1 < g2 ? g2 : g1;
  keys[(*n)++] = ((uint64_t)(uint32_t)a << 32) | (uint32_t)b;
}

//---------------------------------------------------------------------------------------------------------
// driver

// the detection at d's kinematics into list (file comment); scratch from d's arena
static void detect(const physModel* m, physData* d, physContactList* list) {
  if (m->opt.disableflags & PHYS_DSBL_CONTACT) return;
  // 1. explicit pairs
  for (int i = 0; i < m->npair; i++) add_pair(m, d, list, m->pair_geom1[i], m->pair_geom2[i], i);

  // 2. broad phase scratch: sweep entries, planes, candidate keys
  const int ng = m->ngeom;
  size_t mark = phys_stack_mark(d);
  sweep_t* S = (sweep_t*)phys_stack_alloc(d, (sizeof(sweep_t) * (size_t)ng + 7) / 8);
  int* planes = (int*)phys_stack_alloc(d, (size_t)ng / 2 + 1);
  int* ord = (int*)phys_stack_alloc(d, (size_t)ng / 2 + 1);
  double* key = phys_stack_alloc(d, (size_t)ng + 1);
  int nsweep = 0, nplane = 0;
  double mu_max = 0;   // largest friction, for ccp's envelope
  if (m->opt.contact == PHYS_CONTACT_CCP)
    for (int g = 0; g < ng; g++) mu_max = maxd(mu_max, m->geom_friction[3 * g]);
  for (int g = 0; g < ng; g++) {
    if (!collidable(m, g)) continue;
    if (m->geom_type[g] == PHYS_GEOM_PLANE) {
      planes[nplane++] = g;
      continue;
    }
    sweep_t* e = S + nsweep++;
    memcpy(e->x, d->geom_xpos + 3 * g, sizeof(e->x));
    e->r = m->geom_rbound[g], e->margin = maxd(m->geom_margin[g], geom_envelope(m, d, g, mu_max));
    e->g = g, e->weld = m->body_weldid[m->geom_bodyid[g]];
  }
  // candidate keys: every pair at once, up to the model's batch (phys_arena_pairkeys: a size of the model, not
  // of the free space, so the narrow phase's order is the same in any caller)
  size_t want = (size_t)nsweep * (size_t)(nsweep + nplane) / 2 + 8, batch = phys_arena_pairkeys(m);
  int cap = (int)(want < batch ? want : batch);
  uint64_t* keys = (uint64_t*)phys_stack_alloc(d, (size_t)cap);
  if (!S || !planes || !ord || !key || !keys) {   // only outside a guarded call (arena.h): the warning is counted
    phys_stack_free(d, mark);
    return;
  }
  int nkey = 0;

  // planes against every other collidable geom, in id order (the keys arrive sorted)
  for (int p = 0; p < nplane; p++)
    for (int a = 0; a < nsweep; a++)
      if (plane_candidate(m, d, planes[p], S[a].g, S[a].margin)) push_pair(m, d, list, keys, &nkey, cap, planes[p], S[a].g);

  // sweep axis: largest variance of the centres, var_k = E[x_k^2] - E[x_k]^2
  int axis = 0;
  if (nsweep > 1) {
    double s1[3] = {0, 0, 0}, s2[3] = {0, 0, 0}, best = -1;
    for (int a = 0; a < nsweep; a++) {
      const double* x = S[a].x;
      s1[0] += x[0], s1[1] += x[1], s1[2] += x[2];
      s2[0] += x[0] * x[0], s2[1] += x[1] * x[1], s2[2] += x[2] * x[2];
    }
    for (int k = 0; k < 3; k++) {
      double var = s2[k] / nsweep - (s1[k] / nsweep) * (s1[k] / nsweep);
      if (var > best) best = var, axis = k;
    }
  }
  // intervals [x - r - margin, x + r + margin], sorted by start, swept
  for (int a = 0; a < nsweep; a++) {
    double r = S[a].r + S[a].margin;
    S[a].lo = S[a].x[axis] - r, S[a].hi = S[a].x[axis] + r;
  }
  sort_sweep(ord, key, S, nsweep);
  for (int a = 0; a < nsweep; a++) {
    const sweep_t* A = S + ord[a];
    for (int b = a + 1; b < nsweep && key[b] <= A->hi; b++)
      if (candidate(m, A, S + ord[b])) push_pair(m, d, list, keys, &nkey, cap, A->g, S[ord[b]].g);
  }

  // 3. narrow phase in geom-pair order
  flush_pairs(m, d, list, keys, nkey);
  phys_stack_free(d, mark);
  if (list->dropped)
    phys_data_warn(d, PHYS_WARN_CONTACTS, "collision: %d contacts dropped beyond nconmax = %d (raise <size nconmax>)", list->dropped,
                      m->nconmax);
}

void phys_collision_into(const physModel* m, physData* d, physContactList* out) {
  out->n = 0;
  out->dropped = 0;
  detect(m, d, out);
}

void phys_collision(const physModel* m, physData* d) {
  physContactList list = {d->contact, 0, d->nconmax, 0, 0};
  phys_collision_into(m, d, &list);
  d->ncon = list.n;
  d->ncon_dropped = list.dropped;
}

physContactList phys_contact_list_arena(physData* d) {
  size_t bytes = sizeof(physContact) * (size_t)d->nconmax;
  physContactList list = {(physContact*)phys_stack_alloc(d, bytes / sizeof(double) + 1), 0, d->nconmax, 0, 0};
  return list;
}

// the detection into arena scratch of nconmax contacts: d->contact is not written
int phys_collision_count(const physModel* m, physData* d) {
  size_t mark = phys_stack_mark(d);
  physContactList list = phys_contact_list_arena(d);
  phys_collision_into(m, d, &list);
  phys_stack_free(d, mark);
  return list.n;
}
