// tendon.c - the point path of a spatial tendon (issue 15 item 3): its sites, the tangent points where it wraps
// sphere and cylinder geoms (src/math/wrap.h), its branches after pulleys; shared by the compiler (rest length at
// qpos_spring) and the dynamics (length, rate, forces).
#include "model.h"
#include "wrap.h"

#include <math.h>

int phys_tendon_plain(const physModel* m, int s) {
  if (m->spring_type[s] != PHYS_SPRING_PATH) return 0;
  for (int k = m->spring_adr[s]; k < m->spring_adr[s] + m->spring_num[s]; k++)
    if (m->spring_objtype[k] != PHYS_WRAP_SITE) return 0;
  return 1;
}

int phys_tendon_wraps(const physModel* m, int s) {
  for (int k = m->spring_adr[s]; k < m->spring_adr[s] + m->spring_num[s]; k++)
    if (m->spring_objtype[k] == PHYS_WRAP_SPHERE || m->spring_objtype[k] == PHYS_WRAP_CYLINDER) return 1;
  return 0;
}

// appends point x on body b to the path, with gap weight w to the next point (wrap: physTendonPath's)
static void add_point(physTendonPath* p, const double x[3], int b, double w, int wrap) {
  int n = p->npoint++;
  for (int i = 0; i < 3; i++) p->x[n][i] = x[i];
  p->body[n] = b;
  p->w[n] = w;
  p->wrap[n] = wrap;
}

void phys_tendon_path(const physModel* m, int s, const double* site_xpos, const double* geom_xpos,
                      const double* geom_xmat, physTendonPath* p) {
  const int* obj = m->spring_site + m->spring_adr[s];
  const int* type = m->spring_objtype + m->spring_adr[s];
  const double* prm = m->spring_prm + m->spring_adr[s];
  int n = m->spring_num[s];
  double scale = 1;   // 1 / divisor of the current branch
  p->npoint = 0;
  p->arcs = 0;
  for (int k = 0; k < n; k++) {
    if (type[k] == PHYS_WRAP_PULLEY) {
      // a new branch: no gap from the last point, later gaps count 1 / divisor
      if (p->npoint) p->w[p->npoint - 1] = 0;
      scale = 1 / prm[k];
      continue;
    }
    if (type[k] != PHYS_WRAP_SITE) continue;   // geoms are read with the site before them
    const double* x = site_xpos + 3 * obj[k];
    add_point(p, x, m->site_bodyid[obj[k]], scale, -1);
    if (k + 2 < n && (type[k + 1] == PHYS_WRAP_SPHERE || type[k + 1] == PHYS_WRAP_CYLINDER)) {
      int g = obj[k + 1], side = (int)prm[k + 1];
      double t[6];
      double len = phys_wrap(t, x, site_xpos + 3 * obj[k + 2], geom_xpos + 3 * g, geom_xmat + 9 * g, m->geom_size[3 * g],
                             type[k + 1] == PHYS_WRAP_CYLINDER, side >= 0 ? site_xpos + 3 * side : NULL);
      if (len >= 0) {
        // site -> tangent point (straight), arc (no straight gap), tangent point -> next site
        add_point(p, t, m->geom_bodyid[g], 0, 2 * (k + 1));
        add_point(p, t + 3, m->geom_bodyid[g], scale, 2 * (k + 1) + 1);
        p->arcs += scale * len;
      }
    }
  }
  if (p->npoint) p->w[p->npoint - 1] = 0;
}
