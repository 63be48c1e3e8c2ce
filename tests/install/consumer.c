// consumer.c - a program outside physid's tree, built against an installed physid (tests/install/run.sh):
// loads a model given on the command line, steps it 100 times and prints the library's version and the state.
// Checks that the header it was compiled with and the library it runs with agree (phys_version).
#include <physid.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: consumer MODEL.xml\n");
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
  printf("physid %s: nq %d, t %.3f, qpos[0] %.17g\n", phys_version(), m->nq, d->time, d->qpos[0]);
  phys_free_data(d);
  phys_free_model(m);
  return 0;
}
