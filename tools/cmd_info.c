// cmd_info.c - `physid info MODEL [--json] [--floating] [--actuate] [--add FILE]...`: sizes, mass, options and
// joint names of a model (or of a world composed with --add).
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

// total mass: sum of the body masses (the world body has none)
static double total_mass(const physModel* m) {
  double mass = 0;
  for (int b = 1; b < m->nbody; b++) mass += m->body_mass[b];
  return mass;
}

// name of joint j, "-" if unnamed
static const char* joint_name(const physModel* m, int j) {
  const char* name = phys_id2name(m, "joint", j);
  return name && *name ? name : "-";
}

// the model's integer sizes, in the order they are printed
typedef struct infoSize_ {
  const char* key;
  int value;
} infoSize;

// fill the size table; returns its length
static int info_sizes(infoSize size[10], const physModel* m) {
  const infoSize s[10] = {{"nq", m->nq},       {"nv", m->nv},       {"nbody", m->nbody},
                          {"njnt", m->njnt},   {"ngeom", m->ngeom}, {"nsite", m->nsite},
                          {"nspring", m->nspring}, {"nu", m->nu},   {"nkey", m->nkey},
                          {"nmesh", m->nmesh}};
  for (int i = 0; i < 10; i++) size[i] = s[i];
  return 10;
}

// key: value lines
static void print_text(const physModel* m) {
  infoSize size[10];
  int n = info_sizes(size, m);
  printf("model: %s\nfile: %s\n", m->modelname, m->filename);
  if (cli_model.add.n) {   // a composed world: the files added to it
    printf("add:");
    for (int i = 0; i < cli_model.add.n; i++) printf(" %s", cli_model.add.item[i]);
    printf("\n");
  }
  for (int i = 0; i < n; i++) printf("%s: %d\n", size[i].key, size[i].value);
  printf("mass: %.17g\ntimestep: %.17g\n", total_mass(m), m->opt.timestep);
  printf("gravity: %.17g %.17g %.17g\n", m->opt.gravity[0], m->opt.gravity[1], m->opt.gravity[2]);
  printf("contact: %s\n", phys_contact_name(m->opt.contact));
  printf("joints:");
  for (int j = 0; j < m->njnt; j++) printf(" %s", joint_name(m, j));
  printf("\n");
}

// the same keys as a JSON object (gravity and joints as arrays)
static cJSON* info_json(const physModel* m) {
  cJSON* root = cJSON_CreateObject();
  infoSize size[10];
  int n = info_sizes(size, m);
  cJSON_AddStringToObject(root, "model", m->modelname);
  cJSON_AddStringToObject(root, "file", m->filename);
  if (cli_model.add.n) cJSON_AddItemToObject(root, "add", cJSON_CreateStringArray(cli_model.add.item, cli_model.add.n));
  for (int i = 0; i < n; i++) cJSON_AddNumberToObject(root, size[i].key, size[i].value);
  cJSON_AddNumberToObject(root, "mass", total_mass(m));
  cJSON_AddNumberToObject(root, "timestep", m->opt.timestep);
  cJSON_AddItemToObject(root, "gravity", cJSON_CreateDoubleArray(m->opt.gravity, 3));
  cJSON_AddStringToObject(root, "contact", phys_contact_name(m->opt.contact));
  cJSON* joints = cJSON_AddArrayToObject(root, "joints");
  for (int j = 0; j < m->njnt; j++) {
    const char* name = phys_id2name(m, "joint", j);
    cJSON_AddItemToArray(joints, cJSON_CreateString(name ? name : ""));
  }
  return root;
}

// print the JSON object; 0 on allocation failure
static int print_json(const physModel* m) {
  cJSON* root = info_json(m);
  char* text = root ? cJSON_Print(root) : NULL;
  if (text) printf("%s\n", text);
  free(text);
  cJSON_Delete(root);
  return text != NULL;
}

// physid info
int cli_info(int argc, char** argv) {
  int json = 0, floating = 0, quiet = 0;
  const argOption opt[] = {
      {"--json", ARG_FLAG, &json, "", "print a JSON object instead of key: value lines", 0, 0, 0},
      {"--floating", ARG_FLAG, &floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      {"--quiet", ARG_FLAG, &quiet, "", "no warnings on stderr (errors still print)", 0, 0, 0},
  };
  const argCommand cmd = {"info", "Print the sizes, total mass, timestep, gravity, contact model and joint names of a model.",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid info /usr/share/mujoco/model/humanoid/humanoid.xml --json"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  physModel* m = cli_load_model(pos[0], floating);
  if (!m) return CLI_EXIT_INPUT;
  int ok = 1;
  if (json) ok = print_json(m);
  else print_text(m);
  phys_free_model(m);
  if (!ok) cli_error("out of memory writing JSON");
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;   // a write error on stdout: main's cli_stdout_close reports it
}
