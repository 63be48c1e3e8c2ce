// collision.h - collision detection: broad phase, filtering, narrow phase per geom-type pair.
//
// Conventions (shared by every pair function and by the gradient layer later):
//  - a contact's normal (frame row 0) points from geom[0] into geom[1]; frame rows 1, 2 are unit tangents,
//    the three rows a right-handed orthonormal basis; dist is the signed distance between the surfaces
//    along the normal (< 0: penetration); pos is the point midway between the two surfaces.
//  - a pair function is called with geom types t1 <= t2 (the dispatcher swaps), writes at most
//    PHYS_MAXPAIRCON contacts with dist <= margin, and fills pos, frame, dist and feature (physid.h: the
//    features of g1, g2 that produced the point, PHYS_FEAT_UNKNOWN where the function does not record them:
//    witness points on curved supports in convex.c), and witness (a GJK/EPA witness point's support vertices).
//  - manifolds: a box face on a plane gives its 4 corners; box-box face contact gives the clipped polygon,
//    reduced to at most 4 points (the deepest, then the widest spread); capsule-plane 2 points when flat.
//  - functions are pure: they read geom_xpos/geom_xmat/size from m and d and write only `out`.
#ifndef PHYS_COLLISION_H
#define PHYS_COLLISION_H

#include "physid.h"

// narrow phase of one pair: contacts written to out (capacity PHYS_MAXPAIRCON), returns their count
typedef int (*physCollideFn)(const physModel* m, const physData* d, int g1, int g2, double margin,
                             physContact* out);

// the pair function for two geom types (NULL if the pair is not supported); sets *swap when the
// geoms must be passed in the other order (t1 > t2)
physCollideFn phys_collide_fn(int type1, int type2, int* swap);

// contacts between geoms g1 and g2 (any order; normal from g1 to g2), count returned
int phys_collide_geoms(const physModel* m, const physData* d, int g1, int g2, double margin, physContact* out);

// 1 if geoms g1, g2 may collide by MJCF's filter: different weld bodies, contype/conaffinity
// ((ct1 & ca2) || (ct2 & ca1)), not parent-child (unless one is the world), not excluded
int phys_collision_filter(const physModel* m, int g1, int g2);

// a contact list a detection fills and the step's stages read: the contacts, their count, the capacity and
// the contacts found beyond it; nlimit is the number of active joint-limit rows of the step that filled the
// list (0 after a detection alone). phys_step's is d's own (d->contact, ncon, ncon_dropped, nlimit, its output);
// every re-run of a step (derivatives, the time-of-impact trial, finite differences) names its own, in arena
// memory, so the caller's d->contact is only ever read (as the step's warm-start input, physWarmStart).
typedef struct physContactList_ {
  physContact* con;         // the contacts (capacity cap)
  int n;                    // contacts in con
  int cap;                  // capacity (nconmax)
  int dropped;              // contacts found beyond cap (a data warning)
  int nlimit;               // active joint-limit rows of the step that filled the list
} physContactList;
// an empty list of d->nconmax contacts in d's arena (the caller marks/frees)
physContactList phys_contact_list_arena(physData* d);

// full collision detection at the current kinematics (geom_xpos, geom_xmat): broad phase (sort and sweep
// on bounding spheres; planes tested against everything), filter, narrow phase, explicit <pair>s;
// fills out->con[0..n) with mu and restitution of each pair; contacts beyond out->cap are dropped and
// counted (out->dropped, a data warning). out->nlimit is not touched. Scratch from d's arena.
void phys_collision_into(const physModel* m, physData* d, physContactList* out);
// phys_collision_into d's own list: d->contact[0..ncon), d->ncon_dropped
void phys_collision(const physModel* m, physData* d);
// the number of contacts phys_collision finds at the current kinematics, detected into arena scratch (nconmax
// contacts): d->contact, d->ncon and d->ncon_dropped (the next step's warm-start input) are not written. "Does
// this state touch anything". Scratch from d's arena.
int phys_collision_count(const physModel* m, physData* d);
// 1 if contact c's friction (what 0), restitution (what 1), torsional (2) or rolling friction (3) moves with geom
// g's own value: no <pair> sets it,
// the contact has friction (what 0: condim > 1), and g holds the larger of the two geoms' values (MJCF's max
// rule). At a tie BOTH geoms count: max(a, b) has no derivative there and this is its right derivative in each
// one (raising either raises the max), what a fit bounded below needs - a cube's restitution at 0 on a floor
// of restitution 0 would otherwise never leave the bound. The derivative code of every contact model uses it.
int phys_contact_material_moves(const physModel* m, const physContact* c, int g, int what);

// torsional (ang[0]) and rolling (ang[1]) friction of contact c, in m (MuJoCo's condim 4 and 6, issue 16;
// simulated under penalty only, docs/contact.md): with the pair's condim the larger of its geoms', the larger
// of the geoms' friction[1] when condim >= 4 and of friction[2] when condim is 6, else 0; 0 for a <pair>
// (physid keeps only its sliding friction). Not stored in physContact (its size sets the arena's lists)
void phys_contact_friction_ang(const physModel* m, const physContact* c, double ang[2]);

// an orthonormal right-handed frame whose first row is the unit normal n (tangents chosen
// deterministically and continuously where possible)
void phys_contact_frame(double frame[9], const double n[3]);

#endif  // PHYS_COLLISION_H
