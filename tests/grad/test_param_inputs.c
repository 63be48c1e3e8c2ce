// test_param_inputs.c - the input kinds of the parameter table (src/grad/param_inputs.c, params.h): channel
// names (actuator, pattern, ctrl:NAME, uI, tauI, qfrc:JOINT) and their refusals; phys_param_input_hold's
// windowed hold against hand-computed averages (D = 0: the samples themselves, bit for bit; a window across a
// sample; before the recording), and its sensitivities against central differences of the held values in D,
// g, b; get/set/bounds of the values the table holds.
#include "grad_models.h"
#include "params.h"

// tests/data/actuators.xml: 5 actuators (push, shoulder, elbow, wrist, assist), 4 dofs
static physModel* load_actuators(void) { return gm_load("tests/data/actuators.xml", 0); }

static void check_names(void) {
  physModel* m = load_actuators();
  physLog log = {0};
  physParamTable t;
  const char* ok[] = {"delay:push", "inputgain:u1", "inputbias:ctrl:elbow", "delay:tau2", "inputgain:qfrc:j3",
                      "inputbias:w*"};
  CHECK_MSG(phys_param_table_build(&t, m, ok, 6, &log) == PHYS_OK, "%s", log.error);
  CHECK(t.n == 6 && t.ntheta == 6 && t.input != NULL);
  int want_id[6] = {0, 1, 2, 5 + 2, 5 + 3, 3};   // actuators by index; forces nu + dof
  for (int e = 0; e < t.n && e < 6; e++) CHECK_MSG(t.param[e].id == want_id[e], "entry %d id %d", e, t.param[e].id);
  double th[6], lo[6], hi[6];
  phys_param_get(&t, m, th);
  CHECK(th[0] == 0 && th[1] == 1 && th[2] == 0 && th[3] == 0 && th[4] == 1 && th[5] == 0);
  phys_param_bounds(&t, lo, hi);
  CHECK(lo[0] == 0 && lo[3] == 0 && lo[1] == -HUGE_VAL && lo[2] == -HUGE_VAL && hi[0] == HUGE_VAL);
  double nt[6] = {0.01, 0.9, 0.2, 0.02, 1.1, -0.3};
  CHECK(phys_param_set(&t, m, nt) == PHYS_OK);
  phys_param_get(&t, m, th);
  for (int i = 0; i < 6; i++) CHECK(th[i] == nt[i]);
  nt[0] = -0.001;
  CHECK(phys_param_set(&t, m, nt) == PHYS_ERR_VALUE);   // a negative delay
  phys_param_table_free(&t);
  struct { const char* spec[2]; int n; const char* frag; } bad[] = {
      {{"delay:u5"}, 1, "control column u5 out of range (the model has 5 actuators: u0..u4)"},
      {{"delay:tau4"}, 1, "force column tau4 out of range (the model has 4 dofs: tau0..tau3)"},
      {{"inputgain:qfrc:nosuch"}, 1, "no joint or spring named 'nosuch'"},
      {{"inputbias:nosuch"}, 1, "no actuator named 'nosuch'"},
      {{"delay:push", "delay:u0"}, 2, "overlaps 'delay:push' (both set the delay of input channel ctrl:push)"},
      {{"delayy:push"}, 1, "delay, inputgain, inputbias"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    memset(&log, 0, sizeof log);
    CHECK(phys_param_table_build(&t, m, bad[i].spec, bad[i].n, &log) == PHYS_ERR_ARG);
    CHECK_MSG(strstr(log.error, bad[i].frag), "%s", log.error);
    phys_param_table_free(&t);
  }
  phys_free_model(m);
}

// the held values of a 4-sample recording (times 0, 0.01, 0.02, 0.03; step 2.5 ms) on control 0 and dof 1
static void check_hold(void) {
  physModel* m = load_actuators();
  m->opt.timestep = 0.0025;
  int nu = m->nu, nv = m->nv, T = 4;
  double tm[4] = {0, 0.01, 0.02, 0.03}, ctrl[4 * 5], qfrc[4 * 4], cu[5], cf[4], sens[3];
  for (int k = 0; k < T * nu; k++) ctrl[k] = 0.1 * k - 0.7;
  for (int k = 0; k < T * nv; k++) qfrc[k] = sin(1.3 * k);
  physLog log = {0};
  physParamTable t;
  const char* spec[] = {"delay:u0", "inputgain:u0", "inputbias:u0"};
  CHECK(phys_param_table_build(&t, m, spec, 3, &log) == PHYS_OK);
  // D = 0, gain 1, bias 0: the recording itself, bit for bit, in every step of every interval
  for (int s = 0; s < T - 1; s++)
    for (int sub = 0; sub < 4; sub++) {
      phys_param_input_hold(&t, m, tm, T, s, sub, ctrl, qfrc, cu, cf, sens);
      for (int i = 0; i < nu; i++) CHECK(cu[i] == ctrl[s * nu + i]);
      for (int i = 0; i < nv; i++) CHECK(cf[i] == qfrc[s * nv + i]);
    }
  // D = 6 ms, g = 0.8, b = 0.1: step 2 of interval 2 is [0.025, 0.0275), its window [0.019, 0.0215]: 1 ms of
  // sample 1, 1.5 ms of sample 2; before the recording the first sample holds
  double th[3] = {0.006, 0.8, 0.1};
  CHECK(phys_param_set(&t, m, th) == PHYS_OK);
  phys_param_input_hold(&t, m, tm, T, 2, 2, ctrl, NULL, cu, NULL, sens);
  double avg = (1.0 * ctrl[1 * nu] + 1.5 * ctrl[2 * nu]) / 2.5;
  CHECK_NEAR(cu[0], 0.8 * avg + 0.1, 1e-15);
  CHECK_NEAR(sens[0], 0.8 * -(ctrl[2 * nu] - ctrl[1 * nu]) / 0.0025, 1e-12);
  CHECK_NEAR(sens[1], avg, 1e-15);
  CHECK(sens[2] == 1);
  for (int i = 1; i < nu; i++) CHECK(cu[i] == ctrl[2 * nu + i]);   // the other channels as recorded
  phys_param_input_hold(&t, m, tm, T, 0, 1, ctrl, NULL, cu, NULL, sens);
  CHECK(cu[0] == 0.8 * ctrl[0] + 0.1 && sens[0] == 0);   // before the recording: the first sample, held
  // sensitivities against central differences at windows across samples and inside intervals
  double worst = 0;
  for (int s = 0; s < T - 1; s++)
    for (int sub = 0; sub < 4; sub++)
      for (int j = 0; j < 3; j++) {
        double h = 1e-7, tp[3] = {0.0137, 0.85, 0.05}, up, um;
        phys_param_set(&t, m, tp);
        phys_param_input_hold(&t, m, tm, T, s, sub, ctrl, NULL, cu, NULL, sens);
        double a = sens[j];
        tp[j] += h;
        phys_param_set(&t, m, tp);
        phys_param_input_hold(&t, m, tm, T, s, sub, ctrl, NULL, cu, NULL, NULL);
        up = cu[0];
        tp[j] -= 2 * h;
        phys_param_set(&t, m, tp);
        phys_param_input_hold(&t, m, tm, T, s, sub, ctrl, NULL, cu, NULL, NULL);
        um = cu[0];
        double fd = (up - um) / (2 * h);
        worst = fmax(worst, fabs(a - fd));
        CHECK_MSG(fabs(a - fd) <= 1e-6 * fmax(1, fabs(fd)), "s %d sub %d theta %d: %.12g vs %.12g", s, sub, j, a, fd);
      }
  printf("input hold: sensitivities vs central differences: worst %.2g\n", worst);
  phys_param_table_free(&t);
  phys_free_model(m);
}

int main(void) {
  check_names();
  check_hold();
  return test_done();
}
