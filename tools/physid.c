// physid.c - the physid command-line tool: subcommand dispatch and the helpers the subcommands share.
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "mlp_io.h"
#include "residual.h"

typedef struct cliCommand_ {
  const char* name;
  const char* summary;
  int (*run)(int argc, char** argv);
} cliCommand;

static const cliCommand g_commands[] = {
    {"info", "print the sizes, mass, options and joint names of a model", cli_info},
    {"simulate", "simulate a model and write its trajectory as CSV", cli_simulate},
    {"jacobian", "write the Jacobians A = dx+/dx, B = dx+/du (and P = dx+/dtheta) of one step as CSV", cli_jacobian},
    {"gradcheck", "check the analytic step Jacobians against finite differences", cli_gradcheck},
    {"identify", "identify physical parameters from recorded trajectories", cli_identify},
    {"evaluate", "report a model's prediction errors against recorded trajectories", cli_evaluate},
    {"sweep", "write the loss along one parameter (CSV, HTML plot): look before fitting", cli_sweep},
    {"optimize", "plan a trajectory (control-limited DDP) from a task file: controls, trajectory, result", cli_optimize},
    {"view", "write a 3-D replay of trajectories (observed and predicted) as one self-contained HTML page", cli_view},
    {"mpc", "model-predictive control from a task file, on a physid or MuJoCo plant: controls, trajectory, result", cli_mpc},
};
static const int g_ncommand = sizeof g_commands / sizeof g_commands[0];

int cli_parse_controls(double* u, const physModel* m, const char* text) {
  const char* s = text;
  int n = 0;
  if (m->nu > 64) {
    cli_error("--ctrl-value: the model has %d actuators (at most 64 supported)", m->nu);
    return 0;
  }
  while (*s && n <= m->nu) {
    char* end;
    double x = strtod(s, &end);
    if (end == s || !isfinite(x) || (*end && *end != ',')) {
      cli_error("--ctrl-value '%s': value %d is not a finite number", text, n + 1);
      return 0;
    }
    if (n < m->nu) u[n] = x;
    n++;
    s = *end ? end + 1 : end;
  }
  if (n != m->nu) {
    cli_error("--ctrl-value '%s': %d values for %d actuators", text, n, m->nu);
    return 0;
  }
  return 1;
}

int cli_quiet = 0;

// print "warning: <message>" to stderr unless --quiet
void cli_warning(const char* fmt, ...) {
  if (cli_quiet) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("warning: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

// print "physid: <message>" to stderr
void cli_error(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("physid: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

// parse a subcommand's arguments, printing help or the usage error
int cli_parse(const char** pos, const argCommand* cmd, int argc, char** argv) {
  char err[512] = "";
  argResult r = args_parse(pos, err, sizeof err, cmd, argc, argv);
  if (r == ARGS_HELP) {
    args_help(stdout, cmd);
    return CLI_EXIT_OK;
  }
  if (r == ARGS_USAGE) {
    cli_error("%s (see 'physid %s --help')", err, cmd->name);
    return CLI_EXIT_USAGE;
  }
  // the command's --quiet flag, if it has one, silences every warning (cli_warning) from here on
  for (int i = 0; i < cmd->nopt; i++) {
    if (cmd->opt[i].type == ARG_FLAG && strcmp(cmd->opt[i].name, "--quiet") == 0) cli_quiet = *(int*)cmd->opt[i].dest;
  }
  return -1;
}

// print a library call's warnings to stderr, one line per kind with its count; nothing with --quiet
void cli_log_warnings(const physLog* log) {
  if (!cli_quiet) phys_log_print_warnings(log, stderr);
}

// phys_load with the tool's options; warnings and errors go to stderr
physModel* cli_load_model(const char* filename, int floating) {
  physLog log;
  memset(&log, 0, sizeof log);
  physLoadOptions opt = {0};
  opt.urdf_floating = floating;
  opt.urdf_actuate = cli_model.actuate;
  opt.add = cli_model.add.item;
  opt.nadd = cli_model.add.n;
  opt.vertex_geoms = cli_model.vertices.item;
  opt.nvertex_geoms = cli_model.vertices.n;
  physModel* m = phys_load(filename, &opt, &log);
  cli_log_warnings(&log);   // one line per kind of warning, with its count
  if (!m) cli_error("%s", log.error[0] ? log.error : "cannot load model");
  if (m && cli_model.residual) {
    m->residual = phys_mlp_read_json(cli_model.residual, "residual", &log);
    if (!m->residual) cli_error("%s", log.error);
    if (!m->residual || !cli_residual_fits(m)) {
      phys_free_model(m);
      return NULL;
    }
  }
  return m;
}

int cli_residual_fits(const physModel* m) {
  char err[256];
  if (!phys_residual_check(m, m->residual, err, sizeof err)) return 1;
  cli_error("%s: %s", cli_model.residual ? cli_model.residual : "--residual", err);
  return 0;
}

int cli_step_options(physModel* m, double dt, int nocontact, int contact) {
  if (dt > 0) m->opt.timestep = dt;
  if (nocontact) m->opt.disableflags |= PHYS_DSBL_CONTACT;
  if (contact >= 0) m->opt.contact = contact;
  return cli_residual_fits(m);
}

cliIntegratorArgs cli_integrator = {-1, 0, 0, 0, -1};

int cli_integrator_options(physModel* m, const char* command, const char* model, int derivatives) {
  const cliIntegratorArgs* a = &cli_integrator;
  int pbd_option = a->substeps || a->iterations || a->jacobi || a->compliance >= 0;
  if (pbd_option && a->integrator != PHYS_INT_PBD) {
    cli_error("%s: --pbd-substeps, --pbd-iterations, --pbd-jacobi and --pbd-compliance need --integrator pbd", command);
    return CLI_EXIT_USAGE;
  }
  if (a->integrator < 0) return -1;
  if (a->integrator != PHYS_INT_PBD) {   // euler, implicit: every command takes them (both have derivatives)
    m->opt.integrator = a->integrator;
    return -1;
  }
  (void)derivatives;   // (the pbd step has derivatives: every command takes it, issue 17 item 2)
  if (!m) return -1;   // (cli_integrator_derivatives: the options' combination only)
  char msg[256];
  if (!phys_pbd_supported(m, msg, sizeof msg)) {
    cli_error("%s: %s", model, msg);
    return CLI_EXIT_INPUT;
  }
  m->opt.integrator = PHYS_INT_PBD;
  if (a->substeps) m->opt.pbd_substeps = a->substeps;
  if (a->iterations) m->opt.pbd_iterations = a->iterations;
  if (a->jacobi) m->opt.pbd_jacobi = 1;
  if (a->compliance >= 0) m->opt.pbd_compliance = a->compliance;
  return -1;
}

int cli_integrator_derivatives(const char* command) {
  const cliIntegratorArgs* a = &cli_integrator;
  if (a->integrator != PHYS_INT_PBD && !(a->substeps || a->iterations || a->jacobi || a->compliance >= 0)) return -1;
  return cli_integrator_options(NULL, command, NULL, 1);
}

// `physid --help`: the list of subcommands
static void print_usage(FILE* f) {
  fprintf(f, "usage: physid COMMAND [options]    (physid COMMAND --help for each command)\n\n"
             "physid %s: differentiable rigid-body simulation and system identification\n\ncommands:\n",
          PHYS_VERSION);
  for (int i = 0; i < g_ncommand; i++) fprintf(f, "  %-10s %s\n", g_commands[i].name, g_commands[i].summary);
  fprintf(f, "\noptions:\n  -h, --help  show this help and exit\n  --version   print the version and exit\n");
}

// dispatch on argv[1]
static int dispatch(int argc, char** argv) {
  if (argc < 2) {
    print_usage(stderr);
    return CLI_EXIT_USAGE;
  }
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
    print_usage(stdout);
    return CLI_EXIT_OK;
  }
  if (strcmp(argv[1], "--version") == 0) {
    printf("physid %s\n", PHYS_VERSION);
    return CLI_EXIT_OK;
  }
  for (int i = 0; i < g_ncommand; i++) {
    if (strcmp(argv[1], g_commands[i].name) != 0) continue;
    int code = cli_mpi_check(argv[1]);
    return code >= 0 ? code : g_commands[i].run(argc - 1, argv + 1);
  }
  cli_error("unknown command '%s' (see 'physid --help')", argv[1]);
  return CLI_EXIT_USAGE;
}

// the command, then stdout flushed and closed: a write error there (ENOSPC, EIO) fails a run that succeeded
int main(int argc, char** argv) {
  int code = cli_mpi_start(&argc, &argv);
  if (code < 0) code = dispatch(argc, argv);
  if (!cli_stdout_close(code == CLI_EXIT_OK) && code == CLI_EXIT_OK) code = CLI_EXIT_INPUT;
  cli_mpi_end(code);
  return code;
}
