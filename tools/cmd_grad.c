// cmd_grad.c - `physid jacobian`: the Jacobians of one step at a given state as CSV, A = dx+/dx, B = dx+/du
// and P = dx+/dtheta for the parameters --wrt names, x = (tangent of q, v, act), 2nv + na numbers (grad.h);
// and what it shares with `physid gradcheck` (cmd_gradcheck.c, declarations in cmd_grad.h).
//
// The Jacobians come from phys_step_jacobian and phys_step_param_jacobian, which differentiate the step the
// model's contact model takes (contact-free, or through the contacts where the library provides those
// derivatives); a state they refuse exits 1 with the reason.
#include "cmd_grad.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision.h"
#include "contact.h"
#include "grad.h"
#include "primitive_deriv.h"
#include "trajio.h"

//---------------------------------------------------------------------------------------------------------
// shared: model, --wrt, default parameters, status messages, saved states

physModel* grad_load_model(const gradArgs* a) {
  physModel* m = cli_load_model(a->model, a->floating);
  if (!m) return NULL;
  if (!cli_step_options(m, a->dt, a->nocontact, a->contact)) {
    phys_free_model(m);
    return NULL;
  }
  if (cli_integrator_options(m, "jacobian", a->model, 1) >= 0) {   // (a model the pbd step refuses: message given)
    phys_free_model(m);
    return NULL;
  }
  return m;
}

// append a copy of spec to the list (*n entries, capacity *cap); 0 if out of memory
static int push_spec(char*** list, int* n, int* cap, const char* spec) {
  if (*n == *cap) {
    int nc = *cap ? 2 * *cap : 16;
    char** l = realloc(*list, sizeof(char*) * (size_t)nc);
    if (!l) return 0;
    *list = l;
    *cap = nc;
  }
  size_t len = strlen(spec) + 1;
  char* s = malloc(len);
  if (!s) return 0;
  memcpy(s, spec, len);
  (*list)[(*n)++] = s;
  return 1;
}

void grad_free_specs(char** spec, int n) {
  for (int i = 0; i < n; i++) free(spec[i]);
  free(spec);
}

// 1 if the single spec builds a table on m (its name exists and the kind applies)
static int spec_ok(const physModel* m, const char* spec) {
  physLog log;
  memset(&log, 0, sizeof log);
  physParamTable t;
  const char* one[1] = {spec};
  int ok = phys_param_table_build(&t, m, one, 1, &log) == PHYS_OK;
  phys_param_table_free(&t);
  return ok;
}

// push "KIND:NAME" if NAME is not empty and the spec builds
static void push_named(char*** list, int* n, int* cap, const physModel* m, const char* kind, const char* name) {
  char spec[200];
  if (!name || !name[0]) return;
  snprintf(spec, sizeof spec, "%s:%s", kind, name);
  if (spec_ok(m, spec)) push_spec(list, n, cap, spec);
}

int grad_default_params(char*** spec, const physModel* m) {
  char** s = NULL;
  int n = 0, cap = 0;
  for (int b = 1; b < m->nbody; b++) {
    push_named(&s, &n, &cap, m, "inertia", phys_id2name(m, "body", b));
    push_named(&s, &n, &cap, m, "pos", phys_id2name(m, "body", b));
  }
  for (int j = 0; j < m->njnt; j++) {
    const char* name = phys_id2name(m, "joint", j);
    int da = m->jnt_dofadr[j];
    if (m->dof_damping[da] > 0) push_named(&s, &n, &cap, m, "damping", name);
    if (m->dof_armature[da] > 0) push_named(&s, &n, &cap, m, "armature", name);
    if (m->dof_frictionloss[da] > 0) push_named(&s, &n, &cap, m, "frictionloss", name);
    push_named(&s, &n, &cap, m, "stiffness", name);
  }
  if (!(m->opt.disableflags & PHYS_DSBL_GRAVITY)) push_spec(&s, &n, &cap, "gravity");
  for (int a = 0; a < m->nu; a++) push_named(&s, &n, &cap, m, "gear", phys_id2name(m, "actuator", a));
  for (int sp = 0; sp < m->nspring; sp++) {
    const char* name = phys_id2name(m, "spring", sp);
    // a spring's name may equal a joint's: the table then resolves damping/stiffness to the joint
    if (phys_name2id(m, "joint", name) < 0) {
      push_named(&s, &n, &cap, m, "stiffness", name);
      push_named(&s, &n, &cap, m, "damping", name);
    }
    push_named(&s, &n, &cap, m, "restlength", name);
  }
  if (!(m->opt.disableflags & PHYS_DSBL_CONTACT)) {
    for (int g = 0; g < m->ngeom; g++) {
      const char* name = phys_id2name(m, "geom", g);
      int paired = 0;
      for (int k = 0; k < m->npair; k++) paired |= m->pair_geom1[k] == g || m->pair_geom2[k] == g;
      if (!m->geom_contype[g] && !m->geom_conaffinity[g] && !paired) continue;
      if (m->geom_friction[3 * g] > 0) push_named(&s, &n, &cap, m, "friction", name);
      // torsional and rolling friction: differentiated under penalty only (issue 16)
      int pen = m->opt.contact == PHYS_CONTACT_PENALTY;
      if (pen && m->geom_condim[g] >= 4 && m->geom_friction[3 * g + 1] > 0) push_named(&s, &n, &cap, m, "torsion", name);
      if (pen && m->geom_condim[g] == 6 && m->geom_friction[3 * g + 2] > 0) push_named(&s, &n, &cap, m, "rolling", name);
      if (m->geom_restitution[g] > 0.01 && m->geom_restitution[g] < 0.99)
        push_named(&s, &n, &cap, m, "restitution", name);
      if (phys_geom_nsize(m->geom_type[g]) > 0) push_named(&s, &n, &cap, m, "size", name);
    }
    if (m->opt.contact == PHYS_CONTACT_PENALTY) {
      push_spec(&s, &n, &cap, "penalty:stiffness");
      if (m->opt.penalty_damping > 0) push_spec(&s, &n, &cap, "penalty:damping");
    }
  }
  *spec = s;
  return n;
}

int grad_parse_wrt(gradWrt* w, const physModel* m, const char* text) {
  memset(w, 0, sizeof *w);
  char** spec = NULL;
  int n = 0, cap = 0, ok = 1;
  const char* s = text;
  while (ok && *s) {
    const char* end = strchr(s, ',');
    size_t len = end ? (size_t)(end - s) : strlen(s);
    char item[256];
    if (len == 0 || len >= sizeof item) {
      cli_error("--wrt: empty or too long item in '%s'", text);
      ok = 0;
      break;
    }
    memcpy(item, s, len);
    item[len] = 0;
    if (!strcmp(item, "state")) {
      w->state = 1;
    } else if (!strcmp(item, "ctrl")) {
      if (m->nu == 0) {
        cli_error("--wrt ctrl: the model has no actuators");
        ok = 0;
      }
      w->ctrl = 1;
    } else if (!strcmp(item, "params")) {
      char** all = NULL;
      int na = grad_default_params(&all, m);
      for (int i = 0; i < na; i++) push_spec(&spec, &n, &cap, all[i]);
      grad_free_specs(all, na);
    } else if (!strncmp(item, "param:", 6)) {
      push_spec(&spec, &n, &cap, item + 6);
    } else {
      cli_error("--wrt: unknown item '%s' (valid: state, ctrl, params, param:KIND:NAME)", item);
      ok = 0;
    }
    s = end ? end + 1 : s + len;
  }
  if (ok && n > 0) {
    physLog log;
    memset(&log, 0, sizeof log);
    if (phys_param_table_build(&w->table, m, (const char* const*)spec, n, &log) != PHYS_OK) {
      cli_error("--wrt: %s", log.error);
      ok = 0;
    }
    for (int e = 0; ok && e < w->table.n; e++)
      if (phys_param_is_input(w->table.param[e].kind)) {
        cli_error("--wrt: param '%s' transforms the recorded inputs of a data set (identify, sweep): the step has "
                  "no derivative with respect to it", w->table.param[e].name);
        ok = 0;
      }
  }
  grad_free_specs(spec, n);
  return ok;
}

void grad_wrt_free(gradWrt* w) { phys_param_table_free(&w->table); }

// number of contacts the step at d's state detects (collision.h: d's contact list, the warm start, is left
// as it was)
static int count_contacts(const physModel* m, physData* d) {
  if (m->opt.disableflags & PHYS_DSBL_CONTACT) return 0;
  phys_kinematics(m, d);
  return phys_collision_count(m, d);
}

// the number of equality constraints that act (none when <flag equality="disable">)
static int active_equalities(const physModel* m) {
  int n = 0;
  for (int e = 0; e < m->neq && !(m->opt.disableflags & PHYS_DSBL_EQUALITY); e++) n += m->eq_active[e] != 0;
  return n;
}

void grad_explain_status(const physModel* m, physData* d, physStatus st, const char* where) {
  if (st == PHYS_ERR_ARG) {
    int nlimit = phys_constraint_nlimit(m, d), ncon = count_contacts(m, d);
    char what[96];
    if (nlimit > 0 && ncon > 0) snprintf(what, sizeof what, "%d contacts and an active joint limit", ncon);
    else if (nlimit > 0) snprintf(what, sizeof what, "an active joint limit");
    else snprintf(what, sizeof what, "%d contacts", ncon);
    cli_error("%s: the state has %s (contact model %s), and the library refused the derivatives of its step: "
              "not implemented for this geom pair or parameter%s%s%s", where, what,
              phys_contact_name(m->opt.contact), nlimit > 0 ? "" : " (--no-contact disables contacts)",
              d->lastwarning[0] ? "; last library message: " : "", d->lastwarning);
  } else if (st == PHYS_ERR_MODEL && active_equalities(m) > 0 && strstr(d->lastwarning, "equality")) {
    cli_error("%s: the model has %d active equality constraints: the step Jacobians support them under penalty, "
              "and under lcp, cone and ccp with contacts and limits except where one holds a motion an equality row "
              "holds (<flag equality=\"disable\"/> turns them off); library: %s", where,
              active_equalities(m), d->lastwarning);
  } else if (st == PHYS_ERR_MODEL) {
    if (!phys_grad_actuators_ok(m))
      cli_error("%s: a rest-length actuator has dynamics: the step Jacobians do not support it", where);
    else if (!phys_grad_balls_last(m))
      cli_error("%s: a ball joint is not the last joint of its body: the step Jacobians do not support it", where);
    else   // the library's own reason (the implicit integrator with activations was reported as a ball joint)
      cli_error("%s: the step Jacobians do not support this model: %s", where,
                d->lastwarning[0] ? d->lastwarning : "(no library message)");
  } else {
    cli_error("%s: numerical failure in the step Jacobians: %s", where, d->lastwarning);
  }
}

int grad_save_alloc(gradSave* s, const physModel* m) {
  memset(s, 0, sizeof *s);
  size_t nc = (size_t)(m->nconmax > 0 ? m->nconmax : 1);
  s->qpos = malloc(sizeof(double) * (size_t)m->nq);
  s->qvel = malloc(sizeof(double) * ((size_t)m->nv + 1));
  s->ctrl = malloc(sizeof(double) * ((size_t)m->nu + 1));
  s->act = malloc(sizeof(double) * ((size_t)m->na + 1));
  s->contact = malloc(sizeof(physContact) * nc);
  return s->qpos && s->qvel && s->ctrl && s->act && s->contact;
}

void grad_save_free(gradSave* s) {
  free(s->qpos);
  free(s->qvel);
  free(s->ctrl);
  free(s->act);
  free(s->contact);
  memset(s, 0, sizeof *s);
}

void grad_save(gradSave* s, const physModel* m, const physData* d) {
  s->time = d->time;
  s->ncon = d->ncon;
  memcpy(s->qpos, d->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(s->qvel, d->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(s->ctrl, d->ctrl, sizeof(double) * (size_t)m->nu);
  memcpy(s->act, d->act, sizeof(double) * (size_t)m->na);
  memcpy(s->contact, d->contact, sizeof(physContact) * (size_t)d->ncon);
}

void grad_restore(physData* d, const physModel* m, const gradSave* s) {
  d->time = s->time;
  d->ncon = s->ncon;
  memcpy(d->qpos, s->qpos, sizeof(double) * (size_t)m->nq);
  memcpy(d->qvel, s->qvel, sizeof(double) * (size_t)m->nv);
  memcpy(d->ctrl, s->ctrl, sizeof(double) * (size_t)m->nu);
  memcpy(d->act, s->act, sizeof(double) * (size_t)m->na);
  memcpy(d->contact, s->contact, sizeof(physContact) * (size_t)s->ncon);
}

//---------------------------------------------------------------------------------------------------------
// physid jacobian

// the state of the --init file (t column optional) with its activations act0.. into act and its recorded inputs:
// controls u0.. into ctrl, joint forces tau0.. into qfrc_applied (zero without those columns)
static int read_state(const physModel* m, physData* d, const char* init) {
  physLog log;
  memset(&log, 0, sizeof log);
  phys_reset_data(m, d);
  if (phys_traj_read_state_act(&d->time, d->qpos, d->qvel, d->act, d->ctrl, d->qfrc_applied, m, init, &log) ==
      PHYS_OK)
    return 1;
  cli_error("%s", log.error);
  return 0;
}

// one header row: dq0..dq{nv-1},dv0..dv{nv-1},dact0..dact{na-1} (state), u0..u{nu-1} (ctrl), then the parameter
// specs (KIND:NAME, with [i] for entries of several numbers)
static void write_header(FILE* f, const physModel* m, const gradWrt* w) {
  int nv = m->nv, first = 1;
  if (w->state)
    for (int j = 0; j < 2 * nv + m->na; j++, first = 0)
      fprintf(f, "%s%s%d", first ? "" : ",", j < nv ? "dq" : (j < 2 * nv ? "dv" : "dact"), j < 2 * nv ? j % nv : j - 2 * nv);
  if (w->ctrl)
    for (int j = 0; j < m->nu; j++, first = 0) fprintf(f, "%su%d", first ? "" : ",", j);
  for (int e = 0; e < w->table.n; e++) {
    const physParam* p = w->table.param + e;
    for (int i = 0; i < p->size && !p->tied; i++, first = 0) {
      if (p->size == 1) fprintf(f, "%s%s", first ? "" : ",", p->name);
      else fprintf(f, "%s%s[%d]", first ? "" : ",", p->name, i);
    }
  }
  fputc('\n', f);
}

// x as %.17g, a negative zero as 0
static void put_number(FILE* f, int first, double x) { fprintf(f, "%s%.17g", first ? "" : ",", x == 0 ? 0.0 : x); }

// the nx = 2nv + na rows [A B P] (the parts w asks for) as %.17g
static int write_jacobian(FILE* f, const physModel* m, const double* A, const double* B, const double* P,
                          const gradWrt* w) {
  int n2 = 2 * m->nv + m->na, nu = m->nu, nt = w->table.ntheta;
  write_header(f, m, w);
  for (int i = 0; i < n2; i++) {
    int first = 1;
    if (w->state)
      for (int j = 0; j < n2; j++, first = 0) put_number(f, first, A[(size_t)i * n2 + j]);
    if (w->ctrl)
      for (int j = 0; j < nu; j++, first = 0) put_number(f, first, B[(size_t)i * nu + j]);
    for (int j = 0; j < nt; j++, first = 0) put_number(f, first, P[(size_t)i * nt + j]);
    fputc('\n', f);
  }
  return !ferror(f);
}

// 1 if every value of x (n) is finite
static int all_finite(const double* x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

// A, B (phys_step_jacobian) and P (phys_step_param_jacobian) at d's state
static physStatus compute(const physModel* m, physData* d, const gradWrt* w, double* A, double* B, double* P) {
  physStatus st = PHYS_OK;
  if (w->state || w->ctrl) st = phys_step_jacobian(m, d, w->state ? A : NULL, w->ctrl ? B : NULL);
  if (st == PHYS_OK && w->table.ntheta > 0) st = phys_step_param_jacobian(m, d, &w->table, P);
  return st;
}

// compute the Jacobians at the state, then write them to the (checked) output
static int jacobian(cliOutput* o, const physModel* m, physData* d, const gradArgs* a, const gradWrt* w) {
  size_t n2 = 2 * (size_t)m->nv + (size_t)m->na, na = n2 * n2, nb = n2 * (size_t)m->nu, np = n2 * (size_t)w->table.ntheta;
  double* buf = malloc(sizeof(double) * (na + nb + np + 1));
  if (!buf) {
    cli_error("%s: out of memory", a->model);
    return CLI_EXIT_INPUT;
  }
  double *A = buf, *B = buf + na, *P = buf + na + nb;
  int code = CLI_EXIT_INPUT;
  physStatus st = compute(m, d, w, A, B, P);
  if (st != PHYS_OK) {
    grad_explain_status(m, d, st, a->init);
  } else if (!all_finite(A, w->state ? na : 0) || !all_finite(B, w->ctrl ? nb : 0) || !all_finite(P, np)) {
    cli_error("%s: the Jacobians at this state are not finite", a->init);
  } else if (cli_output_open(o)) {
    write_jacobian(o->f, m, A, B, P, w);   // a write error is caught by the commit
    code = cli_output_commit(o) ? CLI_EXIT_OK : CLI_EXIT_INPUT;
  }
  free(buf);
  return code;
}

// physid jacobian
int cli_jacobian(int argc, char** argv) {
  gradArgs a = {0};
  a.contact = -1;
  const argOption opt[] = {
      {"--init", ARG_STRING, &a.init, "FILE", "the state: CSV with one row (t column optional; u0.., tau0.., act0.. columns: its controls, "
       "joint forces and activations, else zero)",
       0, 0, 1},
      {"--wrt", ARG_STRING, &a.wrt, "LIST",
       "columns, comma-separated: state (A, default), ctrl (B), param:KIND:NAME, params (P)", 0, 0, 0},
      {"--contact", ARG_CHOICE, &a.contact, "lcp|cone|ccp|penalty",
       "contact model (default: the model's physid:contact, else lcp)", 0, 0, 0},
      {"--dt", ARG_DOUBLE, &a.dt, "DT", "timestep in seconds (default: the model's)", 1e-9, 1, 0},
      {"--out", ARG_STRING, &a.out, "FILE", "write the CSV here (default: stdout)", 0, 0, 0},
      {"--no-contact", ARG_FLAG, &a.nocontact, "", "disable contacts (PHYS_DSBL_CONTACT)", 0, 0, 0},
      {"--floating", ARG_FLAG, &a.floating, "", "URDF: give the root link a free joint", 0, 0, 0},
      CLI_MODEL_OPTIONS,
      CLI_INTEGRATOR_OPTIONS,
      {"--quiet", ARG_FLAG, &a.quiet, "", "no warnings on stderr (errors still print)", 0, 0, 0},
  };
  const argCommand cmd = {"jacobian",
                          "Write the Jacobians of one step x+ = step(x, u), x = (dq, v, act) in tangent coordinates, "
                          "as CSV:\n2nv + na rows (dq+0.., dv+0.., dact+0..); columns dq0..,dv0..,dact0.. (A = dx+/dx), "
                          "u0..u{nu-1} (B = dx+/du)\nand one per parameter number (P = dx+/dtheta, named by "
                          "its spec), one header row, values as %.17g.\nA state whose contacts or limits have "
                          "no derivative in the library is refused (exit 1).",
                          "MODEL", 1, opt, sizeof opt / sizeof opt[0],
                          "physid jacobian tests/data/pendulum.xml --init state.csv --wrt state,ctrl,param:mass:bob"};
  const char* pos[ARGS_MAXPOS];
  int code = cli_parse(pos, &cmd, argc, argv);
  if (code >= 0) return code;
  if ((code = cli_integrator_derivatives("jacobian")) >= 0) return code;
  a.model = pos[0];
  cliOutput o;
  const char* input[2] = {a.model, a.init};
  if (!cli_output_check(&o, "--out", a.out) || cli_output_conflicts(&o, 1, input, 2)) return CLI_EXIT_INPUT;
  physModel* m = grad_load_model(&a);
  if (!m) return CLI_EXIT_INPUT;
  gradWrt w;
  if (!grad_parse_wrt(&w, m, a.wrt ? a.wrt : "state")) {
    grad_wrt_free(&w);
    phys_free_model(m);
    return CLI_EXIT_USAGE;
  }
  physData* d = phys_make_data(m);
  code = CLI_EXIT_INPUT;
  if (!d) cli_error("%s: out of memory allocating the simulation data", a.model);
  else if (read_state(m, d, a.init)) code = jacobian(&o, m, d, &a, &w);
  phys_free_data(d);
  grad_wrt_free(&w);
  phys_free_model(m);
  return code;
}
