// cmd_identify.c - `physid identify MODEL DATA... --param KIND:NAME ...`: fit physical parameters of a model to
// recorded trajectories (src/sysid), print them with their standard errors, write result.json, the model with
// the identified values and an HTML report.
//
// Settings come from the command line, or from a JSON job file (--job) whose keys are the long option names
// (model, data, params, loss, horizon, substeps, optimizer, starts, seed, iters, weights, violation_weights,
// violation_metric, residual_reg, prior, lr, contact, integrator, velocities, fit_start, files, skip, map, observe,
// out, write_model, report, floating, quiet, checkpoint, resume, approach, network_out, progressive, validation,
// ctrl_value);
// an option given on the command line overrides the job's value (a list option, --param or --map, replaces the
// job's whole list).
// Every input is checked before any work: settings, model, parameter names and bounds, that --write-model can
// hold every parameter, the output paths (check_outputs: tools/output.c), then the data. After the fit the outputs
// go to temporary files beside their targets, renamed into place only when all of them were written; an error or
// SIGINT/SIGTERM removes them.
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "grad.h"
#include "identify.h"
#include "view.h"
#include "trajio.h"


#define ID_NOUT 3   // outputs: --out, --write-model, --report

// SIGINT/SIGTERM while the outputs are written: remove their temporaries, then die of the signal
static void on_signal(int sig) {
  cli_output_remove_temporaries();
  signal(sig, SIG_DFL);
  raise(sig);
}

//---------------------------------------------------------------------------------------------------------
// the job file

// index of value in a '|' list, -1 if absent
static int choice(const char* list, const char* value) {
  size_t len = strlen(value);
  int k = 0;
  for (const char* c = list; *c; k++) {
    size_t n = strcspn(c, "|");
    if (n == len && strncmp(c, value, n) == 0) return k;
    c += n + (c[n] == '|');
  }
  return -1;
}

#define ID_JOB_MAX (1u << 24)   // a job file's size limit (16 MiB: settings, not data)

// the whole of a small text file (malloc'd, nul-terminated), NULL with a message: only a regular file or a FIFO
// (phys_input_open), at most ID_JOB_MAX bytes
static char* slurp(const char* path) {
  physLog log = {0};
  FILE* f;
  if (phys_input_open(&f, path, &log) != PHYS_OK) {
    cli_error("%s", log.error);
    return NULL;
  }
  char *s = NULL, chunk[4096];
  size_t n = 0, cap = 0, k;
  int err = 0;   // 1 too large, 2 out of memory, 3 read error
  while (!err && (k = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (n + k > ID_JOB_MAX) {
      err = 1;
    } else if (n + k + 1 > cap) {
      char* p = realloc(s, cap = 2 * (n + k + 1));
      if (!p) err = 2;
      else s = p;
    }
    if (!err) memcpy(s + n, chunk, k), n += k;
  }
  if (!err && ferror(f)) err = 3;
  fclose(f);
  if (!err && !s && !(s = malloc(1))) err = 2;
  if (err) {
    free(s);
    if (err == 1) cli_error("%s: larger than %u bytes: not a job file", path, ID_JOB_MAX);
    else if (err == 2) cli_error("%s: out of memory", path);
    else cli_error("%s: read error", path);
    return NULL;
  }
  s[n] = 0;
  return s;
}

// a job value that must be a string
static int job_string(const char** dst, const cJSON* v, const char* job) {
  if (cJSON_IsString(v)) {
    if (!*dst) *dst = v->valuestring;
    return 1;
  }
  cli_error("%s: key '%s': expected a string", job, v->string);
  return 0;
}

// a job value that must be an integer in [lo, hi]; applied when the command line left dst at unset
static int job_int(int* dst, int unset, const cJSON* v, int lo, int hi, const char* job) {
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!(x >= lo && x <= hi && x == floor(x))) {
    cli_error("%s: key '%s': expected an integer in [%d, %d]", job, v->string, lo, hi);
    return 0;
  }
  if (*dst == unset) *dst = (int)x;
  return 1;
}

// a job value that must be a number >= lo; applied when dst is negative (unset)
static int job_number(double* dst, const cJSON* v, double lo, const char* job) {
  double x = cJSON_IsNumber(v) ? v->valuedouble : NAN;
  if (!(x >= lo) || !isfinite(x)) {
    cli_error("%s: key '%s': expected a finite number >= %g", job, v->string, lo);
    return 0;
  }
  if (*dst < 0) *dst = x;
  return 1;
}

// a job value that must be one of a '|' list; applied when dst is -1
static int job_choice(int* dst, const cJSON* v, const char* list, const char* job) {
  int k = cJSON_IsString(v) ? choice(list, v->valuestring) : -1;
  if (k < 0) {
    cli_error("%s: key '%s': expected one of %s", job, v->string, list);
    return 0;
  }
  if (*dst < 0) *dst = k;
  return 1;
}

// a job param object {"name", "init", "min", "max"} (numbers or arrays) as the --param text
static char* job_param_object(const cJSON* o, const char* job) {
  const cJSON* name = cJSON_GetObjectItemCaseSensitive(o, "name");
  if (!cJSON_IsString(name)) {
    cli_error("%s: params: an object needs \"name\": \"KIND:NAME\"", job);
    return NULL;
  }
  char buf[2048];
  size_t len = (size_t)snprintf(buf, sizeof buf, "%s", name->valuestring);
  const char* keys[3] = {"init", "min", "max"};
  for (int k = 0; k < 3 && len < sizeof buf; k++) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, keys[k]);
    if (!v) continue;
    len += (size_t)snprintf(buf + len, sizeof buf - len, ":%s=", keys[k]);
    int n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;
    for (int i = 0; i < n && len < sizeof buf; i++) {
      const cJSON* x = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, i) : v;
      if (!cJSON_IsNumber(x)) {
        cli_error("%s: params: '%s': %s must be a number or an array of numbers", job, name->valuestring, keys[k]);
        return NULL;
      }
      len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", i ? "," : "", x->valuedouble);
    }
  }
  return strdup(buf);
}

// a job list of strings (data, map) or of param strings/objects into dst; only if the command line gave none
static int job_list(const char** dst, int* n, int max, const cJSON* v, idArgs* a, int params, const char* job) {
  if (cJSON_IsString(v) && !params) {
    if (*n == 0) dst[(*n)++] = v->valuestring;
    return 1;
  }
  if (!cJSON_IsArray(v)) {
    cli_error("%s: key '%s': expected an array", job, v->string);
    return 0;
  }
  int given = *n > 0;
  const cJSON* x;
  cJSON_ArrayForEach(x, v) {
    const char* s = cJSON_IsString(x) ? x->valuestring : NULL;
    if (!s && params && cJSON_IsObject(x)) {
      if (a->npool >= ID_MAXSPEC || !(s = a->pool[a->npool++] = job_param_object(x, job))) return 0;
    }
    if (!s) {
      cli_error("%s: key '%s': expected an array of strings%s", job, v->string, params ? " or objects" : "");
      return 0;
    }
    if (given) continue;
    if (*n >= max) {
      cli_error("%s: key '%s': more than %d entries", job, v->string, max);
      return 0;
    }
    dst[(*n)++] = s;
  }
  return 1;
}

// "a,b,..." -> n finite numbers >= 0 in w; 0 (no message) if text is not that
static int scan_n(double* w, int n, const char* text) {
  char* end;
  const char* p = text;
  for (int i = 0; i < n; i++) {
    w[i] = strtod(p, &end);
    if (end == p || !(w[i] >= 0) || !isfinite(w[i]) || (i < n - 1 && *end != ',') || (i == n - 1 && *end)) return 0;
    p = end + 1;
  }
  return 1;
}

// job key "residual_reg": "OUT,W" or [OUT, W] (numbers >= 0), the --residual-reg of the command line (which
// overrides it); like the option, only with --approach ccn-r or diffsim-r
static int job_rreg(idArgs* a, const cJSON* v, const char* job) {
  double r[2] = {NAN, NAN};
  int ok = cJSON_IsString(v) && scan_n(r, 2, v->valuestring);
  if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 2) {
    for (int i = 0; i < 2; i++) {
      const cJSON* x = cJSON_GetArrayItem(v, i);
      r[i] = cJSON_IsNumber(x) && x->valuedouble >= 0 && isfinite(x->valuedouble) ? x->valuedouble : NAN;
    }
    ok = !isnan(r[0]) && !isnan(r[1]);
  }
  if (!ok) {
    cli_error("%s: key 'residual_reg': expected \"OUT,W\" or [OUT, W] (two numbers >= 0)", job);
    return 0;
  }
  if (a->approach != ID_APP_CCN_R && a->approach != ID_APP_DIFFSIM_R) {
    cli_error("%s: key 'residual_reg': only with --approach ccn-r or diffsim-r (the residual network's "
              "regularization)", job);
    return 0;
  }
  if (isnan(a->rr[0])) a->rr[0] = r[0], a->rr[1] = r[1];
  return 1;
}

// job key "ctrl_value": "U0,U1,.." or [U0, U1, ...] (finite numbers), the --ctrl-value of the command line (which
// overrides it); the count is checked against the model's actuators when it is loaded (parse_ctrl)
static int job_ctrl(idArgs* a, const cJSON* v, const char* job) {
  char buf[2048];
  size_t len = 0;
  int ok = cJSON_IsString(v) && v->valuestring[0], n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 0;
  for (const char* p = ok ? v->valuestring : ""; ok && *p;) {   // the string: numbers separated by commas
    char* end;
    ok = isfinite(strtod(p, &end)) && end != p && (*end == ',' || !*end) && !(*end == ',' && !end[1]);
    p = *end ? end + 1 : end;
  }
  if (n > 0) ok = 1;
  for (int i = 0; i < n; i++) {   // the array: its numbers as the option's text
    const cJSON* x = cJSON_GetArrayItem(v, i);
    if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble) || len >= sizeof buf - 32) {
      ok = 0;
      break;
    }
    len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%.17g", i ? "," : "", x->valuedouble);
  }
  if (!ok) {
    cli_error("%s: key 'ctrl_value': expected \"U0,U1,..\" or [U0, U1, ...] (finite numbers, one per actuator)", job);
    return 0;
  }
  if (a->ctrl_value) return 1;   // the command line's
  if (n > 0) {
    if (a->npool >= ID_MAXSPEC || !(a->pool[a->npool] = strdup(buf))) {
      cli_error("%s: key 'ctrl_value': out of memory", job);
      return 0;
    }
    a->ctrl_value = a->pool[a->npool++];
  } else {
    a->ctrl_value = v->valuestring;
  }
  a->ctrl_job = 1;
  return 1;
}

// weights from a job: "a,b,c" or [a, b, c]
static int job_weights(idArgs* a, const cJSON* v, const char* job) {
  if (cJSON_IsString(v)) return job_string(&a->weights, v, job);
  if (cJSON_IsArray(v) && cJSON_GetArraySize(v) == 3) {
    for (int i = 0; i < 3; i++) {
      const cJSON* x = cJSON_GetArrayItem(v, i);
      if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0) || !isfinite(x->valuedouble)) break;
      if (!a->weights && isnan(a->w[i])) a->w[i] = x->valuedouble;
      if (i == 2) return 1;
    }
  }
  cli_error("%s: key 'weights': expected [pos, rot, vel] (numbers >= 0) or \"pos,rot,vel\"", job);
  return 0;
}

// job key "add": an array of model file names composed with the model, unless the command line has --add
static int job_add(const cJSON* v, const char* job) {
  const cJSON* e;
  if (!cJSON_IsArray(v)) {
    cli_error("%s: key 'add': expected an array of model file names", job);
    return 0;
  }
  int cmdline = cli_model.add.n > 0;
  cJSON_ArrayForEach(e, v) {
    if (!cJSON_IsString(e) || !e->valuestring[0]) {
      cli_error("%s: key 'add': expected an array of model file names", job);
      return 0;
    }
    if (cmdline) continue;
    if (cli_model.add.n == ARGS_MAXLIST) {
      cli_error("%s: key 'add': more than %d files", job, ARGS_MAXLIST);
      return 0;
    }
    cli_model.add.item[cli_model.add.n++] = e->valuestring;
  }
  return 1;
}

// job key "integrator": euler or implicit (the --integrator of the command line, which overrides it; pbd has no
// step derivatives, so a job asking for it is refused as --integrator pbd is)
static int job_integrator(const cJSON* v, const char* job) {
  int k = cJSON_IsString(v) ? choice("euler|implicit", v->valuestring) : -1;
  if (k < 0) {
    cli_error("%s: key 'integrator': expected euler or implicit (the pbd step has no derivatives yet)", job);
    return 0;
  }
  if (cli_integrator.integrator < 0) cli_integrator.integrator = k;
  return 1;
}

// one key of the job object
static int job_key(idArgs* a, const cJSON* v, const char* job) {
  const char* k = v->string;
  if (!strcmp(k, "model")) return job_string(&a->model, v, job);
  if (!strcmp(k, "data")) return job_list(a->data, &a->ndata, ID_MAXDATA, v, a, 0, job);
  if (!strcmp(k, "params")) return job_list(a->spec, &a->nspec, ID_MAXSPEC, v, a, 1, job);
  if (!strcmp(k, "map")) return job_list(a->maps, &a->nmaps, ID_MAXSPEC, v, a, 0, job);
  if (!strcmp(k, "loss")) return job_choice(&a->loss, v, g_loss_names, job);
  if (!strcmp(k, "optimizer")) return job_choice(&a->optimizer, v, g_opt_names, job);
  if (!strcmp(k, "contact")) return job_choice(&a->contact, v, g_contact_names, job);
  if (!strcmp(k, "integrator")) return job_integrator(v, job);
  if (!strcmp(k, "velocities")) return job_choice(&a->velocities, v, g_velocity_names, job);
  if (!strcmp(k, "fit_start")) return job_choice(&a->fit_start, v, g_fit_start_names, job);
  if (!strcmp(k, "horizon")) return job_int(&a->horizon, 0, v, 1, 1000000, job);
  if (!strcmp(k, "substeps")) return job_int(&a->substeps, 0, v, 1, 1000000, job);
  if (!strcmp(k, "starts")) return job_int(&a->starts, 0, v, 1, 10000, job);
  if (!strcmp(k, "seed")) return job_int(&a->seed, -1, v, 0, 2147483647, job);
  if (!strcmp(k, "iters")) return job_int(&a->iters, 0, v, 1, 10000000, job);
  if (!strcmp(k, "bootstrap")) return job_int(&a->bootstrap, 0, v, 1, 100000, job);
  if (!strcmp(k, "files")) return job_int(&a->files, 0, v, 1, 100000000, job);
  if (!strcmp(k, "threads")) return job_int(&a->threads, 0, v, 1, 16, job);
  if (!strcmp(k, "skip")) return job_int(&a->skip, -1, v, 0, 100000000, job);
  if (!strcmp(k, "prior")) return job_number(&a->prior, v, 0, job);
  if (!strcmp(k, "lr")) return job_number(&a->lr, v, 1e-300, job);
  if (!strcmp(k, "weights")) return job_weights(a, v, job);
  if (!strcmp(k, "violation_weights")) return job_string(&a->vweights, v, job);
  if (!strcmp(k, "violation_metric")) return job_choice(&a->vmetric, v, "energy|velocity", job);
  if (!strcmp(k, "residual_reg")) return job_rreg(a, v, job);
  if (!strcmp(k, "approach")) return 1;   // (read first: merge_job)
  if (strcmp(a->cmd, "identify") && (!strcmp(k, "network_out") || !strcmp(k, "progressive") ||
                                     !strcmp(k, "validation"))) {
    cli_error("%s: key '%s': not a %s setting", job, k, a->cmd);
    return 0;
  }
  if (!strcmp(k, "network_out")) {
    a->netout_job = !a->network_out;   // (the command line's wins)
    return job_string(&a->network_out, v, job);
  }
  if (!strcmp(k, "validation")) return job_int(&a->validation, -1, v, 0, 1000000, job);
  if (!strcmp(k, "ctrl_value")) return job_ctrl(a, v, job);
  if (!strcmp(k, "observe")) return job_string(&a->observe, v, job);
  if (!strcmp(k, "out")) return job_string(&a->out, v, job);
  if (!strcmp(k, "write_model")) return job_string(&a->write_model, v, job);
  if (!strcmp(k, "report")) return job_string(&a->report, v, job);
  if (!strcmp(k, "checkpoint")) return job_string(&a->checkpoint, v, job);
  if (!strcmp(k, "replay_trajectories")) return job_string(&a->replay_of, v, job);
  if (!strcmp(k, "add")) return job_add(v, job);
  if (!strcmp(k, "actuate")) {
    if (!cJSON_IsBool(v)) {
      cli_error("%s: key '%s': expected true or false", job, k);
      return 0;
    }
    cli_model.actuate = cli_model.actuate || cJSON_IsTrue(v);
    return 1;
  }
  if (!strcmp(k, "floating") || !strcmp(k, "quiet") || !strcmp(k, "resume") || !strcmp(k, "replay") ||
      !strcmp(k, "progressive")) {
    if (!cJSON_IsBool(v)) {
      cli_error("%s: key '%s': expected true or false", job, k);
      return 0;
    }
    int* dst = k[0] == 'f' ? &a->floating : k[0] == 'q' ? &a->quiet : k[0] == 'p' ? &a->progressive
               : !strcmp(k, "replay") ? &a->replay : &a->resume;
    *dst = *dst || cJSON_IsTrue(v);
    return 1;
  }
  cli_error("%s: unknown key '%s' (valid: model, data, params, loss, horizon, substeps, optimizer, starts, seed, "
            "iters, threads, bootstrap, weights, violation_weights, violation_metric, residual_reg, prior, lr, contact, "
            "integrator, velocities, fit_start, files, skip, map, observe, out, write_model, report, replay, "
            "replay_trajectories, floating, actuate, add, quiet, checkpoint, resume, approach, network_out, progressive, "
            "validation, ctrl_value)",
            job, k);
  return 0;
}

static int replay_list(const char* list, int ntraj, idRun* r);

// read the job file and fill every setting the command line left unset
static int merge_job(idArgs* a) {
  char* text = slurp(a->job);
  if (!text) return 0;
  a->json = cJSON_Parse(text);
  if (!a->json || !cJSON_IsObject(a->json)) {
    const char* at = cJSON_GetErrorPtr();
    int line = 1;
    for (const char* c = text; at && c < at && *c; c++) line += *c == '\n';
    cli_error("%s:%d: not a JSON object%s", a->job, line, a->json ? "" : " (malformed JSON)");
    free(text);
    return 0;
  }
  free(text);
  const cJSON* v = cJSON_GetObjectItemCaseSensitive(a->json, "approach");   // first: residual_reg depends on it
  if (v && strcmp(a->cmd, "identify")) {
    cli_error("%s: key 'approach': not a %s setting", a->job, a->cmd);
    return 0;
  }
  if (v && !job_choice(&a->approach, v, ID_APPROACH_NAMES, a->job)) return 0;
  if (v && a->approach == ID_APP_E2E) {   // (its run reads the command line alone: id_run_e2e)
    cli_error("%s: key 'approach': end-to-end takes no job file (give its options on the command line)", a->job);
    return 0;
  }
  cJSON_ArrayForEach(v, a->json) {
    if (!job_key(a, v, a->job)) return 0;
  }
  return 1;
}

//---------------------------------------------------------------------------------------------------------
// settings

// "a,b,..." -> n finite numbers >= 0; the message names the option and its values
static int parse_n(double* w, int n, const char* text, const char* option, const char* names) {
  if (scan_n(w, n, text)) return 1;
  cli_error("%s '%s': expected %s (%s numbers >= 0)", option, text, names, n == 2 ? "two" : "three");
  return 0;
}

static int parse_three(double w[3], const char* text, const char* option, const char* names) {
  return parse_n(w, 3, text, option, names);
}

static int parse_weights(double w[3], const char* text) {
  return parse_three(w, text, "--weights", "pos,rot,vel");
}

// --violation-weights / job key violation_weights: "comp,diss,pen"
static int parse_vweights(double w[3], const char* text) {
  return parse_three(w, text, "--violation-weights", "comp,diss,pen");
}

// --resume needs --checkpoint; -1 if fine, else the exit code (that the checkpoint is no output is checked with
// the outputs: check_outputs)
static int check_checkpoint(const idArgs* a) {
  if (a->resume && !a->checkpoint) {
    cli_error("identify: --resume needs --checkpoint FILE (the file to continue from)");
    return CLI_EXIT_USAGE;
  }
  return -1;
}

// every setting "not given"
void id_args_init(idArgs* a, const char* cmd) {
  memset(a, 0, sizeof *a);
  a->loss = a->optimizer = a->contact = a->seed = a->skip = a->velocities = a->fit_start = a->approach = -1;
  a->vmetric = -1;
  a->prior = a->lr = -1;
  a->validation = -1;
  a->w[0] = a->w[1] = a->w[2] = NAN;
  a->vw[0] = a->vw[1] = a->vw[2] = NAN;
  a->rr[0] = a->rr[1] = NAN;
  a->cmd = cmd;
}

// the command line's positionals, then the job, then the checks that need no model (identify.h)
int id_merge_settings(idArgs* a) {
  int npos = 0;
  while (a->pos[npos]) npos++;
  if (npos > 0) a->model = a->pos[0];
  for (int i = 1; i < npos; i++) a->data[a->ndata++] = a->pos[i];
  for (int i = 0; i < a->param.n; i++) a->spec[a->nspec++] = a->param.item[i];
  for (int i = 0; i < a->map.n; i++) a->maps[a->nmaps++] = a->map.item[i];
  if (a->weights && !parse_weights(a->w, a->weights)) return CLI_EXIT_USAGE;
  if (a->vweights && !parse_vweights(a->vw, a->vweights)) return CLI_EXIT_USAGE;
  if (a->rreg && !parse_n(a->rr, 2, a->rreg, "--residual-reg", "out,w")) return CLI_EXIT_USAGE;
  if (a->job && !merge_job(a)) return CLI_EXIT_INPUT;
  if (a->weights && isnan(a->w[0]) && !parse_weights(a->w, a->weights)) return CLI_EXIT_INPUT;
  if (a->vweights && isnan(a->vw[0]) && !parse_vweights(a->vw, a->vweights)) return CLI_EXIT_INPUT;
  if (!a->model || a->ndata < 1 || a->nspec < 1) {
    cli_error("%s: %s%s%s (see 'physid %s --help')", a->cmd, !a->model ? "missing MODEL"
              : a->ndata < 1 ? "missing DATA (files or folders)" : "no parameter to ", a->model && a->ndata ? a->cmd : "",
              a->model && a->ndata ? ": give --param KIND:NAME" : "", a->cmd);
    return CLI_EXIT_USAGE;
  }
  return check_checkpoint(a);
}

// --ctrl-value (or the job's ctrl_value: a->ctrl_job): the controls held during every trajectory (a known push); 0
// and a message if malformed (a job's names the file and the key)
static int parse_ctrl(idRun* r, const idArgs* a, const char* text) {
  int n = 1;
  for (const char* p = text; *p; p++) n += *p == ',';
  if (a->ctrl_job && n != r->m->nu) {
    cli_error("%s: key 'ctrl_value': %d values for %d actuators", a->job, n, r->m->nu);
    return 0;
  }
  if (!cli_parse_controls(r->ctrl, r->m, text)) return 0;
  r->fit.ctrl = r->ctrl;
  return 1;
}

// tests only: PHYSID_TEST_KILL_AFTER_ITER=K (start 0) or S:K kills the process with SIGKILL right after the
// checkpoint of iteration K of start S was written (tests/tools/test_identify_resume.c)
static int test_kill(void* ctx, int start, int iter) {
  (void)ctx;
  const char* e = getenv("PHYSID_TEST_KILL_AFTER_ITER");
  int s = 0, k = -1;
  if (e && sscanf(e, "%d:%d", &s, &k) != 2) s = 0, k = atoi(e);
  if (start == s && iter == k) raise(SIGKILL);
  return 0;
}

// fit options: defaults, then the given settings
static void fit_options(physFitOptions* o, const idArgs* a) {
  phys_fit_defaults(o);
  if (a->loss >= 0) o->loss = a->loss;
  if (a->horizon > 0) o->horizon = a->horizon;
  if (a->substeps > 0) o->substeps = a->substeps;
  if (a->optimizer >= 0) o->optimizer = a->optimizer;
  if (a->optimizer == PHYS_OPT_ADAM && a->iters <= 0) o->max_iter = 500;
  if (a->iters > 0) o->max_iter = a->iters;
  if (a->starts > 0) o->starts = a->starts;
  if (a->seed >= 0) o->seed = (uint64_t)a->seed;
  if (a->prior >= 0) o->prior = a->prior;
  if (a->lr > 0) o->lr = a->lr;
  if (!isnan(a->w[0])) o->w_pos = a->w[0], o->w_rot = a->w[1], o->w_vel = a->w[2];
  if (!isnan(a->vw[0])) o->viol_comp = a->vw[0], o->viol_diss = a->vw[1], o->viol_pen = a->vw[2];
  if (a->vmetric >= 0) o->viol_metric = a->vmetric;
  o->verbose = !a->quiet;
  o->checkpoint = a->checkpoint;
  o->resume = a->resume;
  o->on_checkpoint = getenv("PHYSID_TEST_KILL_AFTER_ITER") ? test_kill : NULL;
  o->threads = a->threads > 0 ? a->threads : cli_default_threads();   // the result is the same for any count
  o->comm = cli_mpi_comm();   // mpirun: the processes share every evaluation (tools/mpi.c)
}

//---------------------------------------------------------------------------------------------------------
// parameters

// parse "V" or "V1,V2,..." (1 or size numbers) into x (size), broadcasting one value
static int parse_values(double* x, int size, const char* text, const char* spec, const char* what) {
  double v[64];
  int n = 0;
  const char* p = text;
  char* end;
  while (n < 64) {
    v[n] = strtod(p, &end);
    if (end == p || !isfinite(v[n])) break;
    n++;
    if (*end != ',') break;
    p = end + 1;
  }
  if (*end || end == p || (n != 1 && n != size)) {
    cli_error("param '%s': %s='%s': expected %s%d number%s", spec, what, text, size > 1 ? "1 or " : "", size,
              size > 1 ? "s" : "");
    return 0;
  }
  for (int i = 0; i < size; i++) x[i] = v[n == 1 ? 0 : i];
  return 1;
}

// split "KIND:NAME[:init=V][:min=A][:max=B][:scale=S]" into its spec (into buf) and the option texts
int id_split_spec(char* buf, size_t nbuf, const char* opts[4], const char* text) {
  static const char* const key[4] = {"init=", "min=", "max=", "scale="};
  char tmp[1024];
  if (strlen(text) >= sizeof tmp || strlen(text) >= nbuf) return 0;
  strcpy(tmp, text);
  buf[0] = 0;
  opts[0] = opts[1] = opts[2] = opts[3] = NULL;
  char* save = NULL;
  for (char* tok = strtok_r(tmp, ":", &save); tok; tok = strtok_r(NULL, ":", &save)) {
    int k = 0;
    while (k < 4 && strncmp(tok, key[k], strlen(key[k])) != 0) k++;
    if (k < 4) {
      opts[k] = text + (tok - tmp) + strlen(key[k]);
      continue;
    }
    if (buf[0]) strcat(buf, ":");
    strcat(buf, tok);
  }
  return 1;
}

// the option text up to the next ':' (copied)
static void opt_text(char out[512], const char* s) {
  size_t n = strcspn(s, ":");
  if (n >= 512) n = 511;
  memcpy(out, s, n);
  out[n] = 0;
}

// apply one spec's init/min/max/scale to theta0 and the bounds, with the checks of issue 5; scale=S starts from
// S times the model's values (every component; not with init)
static int apply_bounds(idRun* r, const physParam* p, const char* const opts[4], const char* spec) {
  static const char* const what[4] = {"init", "min", "max", "scale"};
  double v[4][64];
  int given[4] = {0, 0, 0, 0};
  for (int k = 0; k < 4; k++) {
    char text[512];
    if (!opts[k]) continue;
    opt_text(text, opts[k]);
    if ((k < 3 && p->size > 64) || !parse_values(v[k], k == 3 ? 1 : p->size, text, spec, what[k])) return 0;
    given[k] = 1;
  }
  if (given[0] && given[3]) {
    cli_error("param '%s': give init or scale, not both", spec);
    return 0;
  }
  for (int i = 0; i < p->size; i++) {
    int a = p->adr + i;
    double lo = r->lower[a], hi = r->upper[a];
    if (given[1] && v[1][i] < lo) {
      cli_error("param '%s': min %g is below the parameter's lower bound %g", spec, v[1][i], lo);
      return 0;
    }
    if (given[2] && v[2][i] > hi) {
      cli_error("param '%s': max %g is above the parameter's upper bound %g", spec, v[2][i], hi);
      return 0;
    }
    if (given[1]) r->lower[a] = v[1][i];
    if (given[2]) r->upper[a] = v[2][i];
    if (r->lower[a] > r->upper[a]) {
      cli_error("param '%s': min %g > max %g", spec, r->lower[a], r->upper[a]);
      return 0;
    }
    if (given[0]) r->theta0[a] = v[0][i];
    if (given[3]) r->theta0[a] *= v[3][0];
    if (!(r->theta0[a] >= r->lower[a] && r->theta0[a] <= r->upper[a])) {
      cli_error("param '%s': %s %g lies outside [%g, %g]%s", spec, given[0] ? "init" : "the model's value",
                r->theta0[a], r->lower[a], r->upper[a], given[0] ? "" : " (give init=V)");
      return 0;
    }
  }
  return 1;
}

// labels of the theta components: the spec, or "spec[i]" for entries of size > 1
static void make_labels(idRun* r) {
  for (int e = 0; e < r->table.n; e++) {
    const physParam* p = r->table.param + e;
    for (int i = 0; i < p->size && !p->tied; i++) {
      if (p->size == 1) snprintf(r->label[p->adr], sizeof r->label[0], "%s", p->name);
      else snprintf(r->label[p->adr + i], sizeof r->label[0], "%.160s[%d]", p->name, i);
    }
  }
}

// the parameter table, theta0 and bounds from the specs; every error before any work. Returns -1, or the exit
// code: a spec the model does not have or cannot take is a command-line error (2) when it came from --param,
// bad input (1) when it came from the --job file (docs/cli.md, Exit codes); a refused initial value is 1
static int setup_params(idRun* r, const idArgs* a) {
  int spec_exit = a->param.n > 0 ? CLI_EXIT_USAGE : CLI_EXIT_INPUT;   // --param replaces the job's list
  char (*name)[1024] = calloc((size_t)a->nspec, sizeof *name);
  const char* (*o)[4] = calloc((size_t)a->nspec, sizeof *o);
  const char** names = calloc((size_t)a->nspec, sizeof(char*));
  int ok = name && o && names;
  if (!ok) spec_exit = CLI_EXIT_INPUT;   // out of memory
  for (int i = 0; ok && i < a->nspec; i++) {
    ok = id_split_spec(name[i], sizeof name[i], o[i], a->spec[i]);
    if (!ok) cli_error("param '%.100s...': too long", a->spec[i]);
    names[i] = name[i];
  }
  physLog log = {0};
  if (ok && phys_param_table_build(&r->table, r->m, names, a->nspec, &log) != PHYS_OK) {
    cli_error("%s", log.error);
    ok = 0;
    if (log.status == PHYS_ERR_NOMEM) spec_exit = CLI_EXIT_INPUT;
  }
  int n = ok ? r->table.ntheta : 0;
  r->fit.inputs = &r->table;   // the report's predictions transform the recorded inputs as the fit did
  if (ok) {
    r->theta0 = calloc((size_t)n, sizeof(double));
    r->lower = calloc((size_t)n, sizeof(double));
    r->upper = calloc((size_t)n, sizeof(double));
    r->label = calloc((size_t)n, sizeof *r->label);
    ok = r->theta0 && r->lower && r->upper && r->label;
    if (!ok) spec_exit = CLI_EXIT_INPUT;   // out of memory
  }
  if (ok) {
    phys_param_get(&r->table, r->m, r->theta0);
    phys_param_bounds(&r->table, r->lower, r->upper);
    make_labels(r);
  }
  for (int i = 0; ok && i < a->nspec; i++) ok = apply_bounds(r, phys_param_spec_entry(&r->table, i), o[i], a->spec[i]);
  int code = ok ? -1 : spec_exit;
  if (ok && phys_param_set(&r->table, r->m, r->theta0) != PHYS_OK) {
    cli_error("the initial parameter values are not physical (phys_param_set refused them)");
    code = CLI_EXIT_INPUT;
  }
  free(name);
  free(o);
  free(names);
  return code;
}

//---------------------------------------------------------------------------------------------------------
// results

// a JSON number, null when not finite
static cJSON* json_num(double x) {
  return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

// a parameter's value: a number for size 1, an array otherwise
static cJSON* json_values(const double* x, int size) {
  if (size == 1) return json_num(x[0]);
  cJSON* arr = cJSON_CreateArray();
  for (int i = 0; i < size; i++) cJSON_AddItemToArray(arr, json_num(x[i]));
  return arr;
}

// result.json's "params"
static cJSON* json_params(const idRun* r) {
  cJSON* arr = cJSON_CreateArray();
  for (int e = 0; e < r->table.n; e++) {
    const physParam* p = r->table.param + e;
    if (p->tied) continue;   // one object per spec: a tied pattern's matches share its value
    cJSON* o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", p->name);
    cJSON_AddItemToObject(o, "value", json_values(r->res.theta + p->adr, p->size));
    cJSON_AddItemToObject(o, "stderr", json_values(r->se + p->adr, p->size));
    cJSON_AddItemToObject(o, "lower95", json_values(r->ci_lo + p->adr, p->size));
    cJSON_AddItemToObject(o, "upper95", json_values(r->ci_hi + p->adr, p->size));
    cJSON_AddItemToObject(o, "stderr_iid", json_values(r->res.stderr_ + p->adr, p->size));
    cJSON_AddItemToObject(o, "stderr_cluster", json_values(r->res.se_cluster + p->adr, p->size));
    if (r->res.nboot) cJSON_AddItemToObject(o, "stderr_bootstrap", json_values(r->res.se_boot + p->adr, p->size));
    cJSON_AddItemToObject(o, "init", json_values(r->theta0 + p->adr, p->size));
    cJSON_AddItemToObject(o, "min", json_values(r->lower + p->adr, p->size));
    cJSON_AddItemToObject(o, "max", json_values(r->upper + p->adr, p->size));
    cJSON_AddItemToArray(arr, o);
  }
  return arr;
}

// an n x n matrix as an array of rows
static cJSON* json_matrix(const double* a, int n) {
  cJSON* arr = cJSON_CreateArray();
  for (int i = 0; i < n; i++) {
    cJSON* row = cJSON_CreateArray();
    for (int j = 0; j < n; j++) cJSON_AddItemToArray(row, json_num(a[(size_t)i * n + j]));
    cJSON_AddItemToArray(arr, row);
  }
  return arr;
}

// result.json's "uncertainty" (the default method and every method's covariance), "correlation" (ntheta x
// ntheta) and "unidentifiable" directions
static void json_statistics(cJSON* root, const idRun* r) {
  int n = r->res.ntheta;
  cJSON* u = cJSON_AddObjectToObject(root, "uncertainty");
  cJSON_AddStringToObject(u, "method", id_method_name[r->res.method]);
  cJSON_AddNumberToObject(u, "trajectories", r->res.ngroups);
  cJSON_AddStringToObject(u, "interval", r->res.method == PHYS_SE_CLUSTER ? "theta +- t(0.975, G-1) stderr_cluster"
                                                                        : "theta +- 1.96 stderr_iid");
  cJSON_AddItemToObject(u, "t", json_num(r->res.method == PHYS_SE_CLUSTER ? phys_t975(r->res.ngroups - 1) : phys_t975(0)));
  cJSON_AddItemToObject(u, "covariance", json_matrix(r->res.method == PHYS_SE_CLUSTER ? r->res.cov_cluster : r->res.cov_iid, n));
  cJSON_AddItemToObject(u, "covariance_iid", json_matrix(r->res.cov_iid, n));
  cJSON_AddItemToObject(u, "covariance_cluster", json_matrix(r->res.cov_cluster, n));
  if (r->res.nboot) {
    cJSON* b = cJSON_AddObjectToObject(u, "bootstrap");
    cJSON_AddNumberToObject(b, "resamples", r->res.nboot);
    cJSON_AddNumberToObject(b, "refits", r->res.nboot_ok);
    cJSON_AddNumberToObject(b, "seed", (double)r->fit.seed);
    cJSON_AddStringToObject(b, "interval", "percentile 2.5-97.5");
    cJSON_AddItemToObject(b, "covariance", json_matrix(r->res.cov_boot, n));
    cJSON* lo = cJSON_AddArrayToObject(b, "lower95");
    cJSON* hi = cJSON_AddArrayToObject(b, "upper95");
    for (int i = 0; i < n; i++) {
      double a, c;
      phys_fit_interval(&r->res, PHYS_SE_BOOTSTRAP, i, &a, &c);
      cJSON_AddItemToArray(lo, json_num(a));
      cJSON_AddItemToArray(hi, json_num(c));
    }
  }
  cJSON* corr = cJSON_AddArrayToObject(root, "correlation");
  for (int i = 0; i < n; i++) {
    cJSON* row = cJSON_CreateArray();
    for (int j = 0; j < n; j++) cJSON_AddItemToArray(row, json_num(r->res.corr[(size_t)i * n + j]));
    cJSON_AddItemToArray(corr, row);
  }
  cJSON* un = cJSON_AddArrayToObject(root, "unidentifiable");
  for (int k = 0; k < r->res.nnull; k++) {
    cJSON* o = cJSON_CreateObject();
    cJSON* dir = cJSON_AddObjectToObject(o, "direction");
    for (int i = 0; i < n; i++) cJSON_AddItemToObject(dir, r->label[i], json_num(r->res.null_dirs[(size_t)k * n + i]));
    cJSON_AddItemToArray(un, o);
  }
}

// the whole result.json
static char* result_json(const idRun* r) {
  static const char* const loss[4] = {"onestep", "kstep", "rollout", "violation"};
  static const char* const opt[3] = {"lm", "lbfgsb", "adam"};
  cJSON* root = cJSON_CreateObject();
  cJSON_AddStringToObject(root, "model", r->model_path);
  cJSON* data = cJSON_AddArrayToObject(root, "data");
  for (int k = 0; k < r->ds.ntraj; k++) cJSON_AddItemToArray(data, cJSON_CreateString(r->ds.traj[k].source));
  cJSON_AddStringToObject(root, "loss_kind", loss[r->fit.loss]);
  cJSON_AddStringToObject(root, "contact", phys_contact_name(r->m->opt.contact));
  static const char* const integrator[3] = {"euler", "implicit", "pbd"};
  cJSON_AddStringToObject(root, "integrator", integrator[r->m->opt.integrator]);
  cJSON_AddStringToObject(root, "optimizer", opt[r->fit.optimizer]);
  cJSON_AddNumberToObject(root, "substeps", r->fit.substeps);
  cJSON_AddNumberToObject(root, "horizon", r->fit.horizon);
  cJSON_AddBoolToObject(root, "fit_start", r->fit.fit_start);
  double w[3] = {r->fit.w_pos, r->fit.w_rot, r->fit.w_vel};
  cJSON_AddItemToObject(root, "weights", cJSON_CreateDoubleArray(w, 3));
  if (r->fit.loss == PHYS_LOSS_VIOLATION) {
    double vw[3] = {r->fit.viol_comp, r->fit.viol_diss, r->fit.viol_pen};
    cJSON_AddItemToObject(root, "violation_weights", cJSON_CreateDoubleArray(vw, 3));
    cJSON_AddStringToObject(root, "violation_metric", r->fit.viol_metric ? "velocity" : "energy");
  }
  cJSON_AddNumberToObject(root, "prior", r->fit.prior);
  cJSON_AddItemToObject(root, "params", json_params(r));
  cJSON* labels = cJSON_AddArrayToObject(root, "components");
  for (int i = 0; i < r->res.ntheta; i++) cJSON_AddItemToArray(labels, cJSON_CreateString(r->label[i]));
  cJSON_AddItemToObject(root, "loss0", json_num(r->res.loss0));
  cJSON_AddItemToObject(root, "loss", json_num(r->res.loss));
  cJSON_AddNumberToObject(root, "residuals", r->res.nres);
  cJSON_AddNumberToObject(root, "iterations", r->res.iterations);
  cJSON_AddStringToObject(root, "stop", phys_fit_stop_name(r->res.stop));
  if (r->res.stages == 3) {   // the staged default: the fields above are stage 3's (starts fitted)
    cJSON* st = cJSON_AddArrayToObject(root, "stages");
    for (int k = 0; k < 2; k++) {
      cJSON* s = cJSON_CreateObject();
      cJSON_AddStringToObject(s, "loss_kind", k ? "onestep" : loss[r->fit.loss]);
      cJSON_AddItemToObject(s, "theta", cJSON_CreateDoubleArray(r->res.stage_theta + (size_t)k * r->res.ntheta,
                                                                 r->res.ntheta));
      cJSON_AddItemToObject(s, "loss0", json_num(r->res.stage_loss0[k]));
      cJSON_AddItemToObject(s, "loss", json_num(r->res.stage_loss[k]));
      cJSON_AddItemToObject(s, "loss_fitted_starts", json_num(r->res.stage_fitted[k]));
      cJSON_AddNumberToObject(s, "iterations", r->res.stage_iterations[k]);
      cJSON_AddStringToObject(s, "stop", phys_fit_stop_name(r->res.stage_stop[k]));
      cJSON_AddNumberToObject(s, "best_start", r->res.stage_start[k]);
      cJSON_AddItemToArray(st, s);
    }
    cJSON_AddNumberToObject(root, "from_stage", r->res.stage_from);
  }
  cJSON_AddNumberToObject(root, "starts", r->fit.starts);
  cJSON_AddNumberToObject(root, "best_start", r->res.start);
  cJSON* hist = cJSON_AddArrayToObject(root, "loss_history");
  for (int k = 0; k < r->res.niter_hist; k++) cJSON_AddItemToArray(hist, json_num(r->res.loss_hist[k]));
  json_statistics(root, r);
  cJSON* t = cJSON_AddObjectToObject(root, "time");
  cJSON_AddNumberToObject(t, "forward", r->res.time_forward);
  cJSON_AddNumberToObject(t, "gradient", r->res.time_gradient);
  cJSON_AddNumberToObject(t, "total", r->wall);
  char* text = cJSON_Print(root);
  cJSON_Delete(root);
  return text;
}

// a warning for every component that ended on one of its bounds, with what that may mean (part of the result:
// printed with --quiet too, as the unidentifiable directions are)
static void print_bound_warnings(const idRun* r) {
  for (int i = 0; i < r->res.ntheta; i++) {
    double v = r->res.theta[i];
    if (v != r->lower[i] && v != r->upper[i]) continue;
    fprintf(stderr, "warning: identify: %s ended at its %s %g: the data may not excite it (no motion where it acts), "
            "the bound may be wrong, or the parameter absorbs an effect the model misses; its interval is cut "
            "there. 'physid sweep' with the same options shows the loss along it\n",
            r->label[i], v == r->lower[i] ? "min" : "max", v);
  }
}

// identified values with +- stderr and the 95% interval (+- 1.96 stderr, normal approximation, clipped to the
// bounds) on stdout (a
// component weighing >= 0.3 in an unidentifiable direction has none; a value on a bound says so);
// unidentifiable directions as a warning on stderr
static void print_results(const idRun* r) {
  const physFitResult* res = &r->res;
  size_t width = 10;
  for (int i = 0; i < res->ntheta; i++) width = strlen(r->label[i]) > width ? strlen(r->label[i]) : width;
  for (int i = 0; i < res->ntheta; i++) {
    double v = res->theta[i], e = r->se[i], null = 0;
    for (int k = 0; k < res->nnull; k++) null = fmax(null, fabs(res->null_dirs[(size_t)k * res->ntheta + i]));
    const char* bound = v == r->lower[i] ? ", at min" : v == r->upper[i] ? ", at max" : "";
    if (null >= 0.3) {
      printf("%-*s = %-12.6g +- n/a: unidentifiable (see the warning)  (initial %.6g%s)\n", (int)width, r->label[i], v,
             r->theta0[i], bound);
    } else {
      char other[64] = "";
      if (res->method != PHYS_SE_IID) snprintf(other, sizeof other, "iid +- %.3g; ", res->stderr_[i]);
      printf("%-*s = %-12.6g +- %-10.3g 95%% [%.6g, %.6g]  (%sinitial %.6g%s)\n", (int)width, r->label[i], v, e,
             r->ci_lo[i], r->ci_hi[i], other, r->theta0[i], bound);
    }
  }
  if (res->method == PHYS_SE_CLUSTER)
    printf("95%% intervals: cluster-robust by trajectory (%d trajectories, Student t %d dof)", res->ngroups,
           res->ngroups - 1);
  else
    printf("95%% intervals: iid (s^2 (J'J)^-1: one trajectory, model error not measured)");
  if (res->nboot) {
    printf("; bootstrap %d of %d refits (seed %llu), percentile intervals:", res->nboot_ok, res->nboot,
           (unsigned long long)r->fit.seed);
    for (int i = 0; i < res->ntheta; i++) {
      double lo, hi;
      phys_fit_interval(res, PHYS_SE_BOOTSTRAP, i, &lo, &hi);
      printf(" %s [%.6g, %.6g]", r->label[i], lo, hi);
    }
  }
  printf("\n");
  if (res->stages == 3) {   // the staged fit (sysid.h): its first two stages, then the last from the better answer
    static const char* const what[2] = {"segments from the recorded samples", "onestep from the recorded samples"};
    for (int k = 0; k < 2; k++)
      printf("stage %d, %s: loss %.6g -> %.6g in %d iterations (%s; best of %d starts); with the segment starts "
             "fitted %.6g\n", k + 1, what[k], res->stage_loss0[k], res->stage_loss[k], res->stage_iterations[k],
             phys_fit_stop_name(res->stage_stop[k]), r->fit.starts, res->stage_fitted[k]);
    printf("stage 3, segment starts fitted from stage %d's answer: loss %.6g -> %.6g in %d iterations (%s; %.6g at "
           "the initial values), %d residuals; fit %.2f s wall (CPU summed over threads: forward %.2f s, gradient "
           "%.2f s)\n", res->stage_from, res->stage_fitted[res->stage_from - 1], res->loss, res->iterations,
           phys_fit_stop_name(res->stop), res->loss0, res->nres, r->wall, res->time_forward, res->time_gradient);
  }
  else
    printf("loss %.6g -> %.6g in %d iterations (%s; best of %d starts), %d residuals; fit %.2f s wall (CPU summed "
           "over threads: forward %.2f s, gradient %.2f s)\n", res->loss0, res->loss, res->iterations,
           phys_fit_stop_name(res->stop), r->fit.starts, res->nres, r->wall, res->time_forward, res->time_gradient);
  fflush(stdout);
  print_bound_warnings(r);
  for (int k = 0; k < res->nnull; k++) {   // part of the result (stdout points to it): printed with --quiet too
    fprintf(stderr, "warning: identify: unidentifiable direction %d of %d (near-null eigenvector of J'J): the data "
            "do not determine", k + 1, res->nnull);
    for (int i = 0; i < res->ntheta; i++) {
      double c = res->null_dirs[(size_t)k * res->ntheta + i];
      if (fabs(c) >= 0.05) fprintf(stderr, " %+.3f*%s", c, r->label[i]);
    }
    fputc('\n', stderr);
  }
  fflush(stdout);
}

//---------------------------------------------------------------------------------------------------------
// outputs

// check every output before any work: paths (cli_output_check), then no output is an input or another output,
// and the checkpoint (written by the fit itself, src/sysid/checkpoint.h) is none of them either
static int check_outputs(cliOutput o[ID_NOUT], const idArgs* a) {
  const char* const option[ID_NOUT] = {"--out", "--write-model", "--report"};
  const char* const path[ID_NOUT] = {a->out, a->write_model, a->report};
  cliOutput all[ID_NOUT + 1];
  for (int i = 0; i < ID_NOUT; i++) {
    if (!cli_output_check(o + i, option[i], path[i])) return 0;
    all[i] = o[i];
  }
  if (!cli_output_check(all + ID_NOUT, "--checkpoint", a->checkpoint)) return 0;
  const char* input[ID_MAXDATA + 2];
  int n = 0;
  input[n++] = a->model;
  if (a->job) input[n++] = a->job;
  for (int k = 0; k < a->ndata; k++) input[n++] = a->data[k];
  return !cli_output_conflicts(all, ID_NOUT + 1, input, n);
}

// the text of output i (result.json, the model, the report) into its open stream; 0 and a message on failure
static int write_output(cliOutput* o, int i, const idRun* r) {
  char err[PHYS_MSGLEN] = "";
  int ok = 1;
  if (i == 0) {
    char* text = result_json(r);
    ok = text && fputs(text, o->f) >= 0 && fputc('\n', o->f) != EOF;
    if (!ok) snprintf(err, sizeof err, "%s %s: write error: %s", o->option, o->path ? o->path : "-", strerror(errno));
    free(text);
  }
  if (i == 1) {
    ok = cli_model.add.n ? id_write_world(o->f, r->m, err, sizeof err)
                         : id_write_model(o->f, r->model_path, r->m, &r->table, err, sizeof err);
  }
  if (i == 2) ok = id_write_report(o->f, r, err, sizeof err);
  if (!ok) cli_error("%s", err);
  return ok;
}

// after the fit: open every output (temporaries only now), write them all, then rename them all; if one fails,
// none is renamed and every temporary is removed. Regular files first, so that a device or FIFO output is
// written only when every temporary is complete; SIGPIPE is ignored meanwhile (a FIFO whose reader left is a
// write error, EPIPE, not a death that would leave the finished temporaries behind)
static int write_outputs(cliOutput o[ID_NOUT], const idRun* r) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  int ok = 1;
  for (int pass = 0; pass < 2; pass++) {
    for (int i = 0; ok && i < ID_NOUT; i++) {
      if (!o[i].path || (o[i].kind == CLI_OUT_REPLACE) != (pass == 0)) continue;
      ok = cli_output_open(o + i) && write_output(o + i, i, r);
      if (ok && o[i].kind == CLI_OUT_REPLACE) ok = cli_output_finish(o + i);
    }
  }
  if (!ok) {
    for (int i = 0; i < ID_NOUT; i++) cli_output_abort(o + i);
    return 0;
  }
  return cli_outputs_commit(o, ID_NOUT);
}

//---------------------------------------------------------------------------------------------------------
// the command

// monotonic wall clock (s)
static double wall_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// 1 if the file name ends in .urdf (any case)
static int is_urdf(const char* path) {
  size_t n = strlen(path);
  return n >= 5 && strcasecmp(path + n - 5, ".urdf") == 0;
}

// the geoms of the specs' vertices:GEOM parameters into cli_model.vertices: the model is loaded with their shapes
// learned (physLoadOptions.vertex_geoms; names kept in a static buffer)
static void learned_geoms(const idArgs* a) {
  static char name[ARGS_MAXLIST][128];   // (a model name: at most 127 bytes)
  cli_model.vertices.n = 0;
  for (int i = 0; i < a->nspec && cli_model.vertices.n < ARGS_MAXLIST; i++) {
    if (strncmp(a->spec[i], "vertices:", 9)) continue;
    char* out = name[cli_model.vertices.n];
    snprintf(out, 128, "%.*s", (int)strcspn(a->spec[i] + 9, ":"), a->spec[i] + 9);
    cli_model.vertices.item[cli_model.vertices.n++] = out;
  }
}

// load the model and set up parameters; the checks that need the model (identify.h)
int id_prepare(idRun* r, const idArgs* a) {
  if (a->write_model && cli_model.add.n && is_urdf(a->write_model)) {
    cli_error("identify: --write-model %s: a world composed with --add is written as one MJCF file (.xml)",
              a->write_model);
    return CLI_EXIT_USAGE;
  }
  if (a->write_model && !cli_model.add.n && is_urdf(a->write_model) != is_urdf(a->model)) {
    cli_error("identify: --write-model %s: the written model has the format of %s (%s)", a->write_model, a->model,
              is_urdf(a->model) ? ".urdf" : "MJCF .xml");
    return CLI_EXIT_USAGE;
  }
  r->replay = a->replay || a->replay_of;
  if (r->replay && !a->report) {
    cli_error("identify: %s embeds a replay in the report: give --report FILE.html",
              a->replay_of ? "--replay-trajectories" : "--replay");
    return CLI_EXIT_USAGE;
  }
  if (a->replay_of && !replay_list(a->replay_of, -1, r)) return CLI_EXIT_USAGE;
  char* three = NULL;   // before any work: the replay needs three.js (tools/view.c)
  if (r->replay && !view_read_three(&three, NULL)) return CLI_EXIT_INPUT;
  free(three);
  cli_quiet = a->quiet;   // also from the job file
  learned_geoms(a);
  r->m = cli_load_model(a->model, a->floating);
  if (!r->m && cli_model.vertices.n > 0) {   // the model loads without the learned shapes: a vertices spec is bad
    cli_model.vertices.n = 0;
    physModel* plain = cli_load_model(a->model, a->floating);
    phys_free_model(plain);
    return plain ? (a->param.n > 0 ? CLI_EXIT_USAGE : CLI_EXIT_INPUT) : CLI_EXIT_INPUT;
  }
  if (!r->m) return CLI_EXIT_INPUT;
  if (a->contact >= 0) r->m->opt.contact = a->contact;
  for (int u = 0; u < r->m->nu; u++)
    if (r->m->actuator_trntype[u] == PHYS_TRN_BODY) {   // before any work: the fit needs the step derivatives
      cli_error("identify: %s: actuator '%s' is an adhesion actuator: the step derivatives do not support it "
                "(simulate only)", a->model, phys_id2name(r->m, "actuator", u));
      return CLI_EXIT_INPUT;
    }
  int icode = cli_integrator_options(r->m, a->cmd, a->model, 1);
  if (icode >= 0) return icode;
  if (!cli_residual_fits(r->m)) return CLI_EXIT_USAGE;
  int code = setup_params(r, a);
  if (code >= 0) return code;
  char err[PHYS_MSGLEN];
  if (a->write_model && !(cli_model.add.n ? id_write_world(NULL, r->m, err, sizeof err)
                                           : id_write_model(NULL, a->model, r->m, &r->table, err, sizeof err))) {
    cli_error("%s", err);
    return CLI_EXIT_INPUT;
  }
  fit_options(&r->fit, a);
  if (r->m->residual && r->fit.loss == PHYS_LOSS_VIOLATION && a->approach != ID_APP_CCN_R) {   // (LM's fit: no weights)
    cli_error("--residual: identify's violation fit does not train a network (--approach ccn-r does)");
    return CLI_EXIT_USAGE;
  }
  if (a->ctrl_value && !parse_ctrl(r, a, a->ctrl_value)) return a->ctrl_job ? CLI_EXIT_INPUT : CLI_EXIT_USAGE;
  return -1;
}

// the warnings a library call left in log, as "warning: ..." lines on stderr; the log's warnings are cleared
static void print_log_warnings(physLog* log) {
  cli_log_warnings(log);
  phys_log_clear_warnings(log);
}

// the default method's standard errors and 95% intervals, clipped to the bounds (the parameter cannot leave
// them); 0 if out of memory
static int intervals(idRun* r) {
  int n = r->res.ntheta;
  r->se = malloc(sizeof(double) * 3 * (size_t)n);
  if (!r->se) {
    cli_error("identify: out of memory");
    return 0;
  }
  r->ci_lo = r->se + n, r->ci_hi = r->se + 2 * n;
  for (int i = 0; i < n; i++) {
    r->se[i] = r->res.method == PHYS_SE_CLUSTER ? r->res.se_cluster[i] : r->res.stderr_[i];
    phys_fit_interval(&r->res, r->res.method, i, &r->ci_lo[i], &r->ci_hi[i]);
    if (!isnan(r->ci_lo[i])) r->ci_lo[i] = fmax(r->ci_lo[i], r->lower[i]);
    if (!isnan(r->ci_hi[i])) r->ci_hi[i] = fmin(r->ci_hi[i], r->upper[i]);
  }
  return 1;
}

// the defaults that depend on the data (substeps from the model's timestep, the loss from whether the velocities
// are differenced positions) for the settings not given, each choice on stderr
static void data_defaults(idRun* r, const idArgs* a) {
  unsigned given = (a->loss >= 0 ? PHYS_GIVEN_LOSS : 0) | (a->substeps > 0 ? PHYS_GIVEN_SUBSTEPS : 0) |
                   (!isnan(a->w[0]) ? PHYS_GIVEN_WEIGHTS : 0) | (a->horizon > 0 ? PHYS_GIVEN_HORIZON : 0);
  if (r->fit.loss == PHYS_LOSS_VIOLATION) given |= PHYS_GIVEN_SUBSTEPS;   // one transition per sample interval
  char why[1600];
  int vel = a->velocities < 0 ? PHYS_VEL_AUTO : a->velocities;
  phys_fit_data_defaults(&r->fit, r->m, &r->ds, given, vel, why, sizeof why);
  size_t n = strlen(why);
  if (n + 1 < sizeof why) {
    if (n) why[n++] = '\n';
    phys_fit_start_default(&r->fit, r->m, &r->ds, a->fit_start < 0 ? PHYS_START_AUTO : a->fit_start, vel, why + n,
                           sizeof why - n);
  }
  for (char *line = why, *end; !a->quiet && *line; line = end + (*end == '\n')) {
    end = line + strcspn(line, "\n");
    fprintf(stderr, "physid: %s: %.*s\n", a->cmd, (int)(end - line), line);
  }
}

// after a one-step fit that compares velocities: a warning if its velocity residuals look like differencing
// noise (phys_fit_differencing_noise)
static void check_differencing(idRun* r, const idArgs* a) {
  if (a->quiet || r->fit.loss != PHYS_LOSS_ONESTEP || !(r->fit.w_vel > 0)) return;
  double corr, lag1;
  int npair;
  physLog log = {0};
  if (phys_fit_differencing_noise(r->m, &r->ds, &r->fit, &corr, &lag1, &npair, &log) != PHYS_OK || 
      !phys_fit_differencing_suspect(corr, lag1))
    return;
  fprintf(stderr, "warning: identify: the one-step velocity residuals look like differencing noise (over %d "
          "coordinates: correlation %.3f of dt x velocity residual with position residual, lag-1 autocorrelation "
          "%.3f; differenced white position noise gives 1 and -0.667): the velocities carry the positions' noise "
          "divided by dt and bias the one-step loss; --loss kstep --horizon 30 --weights POS,ROT,0 fits positions over "
          "30-sample segments instead\n", npair, corr, lag1);
}

#define ID_PROBES 4          // probes of the loss after a one-start fit
#define ID_PROBE_MARGIN 1e-3 // a probe this much (relative) below the fit's loss means another basin

// after a one-start fit: the loss at ID_PROBES points drawn in the bounds (phys_fit_probe); a warning when one is
// lower than the fit's: the fit ended in a local minimum
static void check_basin(idRun* r, const idArgs* a) {
  if (a->quiet || r->fit.starts != 1 || r->res.ntheta < 1) return;
  double* th = malloc(sizeof(double) * (size_t)r->res.ntheta);
  double best;
  physLog log = {0};
  if (th && phys_fit_probe(r->m, &r->table, r->theta0, r->lower, r->upper, &r->ds, &r->fit, &r->res, ID_PROBES, th, &best,
                           &log) == PHYS_OK && best < r->res.loss * (1 - ID_PROBE_MARGIN)) {
    fprintf(stderr, "warning: identify: the fit ended in a local minimum: the loss at a probe (");
    for (int i = 0; i < r->res.ntheta; i++) fprintf(stderr, "%s%s = %.6g", i ? ", " : "", r->label[i], th[i]);
    fprintf(stderr, ") is %.6g, %.3g times below the fit's %.6g; --starts N (N >= 3) runs more starts and keeps the "
            "best, or start nearer (see 'physid sweep')\n", best, r->res.loss / best, r->res.loss);
  }
  free(th);
}

// load the data and print the summary line (identify.h)
// --replay-trajectories LIST ("0,3,7" or "all"; NULL: the first) into r->replay_idx: indices into the data's
// trajectories in the order the files are given, at most ID_MAXREPLAY, each below ntraj (ntraj < 0: the syntax only,
// before the data are read); 0 after a message
static int replay_list(const char* list, int ntraj, idRun* r) {
  r->nreplay = 0;
  if (!list || !strcmp(list, "all")) {
    int n = !list ? 1 : ntraj < 0 ? 0 : ntraj < ID_MAXREPLAY ? ntraj : ID_MAXREPLAY;
    for (int k = 0; k < n; k++) r->replay_idx[r->nreplay++] = k;
    return 1;
  }
  for (const char* s = list; *s;) {
    char* end;
    long k = strtol(s, &end, 10);
    if (end == s || k < 0 || (*end && *end != ',') || (ntraj >= 0 && k >= ntraj) || r->nreplay == ID_MAXREPLAY) {
      if (ntraj >= 0 && end != s && k >= ntraj)
        cli_error("--replay-trajectories %s: trajectory %ld: the data hold %d (indices 0 to %d)", list, k, ntraj,
                  ntraj - 1);
      else
        cli_error("--replay-trajectories %s: expected 'all' or up to %d comma-separated trajectory indices from 0",
                  list, ID_MAXREPLAY);
      return 0;
    }
    r->replay_idx[r->nreplay++] = (int)k;
    s = *end ? end + 1 : end;
  }
  if (r->nreplay > 0) return 1;
  cli_error("--replay-trajectories '%s': no trajectory given", list);
  return 0;
}

int id_load_data(idRun* r, const idArgs* a) {
  physDataOptions dopt = {0};
  dopt.map = a->maps;
  dopt.nmap = a->nmaps;
  dopt.observe = a->observe;
  dopt.max_files = a->files > 0 ? a->files : 0;
  dopt.first_file = a->skip > 0 ? a->skip : 0;
  physLog log = {0};
  physStatus s = phys_dataset_load(&r->ds, r->m, a->data, a->ndata, &dopt, &log);
  print_log_warnings(&log);
  if (s != PHYS_OK) {
    cli_error("%s", log.error);
    return 0;
  }
  if (r->ds.has_ctrl && a->ctrl_value) {
    cli_error("%s%s: the data record their controls (u columns, %s); give one or the other",
              a->ctrl_job ? a->job : "--ctrl-value", a->ctrl_job ? ": key 'ctrl_value'" : "", r->ds.traj[0].source);
    return 0;
  }
  data_defaults(r, a);
  if (r->replay && !replay_list(a->replay_of, r->ds.ntraj, r)) return 0;
  if (!a->quiet) {
    int nsample = 0;
    for (int k = 0; k < r->ds.ntraj; k++) nsample += r->ds.traj[k].T;
    fprintf(stderr, "physid: %s: %d trajectories (%d samples, dt %.6g s), %d parameters (%d values); loss %s, "
            "contact %s%s%s\n", a->cmd, r->ds.ntraj, nsample, r->ds.dt_obs, r->table.n, r->table.ntheta,
            (const char*[]){"onestep", "kstep", "rollout", "violation"}[r->fit.loss], phys_contact_name(r->m->opt.contact),
            r->ds.has_ctrl ? "; recorded controls" : "", r->ds.has_qfrc ? "; recorded joint forces" : "");
  }
  return 1;
}

// the approaches with a network and --progressive train on one process: 2 after a message under mpirun, else -1
static int one_process(const idArgs* a) {
  if (!cli_mpi_comm() || !(a->approach == ID_APP_E2E || a->approach == ID_APP_DIFFSIM_R ||
                           a->approach == ID_APP_CCN_R || a->progressive))
    return -1;
  cli_error("identify: %s runs on one process: start it without mpirun",
            a->progressive ? "--progressive" : "--approach with a network");
  return CLI_EXIT_USAGE;
}

// --progressive with the settings it cannot take: 2 after a message, else -1 (before any work)
static int progressive_refusal(const idArgs* a) {
  if (!a->progressive) {
    if (a->validation < 0) return -1;
    cli_error("%s: --validation N needs --progressive", a->cmd);
    return CLI_EXIT_USAGE;
  }
  const char* bad = a->optimizer >= 0 && a->optimizer != PHYS_OPT_ADAM ? "--optimizer (it trains with adam)"
                    : a->starts > 1 ? "--starts" : a->bootstrap > 0 ? "--bootstrap"
                    : a->checkpoint ? "--checkpoint" : a->prior > 0 ? "--prior" : a->approach >= 0 ? "--approach" : NULL;
  if (!bad) return -1;
  cli_error("%s: --progressive does not take %s", a->cmd, bad);
  return CLI_EXIT_USAGE;
}

// --progressive (sysid.h phys_fit_progressive): the last --validation trajectories validate (default 1 of two or
// more, else the training set); one line per epoch on stderr unless --quiet
static physStatus fit_progressive(idRun* r, const idArgs* a, physLog* log) {
  int nval = a->validation >= 0 ? a->validation : (r->ds.ntraj >= 2 ? 1 : 0);
  if (nval >= r->ds.ntraj) {
    return phys_error(log, PHYS_ERR_ARG, "--validation %d leaves no trajectory to fit (%d loaded)", nval,
                      r->ds.ntraj);
  }
  physDataset train = r->ds, valid = r->ds;
  train.ntraj = r->ds.ntraj - nval;
  valid.traj = r->ds.traj + train.ntraj;
  valid.ntraj = nval;
  physFitOptions o = r->fit;
  o.max_iter = a->iters > 0 ? a->iters : 10;
  o.verbose = 0;
  physProgressiveOptions po = {a->lr > 0 ? a->lr : 0.1, 1e-4, 100, 1e-3};
  physProgressiveEpoch* hist = malloc(sizeof(physProgressiveEpoch) * 2 * (size_t)po.max_epochs);
  if (!hist) return phys_error(log, PHYS_ERR_NOMEM, "out of memory");
  int nh = 0;
  physStatus s = phys_fit_progressive(r->m, &r->table, r->theta0, r->lower, r->upper, &train, nval ? &valid : NULL,
                                      &o, &po, &r->res, hist, &nh, log);
  r->m->opt.integrator = PHYS_INT_EULER;   // the values are stage 2's, fine-tuned for semi-implicit Euler: the
                                           // integrator result.json records and --write-model writes
  for (int e = 0; e < nh && !a->quiet; e++)
    fprintf(stderr, "progressive epoch %d: %s, %d substeps (dt %g s), lr %g: loss %.9g, validation %.9g\n", e + 1,
            hist[e].stage == 1 ? "implicit" : "semi-implicit", hist[e].substeps, r->ds.dt_obs / hist[e].substeps,
            hist[e].lr, hist[e].train, hist[e].valid);
  free(hist);
  return s;
}

// load the data, fit, print
static int run_fit(idRun* r, const idArgs* a) {
  if (!id_load_data(r, a)) return 0;
  physLog log = {0};
  physStatus s;
  double t0 = wall_seconds();
  if (a->progressive) s = fit_progressive(r, a, &log);
  else s = phys_fit(r->m, &r->table, r->theta0, r->lower, r->upper, &r->ds, &r->fit, &r->res, &log);
  r->wall = wall_seconds() - t0;
  print_log_warnings(&log);
  if (s != PHYS_OK) {
    cli_error("identify: %s", log.error[0] ? log.error : phys_status_str(s));
    return 0;
  }
  check_differencing(r, a);
  check_basin(r, a);
  if (a->bootstrap > 0) {
    if (!a->quiet) fprintf(stderr, "physid: identify: bootstrap: %d refits on resampled trajectories\n", a->bootstrap);
    s = phys_fit_bootstrap(r->m, &r->table, r->lower, r->upper, &r->ds, &r->fit, a->bootstrap, r->fit.seed, &r->res,
                           &log);
    if (s != PHYS_OK) {
      cli_error("identify: %s", log.error[0] ? log.error : phys_status_str(s));
      return 0;
    }
  }
  if (!intervals(r)) return 0;
  if (!a->quiet && r->res.ngroups < 2)
    fprintf(stderr, "warning: identify: one trajectory: the intervals are iid (s^2 (J'J)^-1), which ignores model "
            "error and is usually far too narrow on real data; fit several trajectories for cluster-robust ones\n");
  else if (!a->quiet && r->res.ngroups < 10)
    fprintf(stderr, "warning: identify: only %d trajectories: the cluster-robust intervals (the default) use "
            "Student's t with %d dof but rest on few trajectories; 10 or more make them reliable%s\n",
            r->res.ngroups, r->res.ngroups - 1,
            r->res.ngroups <= r->res.ntheta ? " (with no more trajectories than parameter values the covariance is "
                                              "singular: its correlations are not estimated)" : "");
  print_results(r);
  return 1;
}

// free what the job file left in the settings
static void args_free(idArgs* a) {
  cJSON_Delete(a->json);
  for (int i = 0; i < a->npool; i++) free(a->pool[i]);
}

// free a run and the settings (identify.h)
void id_cleanup(idRun* r, idArgs* a) {
  phys_fit_result_free(&r->res);
  free(r->se);
  phys_dataset_free(&r->ds);
  phys_param_table_free(&r->table);
  free(r->theta0);
  free(r->lower);
  free(r->upper);
  free(r->label);
  phys_free_model(r->m);
  args_free(a);
}

int id_read_job(const char* path) {
  idArgs a;
  id_args_init(&a, "identify");
  a.job = path;
  int code = id_merge_settings(&a);
  args_free(&a);
  return code;
}

// the option table and the command
int cli_identify(int argc, char** argv) {
  idArgs a;
  id_args_init(&a, "identify");
  const argOption opt[] = {
      {"--param", ARG_LIST, &a.param, "KIND:NAME[:init=V][:min=A][:max=B][:scale=S]", "a parameter to identify", 0, 0, 0},
      ID_DATA_OPTIONS,
      {"--optimizer", ARG_CHOICE, &a.optimizer, "lm|lbfgsb|adam", "optimizer (default lm)", 0, 0, 0},
      {"--starts", ARG_INT, &a.starts, "N", "multi-start: initial values, then N-1 draws in the bounds", 1, 1e4, 0},
      {"--seed", ARG_INT, &a.seed, "S", "seed of the multi-start draws and the bootstrap (default 1)", 0, 2147483647,
       0},
      {"--bootstrap", ARG_INT, &a.bootstrap, "N", "N refits on trajectories resampled with replacement (percentile "
       "intervals; default 0: none)", 1, 1e5, 0},
      {"--iters", ARG_INT, &a.iters, "N", "iterations per start (default 100, adam 500)", 1, 1e7, 0},
      {"--threads", ARG_INT, &a.threads, "N", "threads simulating the trajectories (default: the cores this process "
       "may use, shared among mpirun's processes on the machine; at most 16); the result is the same for any N", 1,
       16, 0},
      {"--lr", ARG_DOUBLE, &a.lr, "RATE", "Adam's learning rate (default 0.01)", 1e-300, 1e300, 0},
      {"--job", ARG_STRING, &a.job, "FILE.json", "settings from a JSON job file (options override it)", 0, 0, 0},
      {"--out", ARG_STRING, &a.out, "FILE.json", "write the result as JSON", 0, 0, 0},
      {"--write-model", ARG_STRING, &a.write_model, "FILE", "write the model with the identified values", 0, 0, 0},
      {"--report", ARG_STRING, &a.report, "FILE.html", "write an HTML report (inline SVG)", 0, 0, 0},
      {"--replay", ARG_FLAG, &a.replay, "", "the report also embeds a 3-D replay of the first trajectory: observed, "
       "the identified and the initial model's rollouts (three.js inlined: +0.9 MB)", 0, 0, 0},
      {"--replay-trajectories", ARG_STRING, &a.replay_of, "LIST", "--replay of these trajectories (indices from 0 in "
       "the data's order, comma-separated, or 'all'; at most 16), one scene each with a selector", 0, 0, 0},
      {"--quiet", ARG_FLAG, &a.quiet, "", "no progress and no warnings on stderr (errors still print)", 0, 0, 0},
      {"--checkpoint", ARG_STRING, &a.checkpoint, "FILE", "write the optimizer's state to FILE after every "
       "iteration (atomically)", 0, 0, 0},
      {"--resume", ARG_FLAG, &a.resume, "", "continue from --checkpoint FILE (a fresh start if it does not exist)",
       0, 0, 0},
      {"--approach", ARG_CHOICE, &a.approach, ID_APPROACH_NAMES, "paper 004's approaches (docs/identification.md; "
       "identify_approach.c)", 0, 0, 0},
      {"--network-out", ARG_STRING, &a.network_out, "FILE", "ccn-r, diffsim-r, end-to-end: write the trained network "
       "(JSON, --residual FILE reads it)", 0, 0, 0},
      {"--residual-reg", ARG_STRING, &a.rreg, "OUT,W", "ccn-r, diffsim-r: weights of the network's output-norm "
       "(mean |r|^2) and weight-norm (|w|^2) terms (default 1e-4,1e-8; docs/identification.md)", 0, 0, 0},
      {"--progressive", ARG_FLAG, &a.progressive, "", "paper 002's progressive training: Adam epochs of --iters "
       "iterations (default 10), implicit from one step per sample (the step halving, then --lr (default 0.1) "
       "halving, on each rise of the validation loss), then semi-implicit Euler (docs/identification.md)", 0, 0, 0},
      {"--validation", ARG_INT, &a.validation, "N", "--progressive: the last N trajectories validate and are not "
       "fitted (default 1 with two or more trajectories; 0: the training set validates)", 0, 1e6, 0},
  };
  const argCommand cmd = {"identify",
                          "Identify physical parameters of MODEL from recorded trajectories DATA (CSV or .npy files, "
                          "or folders of them)\nand print them with their standard errors. KIND: mass com inertia "
                          "friction restitution size pos damping\narmature stiffness frictionloss restlength gravity "
                          "gear gain bias kp kv penalty,\nand of the recorded inputs delay inputgain inputbias.",
                          "MODEL DATA...", -1, opt, sizeof opt / sizeof opt[0],
                          "physid identify models/cube.xml data/cube_toss --param friction:cube --param "
                          "restitution:cube --out result.json"};
  int code = cli_parse(a.pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if ((code = cli_integrator_derivatives("identify")) >= 0) return code;
  if ((code = one_process(&a)) >= 0) return code;
  if (a.approach == ID_APP_E2E) return id_run_e2e(&a);
  idRun r;
  memset(&r, 0, sizeof r);
  code = id_merge_settings(&a);   // (the job's approach, network_out, progressive: then checked as the options)
  if (code < 0) code = one_process(&a);
  if (code < 0) code = id_approach_map(&a);
  if (code < 0) code = progressive_refusal(&a);
  r.model_path = a.model;
  if (code < 0) code = id_prepare(&r, &a);
  if (code < 0 && (a.approach == ID_APP_DIFFSIM_R || a.approach == ID_APP_CCN_R)) code = id_run_residual(&r, &a);
  if (code < 0) {
    cliOutput o[ID_NOUT];
    code = CLI_EXIT_INPUT;
    if (check_outputs(o, &a) && run_fit(&r, &a)) {
      r.fit.comm = NULL;   // the outputs (the report's predictions) are process 0's alone
      if (cli_mpi_rank() > 0 || write_outputs(o, &r)) code = CLI_EXIT_OK;
    }
  }
  id_cleanup(&r, &a);
  return code;
}
