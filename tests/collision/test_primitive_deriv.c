// test_primitive_deriv.c - Jacobians of primitive contact geometry against central finite differences of
// the pair functions themselves (pose twists applied to geom_xpos / geom_xmat, sizes in the model) in
// random poses, rigid-motion invariance (a common translation or rotation of both geoms moves pos and n
// rigidly and leaves dist unchanged), symmetric use (swapped geoms: n flips, pos and dist do not), and
// rejection of unsupported pairs and contact indices.
#include "convex.h"
#include "primitive.h"
#include "spec.h"

static physModel* M;
static physData* D;

#include "geom_deriv_check.h"

// a model with two world geoms whose types, sizes and poses the tests overwrite
static void setup(void) {
  physSpec* s = phys_spec_new();
  for (int i = 0; i < 2; i++) {
    int g = phys_spec_add_geom(s, 0, PHYS_GEOM_SPHERE);
    s->geom[g].size[0] = 0.1;
    snprintf(s->geom[g].name, PHYS_NAMELEN, "g%d", i);
  }
  physLog log = {0};
  M = phys_compile(s, &log);
  phys_spec_free(s);
  if (!M) {
    fprintf(stderr, "compile: %s\n", log.error);
    exit(1);
  }
  D = phys_make_data(M);
}

// plane-sphere and sphere-sphere in random poses
static void test_spheres(void) {
  for (int it = 0; it < 50; it++) {
    double p1[3], p2[3];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    set_geom(1, PHYS_GEOM_SPHERE, phys_rng_range(&RNG, 0.1, 1), 0, 0, p2);
    check_fd(phys_collide_plane_sphere, 0, 1, 0);
    check_rigid(0, 1, 0);
    set_geom(0, PHYS_GEOM_SPHERE, phys_rng_range(&RNG, 0.1, 1), 0, 0, p1);
    check_fd(phys_collide_sphere_sphere, 0, 1, 0);
    check_fd(phys_collide_sphere_sphere, 1, 0, 0);
    check_rigid(0, 1, 0);
    check_swap(0, 1);
  }
}

// plane-capsule (both ends, away from a flat capsule) and sphere-capsule (interior and clamped)
static void test_capsules(void) {
  int nclamp = 0, nint = 0;
  for (int it = 0; it < 50; it++) {
    double p1[3], p2[3], y[7];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    set_geom(1, PHYS_GEOM_CAPSULE, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.2, 1), 0, p2);
    double a[3] = {D->geom_xmat[9 + 2], D->geom_xmat[9 + 5], D->geom_xmat[9 + 8]};
    double nz[3] = {D->geom_xmat[2], D->geom_xmat[5], D->geom_xmat[8]};
    if (fabs(phys_dot3(a, nz)) > 1e-3) {  // ends at different heights: no reordering under perturbation
      CHECK(eval(y, phys_collide_plane_capsule, 0, 1, 0) == 2);
      for (int con = 0; con < 2; con++) {
        check_fd(phys_collide_plane_capsule, 0, 1, con);
        check_rigid(0, 1, con);
      }
    }
    set_geom(0, PHYS_GEOM_SPHERE, phys_rng_range(&RNG, 0.1, 0.5), 0, 0, p1);
    double t[3];
    phys_sub3(t, p1, p2);
    double pr = fabs(phys_dot3(t, a)), h = M->geom_size[4];
    if (fabs(pr - h) < 1e-3) continue;
    if (pr < h) nint++;
    else nclamp++;
    check_fd(phys_collide_sphere_capsule, 0, 1, 0);
    check_rigid(0, 1, 0);
  }
  CHECK(nint > 5 && nclamp > 5);
  printf("sphere-capsule: %d interior, %d clamped\n", nint, nclamp);
}

// 1 if segment parameter x (in [0,1]) is away from an active-set switch: free and 1e-3 inside, or clamped
// with its unconstrained minimizer xstar 1e-3 beyond the bound
static int away(double x, double xstar) {
  if (x == 0 || x == 1) return fabs(xstar - x) > 1e-3;
  return x > 1e-3 && x < 1 - 1e-3;
}

// capsule-capsule, non-parallel axes: closest points interior, one or both clamped
static void test_capsule_capsule(void) {
  int ncase[3] = {0, 0, 0};
  for (int it = 0; it < 200; it++) {
    double p1[3], p2[3];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_geom(0, PHYS_GEOM_CAPSULE, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.2, 1), 0, p1);
    set_geom(1, PHYS_GEOM_CAPSULE, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.2, 1), 0, p2);
    double a1[3] = {D->geom_xmat[2], D->geom_xmat[5], D->geom_xmat[8]};
    double a2[3] = {D->geom_xmat[9 + 2], D->geom_xmat[9 + 5], D->geom_xmat[9 + 8]}, cr[3];
    phys_cross3(cr, a1, a2);
    if (phys_norm3(cr) < 0.1) continue;  // nearly parallel: a second contact, out of scope
    double u[3], w[3], q0[3], r0[3], s, t;
    for (int k = 0; k < 3; k++) {
      r0[k] = p1[k] - M->geom_size[1] * a1[k], u[k] = 2 * M->geom_size[1] * a1[k];
      q0[k] = p2[k] - M->geom_size[4] * a2[k], w[k] = 2 * M->geom_size[4] * a2[k];
    }
    phys_segment_closest(&s, &t, r0, u, q0, w);
    // away from a switch of the active set: a free parameter 1e-3 from its bounds, a clamped one 1e-3 from
    // its unconstrained minimizer given the other (the bound's multiplier is proportional to that gap)
    double rr[3];
    phys_sub3(rr, r0, q0);
    double b = phys_dot3(u, w);
    double tstar = (b * s + phys_dot3(w, rr)) / phys_dot3(w, w), sstar = (b * t - phys_dot3(u, rr)) / phys_dot3(u, u);
    if (!away(s, sstar) || !away(t, tstar)) continue;
    int nclamped = (s == 0 || s == 1) + (t == 0 || t == 1);
    ncase[nclamped]++;
    check_fd(phys_collide_capsule_capsule, 0, 1, 0);
    check_fd(phys_collide_capsule_capsule, 1, 0, 0);
    check_rigid(0, 1, 0);
    check_swap(0, 1);
  }
  printf("capsule-capsule: %d interior, %d one clamped, %d both clamped\n", ncase[0], ncase[1], ncase[2]);
  CHECK(ncase[0] > 5 && ncase[1] > 5 && ncase[2] > 5);
}

// nearly parallel capsules (|a1 x a2| < 0.1): side by side, overlapping along their axes, both contacts; and
// exactly parallel ones (differentiated and rigid; differences would cross the parallel case's rule)
static void test_capsule_parallel(void) {
  int ncmp[2] = {0, 0}, nskip = 0, nparallel = 0;
  for (int it = 0; it < 100; it++) {
    double p1[3], p2[3], y[7];
    rand_pt(p1, 0.5);
    set_geom(0, PHYS_GEOM_CAPSULE, phys_rng_range(&RNG, 0.05, 0.2), phys_rng_range(&RNG, 0.2, 0.5), 0, p1);
    const double* R = D->geom_xmat;
    double r2 = phys_rng_range(&RNG, 0.05, 0.2);
    double off[3] = {M->geom_size[0] + r2 + phys_rng_range(&RNG, -0.02, 0.02), 0, phys_rng_range(&RNG, -0.3, 0.3)};
    phys_mat_vec3(p2, R, off);
    for (int k = 0; k < 3; k++) p2[k] += p1[k];
    set_geom(1, PHYS_GEOM_CAPSULE, r2, phys_rng_range(&RNG, 0.2, 0.5), 0, p2);
    memcpy(D->geom_xmat + 9, R, sizeof(double) * 9);
    if (it % 4 == 0) {  // exactly parallel: s = 0 by phys_segment_closest's rule (a switch for differences)
      int nc = eval(y, phys_collide_capsule_capsule, 0, 1, 0);
      double jac[7 * 18];
      CHECK(nc == 2);
      for (int con = 0; con < nc; con++) {
        CHECK(phys_primitive_deriv(jac, M, D, 0, 1, con) == 0);
        check_rigid(0, 1, con);
      }
      nparallel++;
      continue;
    }
    tilt(1, 0.09);
    int nc = eval(y, phys_collide_capsule_capsule, 0, 1, 0);
    for (int con = 0; con < nc; con++) {
      if (!check_fd_smooth(phys_collide_capsule_capsule, 0, 1, con)) {
        nskip++;
        continue;
      }
      ncmp[con]++;
      check_rigid(0, 1, con);
    }
  }
  printf("parallel capsules: %d first and %d second contacts compared, %d skipped; %d exactly parallel pairs\n",
         ncmp[0], ncmp[1], nskip, nparallel);
  CHECK(ncmp[0] > 45 && ncmp[1] > 45 && nparallel == 25);
}

// a box and a capsule resting flat on a plane, turned about its normal and rolled by 1e-15 rad (the corner
// and end heights tie to roundoff, so the pair function's depth order is decided by the last bit): every
// contact is differentiated (the corner is matched, not re-sorted), d dist / d(size z) = -1, d dist /
// d(box translation) = n, rigid motion
static void test_resting_ties(void) {
  for (int it = 0; it < 20; it++) {
    double p1[3] = {0, 0, 0}, p2[3], q[4], z[3] = {0, 0, 1}, x[3] = {1, 0, 0}, Rz[9], Rx[9], jac[7 * 18], y[7];
    rand_pt(p1, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    const double* Rp = D->geom_xmat;
    double nz[3] = {Rp[2], Rp[5], Rp[8]}, sz = phys_rng_range(&RNG, 0.1, 0.5);
    for (int k = 0; k < 3; k++) p2[k] = p1[k] + sz * nz[k];
    set_geom(1, PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.1, 0.5), sz, p2);
    phys_axisangle2quat(q, z, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(Rz, q);
    phys_axisangle2quat(q, x, 1e-15 * (it % 3));
    phys_quat2mat(Rx, q);
    double T[9];
    phys_mat_mul3(T, Rz, Rx);
    phys_mat_mul3(D->geom_xmat + 9, Rp, T);
    int nc = eval(y, phys_collide_plane_box, 0, 1, 0), ncol = phys_primitive_deriv_ncol(M, 0, 1);
    CHECK(nc == 4);
    for (int con = 0; con < nc; con++) {
      CHECK(phys_primitive_deriv(jac, M, D, 0, 1, con) == 0);
      CHECK_NEAR(jac[6 * ncol + 12 + 2], -1, 1e-12);
      for (int k = 0; k < 3; k++) CHECK_NEAR(jac[6 * ncol + 6 + k], nz[k], 1e-12);
      check_rigid(0, 1, con);
    }
    // a capsule lying on the plane: both ends at the same height
    double a[3];
    set_geom(1, PHYS_GEOM_CAPSULE, sz, phys_rng_range(&RNG, 0.1, 0.5), 0, p2);
    phys_axisangle2quat(q, x, 1.5707963267948966 + 1e-15 * (it % 3));
    phys_quat2mat(Rx, q);
    phys_mat_mul3(T, Rz, Rx);
    phys_mat_mul3(D->geom_xmat + 9, Rp, T);
    for (int k = 0; k < 3; k++) a[k] = D->geom_xmat[9 + 3 * k + 2];
    CHECK(fabs(phys_dot3(a, nz)) < 1e-14);
    nc = eval(y, phys_collide_plane_capsule, 0, 1, 0), ncol = phys_primitive_deriv_ncol(M, 0, 1);
    CHECK(nc == 2);
    for (int con = 0; con < nc; con++) {
      CHECK(phys_primitive_deriv(jac, M, D, 0, 1, con) == 0);
      CHECK_NEAR(jac[6 * ncol + 12], -1, 1e-12);  // d dist / d radius
      check_rigid(0, 1, con);
    }
  }
}

// plane-box: the four deepest corners, corner heights apart (no reordering)
static void test_plane_box(void) {
  int ntested = 0;
  for (int it = 0; it < 50; it++) {
    double p1[3], p2[3];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    set_geom(1, PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 1), phys_rng_range(&RNG, 0.1, 1),
             phys_rng_range(&RNG, 0.1, 1), p2);
    physContact c[PHYS_MAXPAIRCON];
    int nc = phys_collide_plane_box(M, D, 0, 1, 100.0, c);
    CHECK(nc == 4);
    check_all(phys_collide_plane_box, 0, 1);
    double jac[7 * 18];
    CHECK(phys_primitive_deriv(jac, M, D, 0, 1, 4) == -1);
    // heights of all 8 corners pairwise apart by 1e-3 (the 4th and 5th included)
    int ok = 1;
    const double *R = D->geom_xmat + 9, *s = M->geom_size + 3, nz[3] = {D->geom_xmat[2], D->geom_xmat[5], D->geom_xmat[8]};
    double hgt[8];
    for (int i = 0; i < 8; i++) {
      double xl[3] = {(i & 1) ? s[0] : -s[0], (i & 2) ? s[1] : -s[1], (i & 4) ? s[2] : -s[2]}, x[3];
      phys_mat_vec3(x, R, xl);
      hgt[i] = phys_dot3(x, nz);
      for (int j = 0; j < i; j++) ok &= fabs(hgt[i] - hgt[j]) > 1e-3;
    }
    if (!ok) continue;
    ntested++;
    for (int con = 0; con < 4; con++) {
      check_fd(phys_collide_plane_box, 0, 1, con);
      check_rigid(0, 1, con);
      CHECK(phys_primitive_deriv(jac, M, D, 0, 1, con) == 0);
      int ncol = phys_primitive_deriv_ncol(M, 0, 1);
      for (int j = 6; j < ncol; j++)  // the normal is the plane's: independent of the box
        for (int i = 3; i < 6; i++) CHECK(jac[i * ncol + j] == 0);
    }
  }
  CHECK(ntested > 20);
}

// box-box: random poses (face and edge axes, separated and overlapping, margin 100) and a box resting on
// another, slightly tilted and turned (issue 5's cube on cube: clipped polygons with incident vertices,
// incident edges on the reference face's sides and reference corners); every contact of each pair
static void test_box_box(void) {
  int nface = 0, nedge = 0, ncon = 0, nskip = 0;
  for (int it = 0; it < 160; it++) {
    double p1[3], p2[3], y[7];
    rand_pt(p1, 0.3);
    set_geom(0, PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.1, 0.5),
             phys_rng_range(&RNG, 0.1, 0.5), p1);
    if (it % 2 == 0) {
      rand_pt(p2, 1);
      set_geom(1, PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.5), phys_rng_range(&RNG, 0.1, 0.5),
               phys_rng_range(&RNG, 0.1, 0.5), p2);
    } else {  // B on A's face +z, turned about it, tilted by up to 0.05 rad, sunk by up to 0.01
      const double* RA = D->geom_xmat;
      double sB[3] = {phys_rng_range(&RNG, 0.1, 0.4), phys_rng_range(&RNG, 0.1, 0.4), phys_rng_range(&RNG, 0.1, 0.4)};
      double off[3] = {phys_rng_range(&RNG, -0.2, 0.2), phys_rng_range(&RNG, -0.2, 0.2),
                       M->geom_size[2] + sB[2] - phys_rng_range(&RNG, -0.005, 0.01)};
      phys_mat_vec3(p2, RA, off);
      for (int k = 0; k < 3; k++) p2[k] += p1[k];
      set_geom(1, PHYS_GEOM_BOX, sB[0], sB[1], sB[2], p2);
      double q[4], ax[3] = {0, 0, 1}, Rz[9];
      phys_axisangle2quat(q, ax, phys_rng_range(&RNG, -3.14, 3.14));
      phys_quat2mat(Rz, q);
      phys_mat_mul3(D->geom_xmat + 9, RA, Rz);
      tilt(1, 0.05);
    }
    int nc = eval(y, phys_collide_box_box, 0, 1, 0), face = 0;
    if (nc == 0) continue;  // far apart, the incident face beside the reference face: no contact
    check_all(phys_collide_box_box, 0, 1);
    for (int g = 0; g < 2; g++)  // a face axis: the normal is an axis of A or B
      for (int k = 0; k < 3; k++) {
        const double* R = D->geom_xmat + 9 * g;
        face |= fabs(R[k] * y[3] + R[3 + k] * y[4] + R[6 + k] * y[5]) > 1 - 1e-12;
      }
    for (int con = 0; con < nc; con++) {
      if (!check_fd_smooth(phys_collide_box_box, 0, 1, con)) {
        nskip++;
        continue;
      }
      ncon++;
      check_rigid(0, 1, con);
      if (face) nface++;
      else nedge++;
    }
    if (nc == 1 && check_fd_smooth(phys_collide_box_box, 1, 0, 0)) check_swap(0, 1);
  }
  printf("box-box: %d contacts compared (%d on a face axis, %d edge-edge), %d skipped next to a switch\n", ncon,
         nface, nedge, nskip);
  CHECK(nface > 100 && nedge > 20 && nskip < ncon / 4);
}

// box-box at margin 0: a tilted box on a face keeps only its points below the face, so the contact list
// (and its reduction to 4) differs from the unbounded margin; phys_primitive_deriv_margin follows it
static void test_box_box_margin(void) {
  int ndiff = 0;
  for (int it = 0; it < 40; it++) {
    double p1[3] = {0, 0, 0}, p2[3], y[7], jac[7 * 18];
    set_geom(0, PHYS_GEOM_BOX, 0.15, 0.15, 0.1, p1);
    memcpy(D->geom_xmat, (double[9]){1, 0, 0, 0, 1, 0, 0, 0, 1}, sizeof(double) * 9);
    double off[3] = {phys_rng_range(&RNG, -0.03, 0.03), phys_rng_range(&RNG, -0.03, 0.03), 0.1 + 0.15 - 0.004};
    memcpy(p2, off, sizeof(p2));
    set_geom(1, PHYS_GEOM_BOX, 0.18, 0.17, 0.15, p2);  // turned: an octagon of up to 8 points, reduced to 4
    double q[4], ax[3] = {0, 0, 1};
    phys_axisangle2quat(q, ax, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(D->geom_xmat + 9, q);
    tilt(1, 0.05);
    MARGIN = 0;
    int nc0 = eval(y, phys_collide_box_box, 0, 1, 0);
    MARGIN = INFINITY;
    int nc = eval(y, phys_collide_box_box, 0, 1, 0);
    MARGIN = 0;
    for (int con = 0; con < nc0; con++) {
      eval(y, phys_collide_box_box, 0, 1, con);
      double j0[7 * 18];
      CHECK(phys_primitive_deriv_margin(j0, M, D, 0, 1, con, 0) == 0);
      if (phys_primitive_deriv(jac, M, D, 0, 1, con) != 0 || memcmp(j0, jac, sizeof(double) * 7 * 18)) ndiff++;
      check_fd_smooth(phys_collide_box_box, 0, 1, con);
    }
    CHECK(phys_primitive_deriv_margin(jac, M, D, 0, 1, nc0, 0) == -1);
    MARGIN = 100;
    CHECK(nc0 >= 1 && nc >= nc0);
  }
  printf("box-box at margin 0: %d contacts differ from the unbounded margin's of the same index\n", ndiff);
  CHECK(ndiff > 10);
}

// sphere-box and sphere-cylinder: centre outside (face, edge, corner / side, cap, rim regions) and inside
static void test_sphere_box_cylinder(void) {
  int nin[2] = {0, 0}, nout[2] = {0, 0}, nskip = 0;
  physCollideFn fns[2] = {phys_collide_sphere_box, phys_collide_sphere_cylinder};
  for (int it = 0; it < 200; it++) {
    double p1[3], p2[3] = {0, 0, 0};
    int c = it % 2;
    rand_pt(p1, 0.8);
    set_geom(1, c ? PHYS_GEOM_CYLINDER : PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.2, 0.6),
             phys_rng_range(&RNG, 0.2, 0.6), phys_rng_range(&RNG, 0.2, 0.6), p2);
    set_geom(0, PHYS_GEOM_SPHERE, phys_rng_range(&RNG, 0.1, 0.5), 0, 0, p1);
    double xl[3];
    phys_matT_vec3(xl, D->geom_xmat + 9, p1);
    const double* s = M->geom_size + 3;
    int inside = c ? (hypot(xl[0], xl[1]) < s[0] && fabs(xl[2]) < s[1])
                   : (fabs(xl[0]) < s[0] && fabs(xl[1]) < s[1] && fabs(xl[2]) < s[2]);
    if (!check_fd_smooth(fns[c], 0, 1, 0)) {
      nskip++;
      continue;
    }
    check_rigid(0, 1, 0);
    if (inside) nin[c]++;
    else nout[c]++;
  }
  printf("sphere-box: %d outside, %d inside; sphere-cylinder: %d outside, %d inside; %d skipped\n", nout[0], nin[0],
         nout[1], nin[1], nskip);
  CHECK(nin[0] > 3 && nout[0] > 30 && nin[1] > 3 && nout[1] > 30);
}

// plane-ellipsoid and plane-cylinder (the cylinder tilted: a rim contact, its line contact when on its side)
static void test_plane_curved(void) {
  int ncyl = 0, nskip = 0;
  for (int it = 0; it < 50; it++) {
    double p1[3], p2[3], y[7];
    rand_pt(p1, 1), rand_pt(p2, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    set_geom(1, PHYS_GEOM_ELLIPSOID, phys_rng_range(&RNG, 0.1, 0.6), phys_rng_range(&RNG, 0.1, 0.6),
             phys_rng_range(&RNG, 0.1, 0.6), p2);
    check_fd(phys_collide_plane_ellipsoid, 0, 1, 0);
    check_rigid(0, 1, 0);
    set_geom(1, PHYS_GEOM_CYLINDER, phys_rng_range(&RNG, 0.1, 0.6), phys_rng_range(&RNG, 0.1, 0.6), 0, p2);
    int nc = eval(y, phys_collide_plane_cylinder, 0, 1, 0);
    CHECK(nc == 4);
    for (int con = 0; con < nc; con++) {
      check_rigid(0, 1, con);
      if (!check_fd_smooth(phys_collide_plane_cylinder, 0, 1, con)) {
        nskip++;
        continue;
      }
      ncyl++;
    }
  }
  // the lower rim's points at +-v (v = a x u, parallel to the plane) are always level: their order is a tie
  // that any perturbation decides, so only contacts 0 and 1 are compared with differences
  printf("plane-cylinder: %d contacts compared, %d skipped (level pairs)\n", ncyl, nskip);
  CHECK(ncyl >= 90);
}

// capsule-box: random poses (segment outside: an end or the segment against a face, an edge or a corner;
// segment meeting the box: the separating face or edge axis) and capsules lying on the top face, tilted by
// up to 0.05 rad, above or sunk (face contacts at both clipped ends)
static void test_capsule_box(void) {
  int ncmp = 0, nskip = 0, nface = 0, nmeet = 0;
  for (int it = 0; it < 300; it++) {
    double p1[3], p2[3] = {0, 0, 0}, y[7];
    set_geom(1, PHYS_GEOM_BOX, phys_rng_range(&RNG, 0.1, 0.4), phys_rng_range(&RNG, 0.1, 0.4),
             phys_rng_range(&RNG, 0.1, 0.4), p2);
    double r = phys_rng_range(&RNG, 0.05, 0.2), h = phys_rng_range(&RNG, 0.1, 0.4);
    if (it % 3 < 2) {
      rand_pt(p1, it % 3 ? 0.7 : 0.35);
      set_geom(0, PHYS_GEOM_CAPSULE, r, h, 0, p1);
    } else {  // on the top face, axis in the face plane, then tilted
      const double* R = D->geom_xmat + 9;
      double off[3] = {phys_rng_range(&RNG, -0.1, 0.1), phys_rng_range(&RNG, -0.1, 0.1),
                       M->geom_size[5] + r + phys_rng_range(&RNG, -0.02, 0.02)}, q[4], Rl[9];
      phys_mat_vec3(p1, R, off);
      set_geom(0, PHYS_GEOM_CAPSULE, r, h, 0, p1);
      double ax[3] = {phys_rng_range(&RNG, -1, 1), phys_rng_range(&RNG, -1, 1), 0};
      phys_normalize3(ax);
      phys_axisangle2quat(q, ax, 1.5707963267948966);
      phys_quat2mat(Rl, q);
      phys_mat_mul3(D->geom_xmat, R, Rl);
      tilt(0, 0.05);
    }
    int nc = eval(y, phys_collide_capsule_box, 0, 1, 0);
    if (nc == 0) continue;
    check_all(phys_collide_capsule_box, 0, 1);
    double a[3] = {D->geom_xmat[2], D->geom_xmat[5], D->geom_xmat[8]}, xl[3];
    phys_matT_vec3(xl, D->geom_xmat + 9, D->geom_xpos);
    int meet = 0;
    for (double t = -1; t <= 1; t += 1.0 / 64) {  // segment points inside the box
      double w[3], l[3];
      for (int k = 0; k < 3; k++) w[k] = D->geom_xpos[k] + t * M->geom_size[1] * a[k];
      phys_matT_vec3(l, D->geom_xmat + 9, w);
      meet |= fabs(l[0]) < M->geom_size[3] && fabs(l[1]) < M->geom_size[4] && fabs(l[2]) < M->geom_size[5];
    }
    for (int con = 0; con < nc; con++) {
      if (!check_fd_smooth(phys_collide_capsule_box, 0, 1, con)) {
        nskip++;
        continue;
      }
      ncmp++;
      nface += nc == 2;
      nmeet += meet;
      check_rigid(0, 1, con);
    }
  }
  printf("capsule-box: %d contacts compared (%d of 2-point face contacts, %d with the axis inside the box), %d "
         "skipped\n", ncmp, nface, nmeet, nskip);
  CHECK(ncmp > 200 && nface > 40 && nmeet > 30 && nskip < ncmp / 4);
}

// a cylinder standing upright on a plane, tilted by 0, 1e-9 or 1e-7 rad (the rim points' directions are
// arbitrary there: they turn with the body): every contact differentiated with bounded entries, d dist /
// d(cylinder translation) = n, d dist / d h = -1, rigid motion
static void test_cylinder_upright(void) {
  for (int it = 0; it < 30; it++) {
    double p1[3], p2[3], jac[7 * 18], y[7], T[9], q[4], z[3] = {0, 0, 1};
    rand_pt(p1, 1);
    set_geom(0, PHYS_GEOM_PLANE, 0, 0, 0, p1);
    const double* Rp = D->geom_xmat;
    double nz[3] = {Rp[2], Rp[5], Rp[8]}, h = phys_rng_range(&RNG, 0.1, 0.5);
    for (int k = 0; k < 3; k++) p2[k] = p1[k] + (h - 1e-3) * nz[k];
    set_geom(1, PHYS_GEOM_CYLINDER, phys_rng_range(&RNG, 0.1, 0.5), h, 0, p2);
    phys_axisangle2quat(q, z, phys_rng_range(&RNG, -3.14, 3.14));
    phys_quat2mat(T, q);
    phys_mat_mul3(D->geom_xmat + 9, Rp, T);
    tilt(1, (it % 3 == 0 ? 0 : it % 3 == 1 ? 1e-9 : 1e-7));
    int nc = eval(y, phys_collide_plane_cylinder, 0, 1, 0), ncol = phys_primitive_deriv_ncol(M, 0, 1);
    CHECK(nc == 4);
    for (int con = 0; con < nc; con++) {
      CHECK(phys_primitive_deriv(jac, M, D, 0, 1, con) == 0);
      double big = 0;
      for (int j = 0; j < 7 * ncol; j++) big = fmax(big, fabs(jac[j]));
      CHECK_MSG(big < 10, "largest entry %g", big);
      for (int k = 0; k < 3; k++) CHECK_NEAR(jac[6 * ncol + 6 + k], nz[k], 1e-9);
      CHECK_NEAR(jac[6 * ncol + 12 + 1], -1, 1e-9);
      check_rigid(0, 1, con);
    }
  }
}

// unsupported pairs and indices are refused
static void test_refused(void) {
  double p[3] = {0, 0, 0}, q[3] = {0.1, 0.2, 0.3}, jac[7 * 18];
  set_geom(0, PHYS_GEOM_SPHERE, 0.3, 0, 0, p);
  set_geom(1, PHYS_GEOM_SPHERE, 0.3, 0, 0, q);
  CHECK(phys_primitive_deriv(jac, M, D, 0, 1, 1) == -1);
  set_geom(1, PHYS_GEOM_SPHERE, 0.3, 0, 0, p);  // concentric: normal undefined
  CHECK(phys_primitive_deriv(jac, M, D, 0, 1, 0) == -1);
}

// geom g: type, sizes, position pos, rotation about the unit axis ax by ang
static void set_pose(int g, int type, double s0, double s1, double s2, const double pos[3], const double ax[3],
                     double ang) {
  double q[4];
  set_geom(g, type, s0, s1, s2, pos);
  phys_axisangle2quat(q, ax, ang);
  phys_quat2mat(D->geom_xmat + 9 * g, q);
}

#define FEAT(kind, i) PHYS_FEATURE(PHYS_FEAT_##kind, i)
#define FIN(kind, i) PHYS_FEATURE_FLAGGED(PHYS_FEAT_##kind, i, PHYS_FEATF_INSIDE)

// the contact of fn's output with features f (of both geoms) at input column j moved by eps; 1 if found
static int eval_feat(double y[7], physCollideFn fn, int g1, int g2, const int f[2], int j, double eps) {
  physContact out[PHYS_MAXPAIRCON];
  pairInputs keep;
  inputs_save(&keep, g1, g2);
  perturb(g1, g2, j, eps);
  int n = fn(M, D, g1, g2, MARGIN, out), found = 0;
  for (int i = 0; i < n && !found; i++)
    if (out[i].feature[0] == f[0] && out[i].feature[1] == f[1]) {
      memcpy(y, out[i].pos, sizeof(double) * 3), memcpy(y + 3, out[i].frame, sizeof(double) * 3), y[6] = out[i].dist;
      found = 1;
    }
  inputs_restore(&keep);
  return found;
}

// the Jacobian jac (7 x ncol) of the contact with features f against the fourth-order central differences of
// the pair function, the contact found at every step by its features (depth ties reorder a manifold)
static void check_fd_feat(const char* what, physCollideFn fn, int g1, int g2, const int f[2], const double* jac) {
  int ncol = phys_primitive_deriv_ncol(M, g1, g2);
  const double step[4] = {FDSTEP, -FDSTEP, 2 * FDSTEP, -2 * FDSTEP};
  double y[4][7];
  for (int j = 0; j < ncol; j++) {
    int found = 1;
    for (int k = 0; k < 4; k++) found &= eval_feat(y[k], fn, g1, g2, f, j, step[k]);
    CHECK_MSG(found, "%s: column %d: the feature is lost within the stencil", what, j);
    for (int i = 0; i < 7 && found; i++) {
      double fd = (8 * (y[0][i] - y[1][i]) - (y[2][i] - y[3][i])) / (12 * FDSTEP), an = jac[i * ncol + j];
      double e = fabs(an - fd) / fmax(fmax(fabs(an), fabs(fd)), FLOOR);
      if (e > WORST) WORST = e;
      CHECK_MSG(e <= RTOL, "%s: column %d row %d: %.12g vs central %.12g", what, j, i, an, fd);
    }
  }
}

// contact con of the pair function fn (at MARGIN) records features f1, f2 (-1: not checked), its derivative matches
// the central differences, and the derivative reads that record: with geom `which`'s feature replaced by `wrong`
// (another feature of the same pair) the derivative's point is another one and the contact is refused
static void check_recorded(const char* what, physCollideFn fn, int g1, int g2, int con, int f1, int f2, int which,
                           int wrong) {
  physContact out[PHYS_MAXPAIRCON];
  double jac[7 * 18];
  int nout = fn(M, D, g1, g2, MARGIN, out);
  CHECK_MSG(con < nout, "%s: %d contacts", what, nout);
  if (con >= nout) return;
  CHECK_MSG((f1 < 0 || out[con].feature[0] == f1) && (f2 < 0 || out[con].feature[1] == f2),
            "%s: features %#x %#x, want %#x %#x", what, out[con].feature[0], out[con].feature[1], f1, f2);
  CHECK_MSG(phys_primitive_deriv_out(jac, M, D, g1, g2, con, out, nout) == 0, "%s: refused", what);
  check_fd_feat(what, fn, g1, g2, out[con].feature, jac);
  out[con].feature[which] = wrong;
  CHECK_MSG(phys_primitive_deriv_out(jac, M, D, g1, g2, con, out, nout) == -1, "%s: a wrong feature accepted", what);
}

// a contact at a feature switch (exactly at an edge, faces exactly parallel and flush): the pair function has
// only one-sided derivatives there; along every input column, on a side where the pair function keeps the contact
// with the same features (found by them at steps h and 2h), the derivative of the recorded feature equals the
// second-order one-sided difference (-3 f(0) + 4 f(s h) - f(2 s h)) / (2 s h). Adds the (column, side) pairs
// compared to *ncmp and returns the columns where only one side keeps the feature (the switch)
static int check_onesided(const char* what, physCollideFn fn, int g1, int g2, int con, int* ncmp) {
  physContact out[PHYS_MAXPAIRCON];
  int nout = fn(M, D, g1, g2, MARGIN, out), ncol = phys_primitive_deriv_ncol(M, g1, g2), nswitch = 0;
  double jac[7 * 18], y1[7], y2[7], h = 1e-6;
  CHECK(con < nout);
  if (con >= nout) return 0;
  const int f[2] = {out[con].feature[0], out[con].feature[1]};
  const double y0[7] = {out[con].pos[0], out[con].pos[1], out[con].pos[2], out[con].frame[0], out[con].frame[1],
                        out[con].frame[2], out[con].dist};
  CHECK_MSG(phys_primitive_deriv_out(jac, M, D, g1, g2, con, out, nout) == 0, "%s: refused", what);
  for (int j = 0; j < ncol; j++) {
    int sides = 0;
    for (int s = -1; s <= 1; s += 2) {
      if (!eval_feat(y1, fn, g1, g2, f, j, s * h) || !eval_feat(y2, fn, g1, g2, f, j, 2 * s * h)) continue;
      sides++, (*ncmp)++;
      for (int i = 0; i < 7; i++) {
        double fd = (-3 * y0[i] + 4 * y1[i] - y2[i]) / (2 * s * h), an = jac[i * ncol + j];
        CHECK_MSG(fabs(an - fd) <= 1e-6 * fmax(fmax(fabs(an), fabs(fd)), FLOOR), "%s: column %d side %d row %d: %.12g "
                  "vs one-sided %.12g", what, j, s, i, an, fd);
      }
    }
    nswitch += sides == 1;
  }
  return nswitch;
}

// every pair reads the features its contact records (physid.h): box-box edge axis and face clipping, capsule-box
// segment-face (ends and prism exits), segment-edge, segment-corner and inside the box, the cylinder cases
// (plane: rim points of either cap; sphere: cap, side, rim, inside), plane-capsule's ends, capsule-capsule's
// second contact, sphere-box's corner / edge / face / inside; each matches central differences and is refused
// with another feature; then degenerate contacts (exactly at an edge, faces exactly flush) against one-sided
// differences
static void test_recorded_features(void) {
  const double o[3] = {0, 0, 0}, X[3] = {1, 0, 0}, Y[3] = {0, 1, 0}, Z[3] = {0, 0, 1};
  const double pi = 3.14159265358979323846;
  // box-box: edge axis (unit cubes, A turned 45 deg about x, B about y: A's EDGE 3, B's EDGE 6, no flags)
  double zB[3] = {0.01, 0.02, sqrt(2) - 0.01};
  set_pose(0, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, o, X, pi / 4);
  set_pose(1, PHYS_GEOM_BOX, 0.5, 0.5, 0.5, zB, Y, pi / 4);
  check_recorded("box-box edge axis", phys_collide_box_box, 0, 1, 0, FEAT(EDGE, 3), FEAT(EDGE, 6), 1, FEAT(EDGE, 2));
  // box-box face: B (0.35, 0.35, 0.1) turned 45 deg about z on A's +z face (0.3 cube), 0.01 deep: clipped points
  // where the faces' edges cross (one box the reference, the other the incident, both by their z faces); a point
  // read with the features of another one is refused
  double zs[3] = {0.01, -0.02, 0.39};
  set_pose(0, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, o, Z, 0);
  set_pose(1, PHYS_GEOM_BOX, 0.35, 0.35, 0.1, zs, Z, pi / 4 + 0.05);
  tilt(1, 0.02);   // not exactly parallel: A's face is the reference
  physContact c[PHYS_MAXPAIRCON];
  int nc = phys_collide_box_box(M, D, 0, 1, MARGIN, c);
  CHECK(nc == 4);
  for (int k = 0; k < nc; k++) {
    int fl0 = PHYS_FEATURE_FLAGS(c[k].feature[0]), fl1 = PHYS_FEATURE_FLAGS(c[k].feature[1]);
    CHECK(fl0 + fl1 == (PHYS_FEATF_REF | PHYS_FEATF_INC) && (fl0 == PHYS_FEATF_REF || fl0 == PHYS_FEATF_INC));
    CHECK(PHYS_FEATURE_AXIS(c[k].feature[0]) == 2 && PHYS_FEATURE_AXIS(c[k].feature[1]) == 2);
    check_recorded("box-box face clipping", phys_collide_box_box, 0, 1, k, c[k].feature[0], c[k].feature[1], 0,
                   c[(k + 1) % nc].feature[0]);
  }
  // capsule-box (box half 0.3 at the origin; capsule r 0.05, h 0.2): flat on the +z face (both ends, VERTEX 0, 1),
  // overhanging the +x side (VERTEX 0 and the exit from the face's prism, EDGE 2), across the edge along y at x+,
  // z+ (EDGE 7) outside (segment inside: EDGE 0) and cutting into it (flagged inside), an end at corner 7
  set_pose(1, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, o, Z, 0);
  double cf[3] = {0.02, 0.01, 0.34};
  set_pose(0, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, cf, Y, pi / 2);
  check_recorded("capsule-box face end 0", phys_collide_capsule_box, 0, 1, 0, FEAT(VERTEX, 0), FEAT(FACE, 5), 0,
                 FEAT(VERTEX, 1));
  check_recorded("capsule-box face end 1", phys_collide_capsule_box, 0, 1, 1, FEAT(VERTEX, 1), FEAT(FACE, 5), 1,
                 FEAT(FACE, 4));
  cf[0] = 0.25;
  set_pose(0, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, cf, Y, pi / 2);
  check_recorded("capsule-box face exit", phys_collide_capsule_box, 0, 1, 1, FEAT(EDGE, 2), FEAT(FACE, 5), 0,
                 FEAT(EDGE, 1));
  cf[2] = 0.28;   // the segment inside the box: the face axis, flagged
  set_pose(0, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, cf, Y, pi / 2);
  check_recorded("capsule-box inside face", phys_collide_capsule_box, 0, 1, 0, FIN(VERTEX, 0), FEAT(FACE, 5), 0,
                 FIN(VERTEX, 1));
  for (int inside = 0; inside < 2; inside++) {   // axis (1, 0, -1)/sqrt 2 across the edge, 0.05 off it / 0.02 in
    double d = inside ? -0.02 : 0.05, ce[3] = {0.3 + d / sqrt(2), 0.03, 0.3 + d / sqrt(2)};
    set_pose(0, PHYS_GEOM_CAPSULE, 0.1, 0.2, 0, ce, Y, 3 * pi / 4);
    check_recorded(inside ? "capsule-box inside edge axis" : "capsule-box segment-edge", phys_collide_capsule_box, 0,
                   1, 0, inside ? FIN(EDGE, 0) : FEAT(EDGE, 0), FEAT(EDGE, 7), 1, FEAT(EDGE, 6));
  }
  double a3[3] = {-1, 1, 0}, cv[3];
  phys_normalize3(a3);
  for (int k = 0; k < 3; k++) cv[k] = 0.3 + 0.25 / sqrt(3);   // end 0 (c - h a) 0.05 beyond the corner
  set_pose(0, PHYS_GEOM_CAPSULE, 0.1, 0.2, 0, cv, a3, acos(1 / sqrt(3)));
  check_recorded("capsule-box end-corner", phys_collide_capsule_box, 0, 1, 0, FEAT(VERTEX, 0), FEAT(VERTEX, 7), 1,
                 FEAT(VERTEX, 3));
  // plane-cylinder: standing 0.01 deep (the -h cap's rim at u, v, -u, -v: EDGE 0, 2, 4, 6), upside down (the +h
  // cap: EDGE 1 + 2 q), on its side (the rims of both caps at u: EDGE 0 and 1)
  double zc[3] = {0, 0, 0.19};
  set_pose(0, PHYS_GEOM_PLANE, 0, 0, 0, o, Z, 0);
  for (int flip = 0; flip < 2; flip++) {
    set_pose(1, PHYS_GEOM_CYLINDER, 0.1, 0.2, 0, zc, X, flip ? pi + 0.02 : 0.02);
    nc = phys_collide_plane_cylinder(M, D, 0, 1, 0, c);
    CHECK(nc == 4);
    for (int k = 0; k < nc; k++) {
      int f = c[k].feature[1];
      CHECK(PHYS_FEATURE_KIND(f) == PHYS_FEAT_EDGE && (PHYS_FEATURE_INDEX(f) & 1) == flip);
      MARGIN = 0;
      check_recorded("plane-cylinder rim", phys_collide_plane_cylinder, 0, 1, k, FEAT(FACE, 0), f, 1,
                     FEAT(EDGE, PHYS_FEATURE_INDEX(f) ^ 2));
      MARGIN = 100;
    }
  }
  zc[2] = 0.09;
  set_pose(1, PHYS_GEOM_CYLINDER, 0.1, 0.2, 0, zc, Y, pi / 2);
  MARGIN = 0;
  check_recorded("plane-cylinder side 0", phys_collide_plane_cylinder, 0, 1, 0, FEAT(FACE, 0), -1, 1, FEAT(EDGE, 2));
  check_recorded("plane-cylinder side 1", phys_collide_plane_cylinder, 0, 1, 1, FEAT(FACE, 0), -1, 1, FEAT(EDGE, 3));
  nc = phys_collide_plane_cylinder(M, D, 0, 1, 0, c);
  CHECK(nc == 2 && c[0].feature[1] + c[1].feature[1] == FEAT(EDGE, 0) + FEAT(EDGE, 1));
  MARGIN = 100;
  // sphere-cylinder (cylinder r 0.2, h 0.3; sphere r 0.1): above the +h cap, beside it, at the +h and -h rims,
  // inside near the -h cap, inside near the side
  const double sc[6][3] = {{0.05, 0, 0.35}, {0.25, 0, 0.02}, {0.25, 0, 0.35}, {0.25, 0, -0.35}, {0, 0.05, -0.28},
                           {0.18, 0, 0.01}};
  const int fs[6] = {FEAT(SURFACE, 0), FEAT(SURFACE, 0), FEAT(SURFACE, 0), FEAT(SURFACE, 0), FIN(SURFACE, 0),
                     FIN(SURFACE, 0)};
  const int fcyl[6] = {FEAT(FACE, 1), FEAT(SURFACE, 0), FEAT(EDGE, 1), FEAT(EDGE, 0), FEAT(FACE, 0), FEAT(SURFACE, 0)};
  const int fwrong[6] = {FEAT(SURFACE, 0), FEAT(FACE, 1), FEAT(FACE, 1), FEAT(EDGE, 1), FEAT(FACE, 1), FEAT(FACE, 0)};
  set_pose(1, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, o, Z, 0);
  for (int k = 0; k < 6; k++) {
    set_pose(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sc[k], Z, 0);
    check_recorded("sphere-cylinder", phys_collide_sphere_cylinder, 0, 1, 0, fs[k], fcyl[k], 1, fwrong[k]);
  }
  // sphere-box (half 0.2): corner 7, edge along z at x+ y- (EDGE 9), face -y (FACE 2), inside near +x (FACE 1)
  const double sb[4][3] = {{0.25, 0.25, 0.25}, {0.25, -0.25, 0.1}, {0.05, -0.25, 0.1}, {0.15, 0.02, 0.01}};
  const int fb[4] = {FEAT(VERTEX, 7), FEAT(EDGE, 9), FEAT(FACE, 2), FEAT(FACE, 1)};
  const int fbw[4] = {FEAT(VERTEX, 6), FEAT(EDGE, 8), FEAT(FACE, 3), FEAT(FACE, 0)};
  set_pose(1, PHYS_GEOM_BOX, 0.2, 0.2, 0.2, o, Z, 0);
  for (int k = 0; k < 4; k++) {
    set_pose(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, sb[k], Z, 0);
    check_recorded("sphere-box", phys_collide_sphere_box, 0, 1, 0, k < 3 ? FEAT(SURFACE, 0) : FIN(SURFACE, 0), fb[k],
                   1, fbw[k]);
  }
  // plane-capsule: lying tilted, its -h end deeper (VERTEX 0) then its +h end (VERTEX 1)
  double pc[3] = {0, 0, 0.05};
  set_pose(1, PHYS_GEOM_CAPSULE, 0.1, 0.3, 0, pc, Y, pi / 2 + 0.1);
  set_pose(0, PHYS_GEOM_PLANE, 0, 0, 0, o, Z, 0);
  check_recorded("plane-capsule deeper end", phys_collide_plane_capsule, 0, 1, 0, FEAT(FACE, 0), FEAT(VERTEX, 1), 1,
                 FEAT(VERTEX, 0));
  check_recorded("plane-capsule other end", phys_collide_plane_capsule, 0, 1, 1, FEAT(FACE, 0), FEAT(VERTEX, 0), 1,
                 FEAT(VERTEX, 1));
  // capsule-capsule nearly parallel (0.05 rad): the second contact faces capsule 2's +h end (EDGE 4)
  double q1[3] = {0.15, 0.01, 0.05};
  set_pose(0, PHYS_GEOM_CAPSULE, 0.1, 0.3, 0, o, Z, 0);
  set_pose(1, PHYS_GEOM_CAPSULE, 0.1, 0.1, 0, q1, Y, 0.05);
  check_recorded("capsule-capsule closest", phys_collide_capsule_capsule, 0, 1, 0, FEAT(EDGE, 0), FEAT(VERTEX, 0), 1,
                 FEAT(VERTEX, 1));
  check_recorded("capsule-capsule second", phys_collide_capsule_capsule, 0, 1, 1, FEAT(EDGE, 4), FEAT(EDGE, 0), 0,
                 FEAT(EDGE, 3));

  // degenerate: equal cubes stacked flush (faces parallel, every corner of B's lower face exactly on A's face
  // edges), 0.01 deep; a sphere centred exactly above a box edge (x = s: the face and the edge meet); a capsule
  // lying on a box face with its end exactly above the face's edge
  int nsw = 0, ncmp = 0;
  double zf[3] = {0, 0, 0.59};
  set_pose(0, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, o, Z, 0);
  set_pose(1, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, zf, Z, 0);
  nc = phys_collide_box_box(M, D, 0, 1, MARGIN, c);
  CHECK(nc == 4);
  for (int k = 0; k < nc; k++) nsw += check_onesided("flush cubes", phys_collide_box_box, 0, 1, k, &ncmp);
  set_pose(1, PHYS_GEOM_BOX, 0.2, 0.2, 0.2, o, Z, 0);
  double se[3] = {0.2, 0.05, 0.28};
  set_pose(0, PHYS_GEOM_SPHERE, 0.1, 0, 0, se, Z, 0);
  nsw += check_onesided("sphere above a box edge", phys_collide_sphere_box, 0, 1, 0, &ncmp);
  set_pose(1, PHYS_GEOM_BOX, 0.3, 0.3, 0.3, o, Z, 0);
  double ce2[3] = {0.1, 0, 0.34};
  set_pose(0, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, ce2, Y, pi / 2);
  for (int k = 0; k < 2; k++)
    nsw += check_onesided("capsule end above a box edge", phys_collide_capsule_box, 0, 1, k, &ncmp);
  printf("recorded features: %d (column, side) pairs compared at the degenerate contacts, %d columns one-sided\n",
         ncmp, nsw);
  CHECK(ncmp >= 150 && nsw >= 6);
}

#define FB(kind, i) PHYS_FEATURE(PHYS_FEAT_##kind, i)

// the witness point of the GJK/EPA pair (geoms 0, 1: phys_collide_convex_convex) lies on a smooth patch of geom
// `which` (flagged WITNESS, no support vertices recorded for it) with the feature want (PHYS_FEATURE_BASE; -1: any)
// and check_recorded's checks hold, another patch of the shape given as the wrong feature; returns the patch
static int check_smooth(const char* what, int which, int want) {
  physContact out[PHYS_MAXPAIRCON];
  int n = phys_collide_convex_convex(M, D, 0, 1, MARGIN, out);
  CHECK_MSG(n == 1, "%s: %d contacts", what, n);
  if (n != 1) return -1;
  int f = out[0].feature[which], base = PHYS_FEATURE_BASE(f), kind = PHYS_FEATURE_KIND(f), i = PHYS_FEATURE_INDEX(f);
  CHECK_MSG((PHYS_FEATURE_FLAGS(f) & PHYS_FEATF_WITNESS) && out[0].witness[which][0] == -1 && (want < 0 ||
            base == want), "%s: feature %#x, witness %d, want %#x", what, f, out[0].witness[which][0], want);
  int other = kind == PHYS_FEAT_SURFACE && M->geom_type[which] == PHYS_GEOM_CYLINDER ? FB(EDGE, 1)
              : kind == PHYS_FEAT_SURFACE ? FB(SURFACE, 1) : PHYS_FEATURE(kind, 1 - i);
  check_recorded(what, phys_collide_convex_convex, 0, 1, 0, -1, -1, which, other | (f & 0xff0));
  return base;
}

// the GJK/EPA witness point on smooth patches (witness.h): its pair function records the patch (a cylinder's rim
// EDGE c, its side SURFACE 0, an ellipsoid's SURFACE 0, flagged WITNESS and INSIDE when the shapes overlap), the
// point is exact (the distance's equations at the recorded patches: the differences of the pair function agree
// with the derivative to 1e-6), the derivative reads the patch (another one is refused) and without its record
// the contact is refused (no distance run again, no match by value)
static void test_smooth_witness(void) {
  const double o[3] = {0, 0, 0}, Z[3] = {0, 0, 1}, pi = 3.14159265358979323846;
  double ab[3] = {1, 2, 3}, ae[3] = {0.3, 1, -0.2}, ad[3] = {1, -1, 0};
  phys_normalize3(ab), phys_normalize3(ae), phys_normalize3(ad);
  double corner = acos(1 / sqrt(3)), hc = 0.08 * sqrt(3);   // a cube turned corner down: its lowest corner hc below
  // cylinder (r 0.2, h 0.3, upright) - cube (half 0.08, corner down): over the +h rim (outside it), beside the
  // side, and (turned otherwise) its corner cutting into the side
  set_pose(0, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, o, Z, 0);
  double rim[3] = {0.24, 0.03, 0.32 + hc}, side[3] = {0.29, 0.02, 0.05};
  set_pose(1, PHYS_GEOM_BOX, 0.08, 0.08, 0.08, rim, ad, corner);
  check_smooth("cylinder-box rim", 0, FB(EDGE, 1));
  set_pose(1, PHYS_GEOM_BOX, 0.08, 0.08, 0.08, side, Z, 0.3);
  tilt(1, 0.2);
  check_smooth("cylinder-box side", 0, FB(SURFACE, 0));
  double deep[3] = {0.28, 0.02, 0.05};
  set_pose(1, PHYS_GEOM_BOX, 0.1, 0.08, 0.06, deep, ab, 0.6);
  check_smooth("cylinder-box side, overlapping", 0, FB(SURFACE, 0));
  // ellipsoid (0.3, 0.2, 0.15, turned) - box: separated and overlapping; - ellipsoid; - cylinder (its rim)
  const double eb[2][3] = {{0.1, 0.05, 0.33}, {0.1, 0.05, 0.15}};
  set_pose(0, PHYS_GEOM_ELLIPSOID, 0.3, 0.2, 0.15, o, ae, 0.4);
  for (int k = 0; k < 2; k++) {
    set_pose(1, PHYS_GEOM_BOX, 0.1, 0.08, 0.06, eb[k], ab, 0.6);
    check_smooth(k ? "ellipsoid-box, overlapping" : "ellipsoid-box", 0, FB(SURFACE, 0));
  }
  double e2[3] = {0.2, 0.1, 0.36};
  set_pose(1, PHYS_GEOM_ELLIPSOID, 0.15, 0.25, 0.1, e2, ab, 1.1);
  check_smooth("ellipsoid-ellipsoid", 1, FB(SURFACE, 0));
  double ec[3] = {0.15, 0.02, 0.42};
  set_pose(1, PHYS_GEOM_CYLINDER, 0.1, 0.12, 0, ec, ab, 2.6);
  check_smooth("ellipsoid-cylinder", 1, -1);
  check_smooth("ellipsoid-cylinder", 0, FB(SURFACE, 0));
  // a sphere's centre and a capsule's segment (cores) against the ellipsoid and the cylinder
  double sp[3] = {0.05, 0.32, 0.1}, cp[3] = {0.33, 0, 0.1};
  set_pose(0, PHYS_GEOM_SPHERE, 0.05, 0, 0, sp, Z, 0);
  set_pose(1, PHYS_GEOM_ELLIPSOID, 0.3, 0.2, 0.15, o, ae, 0.4);
  check_smooth("sphere-ellipsoid", 1, FB(SURFACE, 0));
  set_pose(0, PHYS_GEOM_CAPSULE, 0.05, 0.2, 0, cp, ae, pi / 3);
  set_pose(1, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, o, Z, 0.2);
  check_smooth("capsule-cylinder", 1, -1);
  // without the record: refused
  physContact out[PHYS_MAXPAIRCON];
  double jac[7 * 18];
  set_pose(0, PHYS_GEOM_CYLINDER, 0.2, 0.3, 0, o, Z, 0);
  set_pose(1, PHYS_GEOM_BOX, 0.08, 0.08, 0.08, rim, ad, corner);
  int n = phys_collide_convex_convex(M, D, 0, 1, MARGIN, out);
  CHECK(n == 1 && phys_primitive_deriv_out(jac, M, D, 0, 1, 0, out, n) == 0);
  out[0].feature[0] = out[0].feature[1] = PHYS_FEATURE(PHYS_FEAT_UNKNOWN, 0);
  CHECK(phys_primitive_deriv_out(jac, M, D, 0, 1, 0, out, n) == -1);
}
#undef FB
#undef FEAT
#undef FIN

int main(void) {
  setup();
  phys_rng_seed(&RNG, 20261122);
  test_spheres();
  test_capsules();
  test_capsule_capsule();
  test_capsule_parallel();
  test_plane_box();
  test_resting_ties();
  test_box_box();
  test_box_box_margin();
  test_sphere_box_cylinder();
  test_capsule_box();
  test_plane_curved();
  test_cylinder_upright();
  test_refused();
  test_recorded_features();
  test_smooth_witness();
  printf("all contacts of a pair at once: %d pairs, %d contacts, %d pairs of 2+ contacts bit-identical to one by "
         "one\n", ALL_PAIRS, ALL_CON, ALL_MULTI);
  CHECK(ALL_CON > 300 && ALL_MULTI > 50);
  printf("worst finite-difference mismatch %.3g (tol %.0e, floor %.0e)\n", WORST, RTOL, FLOOR);
  phys_free_data(D);
  phys_free_model(M);
  return test_done();
}
