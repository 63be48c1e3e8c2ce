// consumer.c - a program outside physid's tree, built against an installed physid (tests/install/run.sh):
// loads a model given on the command line, steps it 100 times and prints the library's version and the state;
// then calls one function of each public header of include/physid/: the step Jacobian (derivatives.h), a
// parameter table (params.h), a rollout of a control problem (control.h) and, with a data file as the second
// argument, an identification (identify.h). Checks that the header it was compiled with and the library it runs
// with agree (phys_version).
#include <physid.h>
#include <physid/control.h>
#include <physid/derivatives.h>
#include <physid/fields.h>
#include <physid/identify.h>
#include <physid/params.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// one function of each public header at d's state; prints the results on the current line. 0 on failure
static int use_headers(physModel* m, physData* d, const char* data) {
  physLog log = {0};
  int nx = 2 * m->nv + m->na;
  double* A = malloc(sizeof(double) * (size_t)(nx * nx + 1));
  int ok = A && phys_step_jacobian(m, d, A, NULL) == PHYS_OK;
  if (ok) printf(", A[0] %.17g", A[0]);
  free(A);
  physParamTable t;
  const char* spec[] = {"damping:j*"};
  double theta = 0;
  ok = ok && phys_param_table_build(&t, m, spec, 1, &log) == PHYS_OK;
  if (ok) phys_param_get(&t, m, &theta), printf(", damping %.17g", theta);
  phys_param_table_free(&t);
  physControlProblem* p = ok ? phys_control_make(m, 10, 0) : NULL;
  ok = ok && p != NULL;
  if (ok) printf(", control cost %.17g", phys_control_rollout(p, d, p->U, NULL));
  phys_control_free(p);
  int* nvp = phys_model_field(m, "jnt_type", NULL, NULL, NULL);   // fields.h
  ok = ok && nvp != NULL && phys_model_size(m, "nv") == m->nv;
  if (ok && data) {
    const char* params[] = {"damping:j*"};
    double start = 0.3;
    physIdentifyJob job = {&data, 1, params, 1, &start, NULL, 0, 0, 0};
    physIdentifyResult r;
    ok = phys_identify(m, &job, &r, &log) == PHYS_OK;
    if (ok) printf(", identified %.6f (%s)", r.theta[0], r.stop);
    phys_identify_result_free(&r);
  }
  if (!ok) fprintf(stderr, "consumer: %s\n", log.error[0] ? log.error : "a call of include/physid/ failed");
  return ok;
}

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: consumer MODEL.xml [DATA.csv]\n");
    return 2;
  }
  if (strcmp(phys_version(), PHYS_VERSION) != 0) {
    fprintf(stderr, "consumer: header %s, library %s\n", PHYS_VERSION, phys_version());
    return 1;
  }
  physLog log = {0};
  physModel* m = phys_load(argv[1], NULL, &log);
  if (!m) {
    fprintf(stderr, "consumer: %s\n", log.error);
    return 1;
  }
  physData* d = phys_make_data(m);
  if (m->nkey > 0 && phys_reset_keyframe(m, d, 0) != PHYS_OK) return 1;
  for (int i = 0; i < 100; i++) phys_step(m, d);
  printf("physid %s: nq %d, t %.3f, qpos[0] %.17g", phys_version(), m->nq, d->time, d->qpos[0]);
  int ok = use_headers(m, d, argc == 3 ? argv[2] : NULL);
  printf("\n");
  phys_free_data(d);
  phys_free_model(m);
  return ok ? 0 : 1;
}
