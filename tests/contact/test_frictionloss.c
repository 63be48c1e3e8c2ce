// test_frictionloss.c - joint frictionloss rows (src/contact/frictionloss.c) against closed-form mechanics in
// every contact model: a body held by dry friction stays at rest exactly, one loaded beyond it accelerates at
// (tau - F) / I; the box problem's solution against its conditions on random problems; frictionloss read from
// MJCF (joint and default) and URDF (<dynamics friction>).
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact.h"
#include "physid.h"
#include "../model/mjcf_text.h"
#include "rng.h"

static const char* const CONTACT[] = {"lcp", "cone", "ccp", "penalty"};

// the contact model whose name starts text (up to a quote)
static int phys_contact_from_name_prefix(const char* text) {
  for (int i = 0; i < 4; i++)
    if (!strncmp(text, CONTACT[i], strlen(CONTACT[i])) && text[strlen(CONTACT[i])] == '\'') return i;
  return PHYS_CONTACT_LCP;
}

static physModel* load_model(const char* name, const char* text) {
  physLog log;
  char* opt = strstr(text, "contact='");   // (the contact model is set on the model, not by MJCF)
  int model = opt ? phys_contact_from_name_prefix(opt + 9) : PHYS_CONTACT_LCP;
  memset(&log, 0, sizeof log);
  physModel* m = phys_load(put(name, text), NULL, &log);
  CHECK_MSG(m != NULL, "%s: %s", name, log.error);
  if (!m) exit(1);
  m->opt.contact = model;
  return m;
}



// a slide joint along z (mass 2 kg, gravity 9.81: weight 19.62 N) with frictionloss F, contact model c
static physModel* slider(const char* contact, double F) {
  char xml[1024];
  snprintf(xml, sizeof xml,
           "<mujoco><option timestep='0.002'/><!-- contact='%s' --><worldbody><body><joint name='z' type='slide' "
           "axis='0 0 1' frictionloss='%.17g'/><geom type='sphere' size='0.1' mass='2' contype='0' conaffinity='0'/>"
           "</body></worldbody></mujoco>", contact, F);
  return load_model("slider.xml", xml);
}

// at rest with weight below F: qpos and qvel stay exactly 0 (lcp, cone, ccp); above: v = -dt k (g - F/m)
// after k steps (semi-implicit Euler with a constant net force), exactly to rounding
static void test_slider(void) {
  for (int c = 0; c < 3; c++) {
    physModel* m = slider(CONTACT[c], 25.0);
    physData* d = phys_make_data(m);
    for (int k = 0; k < 200; k++) phys_step(m, d);
    CHECK_MSG(d->qpos[0] == 0 && d->qvel[0] == 0, "%s: held slider moved to %g (v %g)", CONTACT[c], d->qpos[0], d->qvel[0]);
    CHECK_NEAR(d->qfrc_constraint[0], 2 * 9.81, 1e-12);   // the friction carries the weight
    phys_free_data(d);
    phys_free_model(m);

    m = slider(CONTACT[c], 5.0);
    d = phys_make_data(m);
    for (int k = 0; k < 100; k++) phys_step(m, d);
    double a = -(9.81 - 5.0 / 2);   // (tau - F) / I with tau = -m g
    CHECK_NEAR(d->qvel[0], 100 * 0.002 * a, 1e-12);
    CHECK_NEAR(d->qfrc_constraint[0], 5.0, 1e-12);
    phys_free_data(d);
    phys_free_model(m);
  }
  // penalty: regularized as its contact friction (C = F / max(|v|, v_slip) frozen at v, force -C v+): the
  // held slider creeps at tau v_slip / F; the loaded one follows v+ = (v + dt tau/m) / (1 + dt C/m) exactly
  physModel* m = slider("penalty", 25.0);
  physData* d = phys_make_data(m);
  for (int k = 0; k < 2000; k++) phys_step(m, d);
  CHECK_NEAR(d->qvel[0], -2 * 9.81 * m->opt.penalty_vslip / 25.0, 1e-9);
  phys_free_data(d);
  phys_free_model(m);
  m = slider("penalty", 5.0);
  d = phys_make_data(m);
  double v = 0, dt = 0.002;
  for (int k = 0; k < 100; k++) {
    phys_step(m, d);
    v = (v - dt * 9.81) / (1 + dt * 5.0 / fmax(fabs(v), m->opt.penalty_vslip) / 2);
  }
  CHECK_NEAR(d->qvel[0], v, 1e-12);
  double v100 = d->qvel[0];
  for (int k = 0; k < 100; k++) phys_step(m, d);
  CHECK_NEAR((d->qvel[0] - v100) / (100 * dt), -(9.81 - 2.5), 0.03);   // Coulomb's (tau - F)/m to O(dt a / v)
  phys_free_data(d);
  phys_free_model(m);
}

static void test_hinge(void) {
  for (int c = 0; c < 3; c++) {
    for (int held = 0; held < 2; held++) {
      double F = held ? 6.0 : 2.0;
      char xml[1024];
      snprintf(xml, sizeof xml,
               "<mujoco><option timestep='0.001'/><!-- contact='%s' --><worldbody><body><joint name='h' axis='0 1 0' "
               "frictionloss='%g'/><geom type='sphere' pos='0.5 0 0' size='0.05' mass='1' contype='0' "
               "conaffinity='0'/></body></worldbody></mujoco>", CONTACT[c], F);
      physModel* m = load_model("hinge.xml", xml);
      physData* d = phys_make_data(m);
      double I = 0.25 + 0.4 * 0.05 * 0.05, tau = 9.81 * 0.5;   // +y axis: gravity at +x turns it positive
      phys_step(m, d);
      if (held) {
        CHECK(d->qvel[0] == 0 && d->qpos[0] == 0);
      } else {
        CHECK_NEAR(d->qvel[0], 0.001 * (tau - F) / I, 1e-13);
      }
      phys_free_data(d);
      phys_free_model(m);
    }
  }
}

// random box problems: the conditions of the file comment of frictionloss.c hold at the solution
static void test_box_random(void) {
  physModel* m = slider("lcp", 1.0);
  physData* d = phys_make_data(m);
  physRng rng;
  phys_rng_seed(&rng, 7);
  for (int trial = 0; trial < 200; trial++) {
    int nf = 1 + trial % 7;
    double A[49], G[49], g[7], b[7], lambda[7], w[7];
    int state[7];
    for (int i = 0; i < nf * nf; i++) A[i] = phys_rng_uniform(&rng) * 2 - 1;
    for (int i = 0; i < nf; i++)
      for (int j = 0; j < nf; j++) {
        double s = i == j ? 0.1 : 0;
        for (int k = 0; k < nf; k++) s += A[i * nf + k] * A[j * nf + k];
        G[i * nf + j] = s;
      }
    for (int i = 0; i < nf; i++) g[i] = 4 * phys_rng_uniform(&rng) - 2, b[i] = phys_rng_uniform(&rng);
    if (trial % 5 == 0) b[0] = 0;
    int it = phys_frictionloss_box(d, G, g, b, nf, lambda, state);
    CHECK(it > 0);
    for (int i = 0; i < nf; i++) {
      w[i] = g[i];
      for (int j = 0; j < nf; j++) w[i] += G[i * nf + j] * lambda[j];
    }
    for (int i = 0; i < nf; i++) {
      CHECK(fabs(lambda[i]) <= b[i]);
      if (state[i] == PHYS_ROW_CLAMPING) CHECK_NEAR(w[i], 0, 1e-12);
      if (state[i] == PHYS_ROW_UPPER) CHECK(lambda[i] == b[i] && w[i] <= 0);
      if (state[i] == PHYS_ROW_LOWER) CHECK(lambda[i] == -b[i] && w[i] >= 0);
    }
  }
  phys_free_data(d);
  phys_free_model(m);
}

// frictionloss rows together with contact rows (block Gauss-Seidel in the step): a two-link arm whose tip
// capsule rests on a frictionless floor, driven by motors. Held (frictionloss above the motor torques): it
// stays at rest exactly. Driven: the joints slide and stick in turn while the tip slides on the floor; with a
// frictionless contact cone and ccp solve the same problem (no friction cone, so no relaxation difference) and
// detect alike (lcp does not keep contacts within the 1e-5 m slop: it differs by 1e-3 rad after 300 steps with
// or without frictionloss), so their trajectories agree to 1e-9 (each solve's own accuracy); no solver warning
// in any model, and the friction does work: the run ends elsewhere than without frictionloss
static void test_with_contact(void) {
  const char* xml =
      "<mujoco><option timestep='0.002'/><!-- contact='%s' --><default><geom friction='0'/></default>"
      "<worldbody><geom type='plane' size='5 5 .1'/><body pos='0 0 0.48'><joint name='a' axis='0 1 0' "
      "frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0.4 0 0' size='0.03' mass='1'/><body pos='0.4 0 0'>"
      "<joint name='b' axis='0 1 0' frictionloss='%g'/><geom type='capsule' fromto='0 0 0 0 0 -0.45' "
      "size='0.03' mass='1'/></body></body></worldbody><actuator><motor joint='a'/><motor joint='b'/></actuator>"
      "</mujoco>";
  double qend[4][2];
  for (int c = 0; c < 4; c++) {
    int model = c < 3 ? c : 0;   // c = 3: lcp without frictionloss
    char text[2048];
    snprintf(text, sizeof text, xml, CONTACT[model], 50.0, 50.0);
    physModel* m = load_model("arm_floor.xml", text);
    physData* d = phys_make_data(m);
    for (int k = 0; k < 100; k++) phys_step(m, d);
    double q0 = d->qpos[0], q1 = d->qpos[1];
    d->ctrl[0] = 2, d->ctrl[1] = -1;   // below the frictionlosses: held
    for (int k = 0; k < 50; k++) phys_step(m, d);
    CHECK_MSG(d->ncon > 0, "%s: no contact", CONTACT[model]);
    CHECK_MSG(d->qvel[0] == 0 && d->qvel[1] == 0 && d->qpos[0] == q0 && d->qpos[1] == q1, "%s: held arm moved",
              CONTACT[model]);
    phys_free_data(d);
    phys_free_model(m);

    snprintf(text, sizeof text, xml, CONTACT[model], c < 3 ? 0.5 : 0, c < 3 ? 0.3 : 0);
    m = load_model("arm_floor.xml", text);
    d = phys_make_data(m);
    int ncontact = 0;
    for (int k = 0; k < 300; k++) {
      d->ctrl[0] = 3 * sin(0.02 * k), d->ctrl[1] = -2 * cos(0.03 * k);
      phys_step(m, d);
      ncontact += d->ncon > 0;
    }
    CHECK_MSG(ncontact > 100, "%s: %d steps in contact", CONTACT[model], ncontact);
    CHECK_MSG(d->warning_count[PHYS_WARN_SOLVER] == 0, "%s: %s", CONTACT[model], d->lastwarning);
    qend[c][0] = d->qpos[0], qend[c][1] = d->qpos[1];
    phys_free_data(d);
    phys_free_model(m);
  }
  CHECK_NEAR(qend[2][0], qend[1][0], 1e-9);
  CHECK_NEAR(qend[2][1], qend[1][1], 1e-9);
  CHECK(fabs(qend[3][0] - qend[0][0]) > 1e-3);
}

// MJCF joint attribute and default class, URDF <dynamics friction>; a negative value is refused
static void test_read(void) {
  physModel* m = load_model("d.xml",
      "<mujoco><default><joint frictionloss='0.25'/><default class='f'><joint frictionloss='1.5'/></default>"
      "</default><worldbody><body><joint name='a' axis='0 1 0'/><geom type='sphere' size='0.1'/>"
      "<body><joint name='b' class='f' axis='0 1 0'/><joint name='c' type='ball' frictionloss='3'/>"
      "<geom type='sphere' size='0.1'/></body></body></worldbody></mujoco>");
  CHECK(m->nv == 5);
  CHECK(m->dof_frictionloss[0] == 0.25 && m->dof_frictionloss[1] == 1.5);
  CHECK(m->dof_frictionloss[2] == 3 && m->dof_frictionloss[3] == 3 && m->dof_frictionloss[4] == 3);
  CHECK(phys_frictionloss_count(m) == 5);
  phys_free_model(m);

  m = load_model("r.urdf",
      "<robot name='r'><link name='base'/><link name='l1'><inertial><mass value='1'/><inertia ixx='0.1' "
      "iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link><joint name='j1' type='continuous'>"
      "<parent link='base'/><child link='l1'/><axis xyz='0 1 0'/><dynamics damping='0.1' friction='0.7'/>"
      "</joint></robot>");
  CHECK(m->dof_frictionloss[0] == 0.7 && m->dof_damping[0] == 0.1);
  phys_free_model(m);

  physLog log;
  memset(&log, 0, sizeof log);
  m = phys_load(put("neg.xml", "<mujoco><worldbody><body><joint name='a' frictionloss='-1'/><geom type='sphere' "
                    "size='0.1'/></body></worldbody></mujoco>"), NULL, &log);
  CHECK_MSG(m == NULL && strstr(log.error, "frictionloss must be >= 0") && strstr(log.error, "neg.xml:1"), "%s",
            log.error);
  if (m) phys_free_model(m);
  memset(&log, 0, sizeof log);
  m = phys_load(put("neg.urdf", "<robot name='r'><link name='base'/><link name='l1'><inertial><mass value='1'/>"
                    "<inertia ixx='0.1' iyy='0.1' izz='0.1' ixy='0' ixz='0' iyz='0'/></inertial></link>\n"
                    "<joint name='j1' type='continuous'><parent link='base'/><child link='l1'/>\n"
                    "<dynamics friction='-0.5'/></joint></robot>"), NULL, &log);
  CHECK_MSG(m == NULL && strstr(log.error, "negative friction") && strstr(log.error, "neg.urdf:3") &&
            strstr(log.error, "j1"), "%s", log.error);
  if (m) phys_free_model(m);
}

int main(void) {
  mjcf_text_begin("frictionloss");
  test_slider();
  test_hinge();
  test_box_random();
  test_with_contact();
  test_read();
  return mjcf_text_end();
}
