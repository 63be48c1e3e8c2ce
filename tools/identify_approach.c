// identify_approach.c - `physid identify --approach NAME`: paper 004's Table 1 from the command line
// (identify.h). ccn and diffsim map to identify's own fits; ccn-r and diffsim-r train theta and a residual network
// (the paper's 2 x 128 ReLU) jointly by Adam on the violation or the one-step loss (src/sysid/resnet.h);
// end-to-end trains the paper's
// 4 x 256 tanh next-velocity network (src/sysid/e2e.h). The networks are written with --network-out (JSON,
// src/model/mlp_io.h) and read back by --residual FILE (simulate, evaluate, identify) or, for end-to-end, by
// `physid evaluate --end-to-end FILE`.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "e2e.h"
#include "identify.h"
#include "mlp.h"
#include "mlp_io.h"
#include "residual.h"
#include "resnet.h"

static const char* const g_app_name[] = {"ccn", "ccn-r", "diffsim", "diffsim-r", "end-to-end"};

int id_approach_map(idArgs* a) {
  if (a->rreg && a->approach != ID_APP_CCN_R && a->approach != ID_APP_DIFFSIM_R) {
    cli_error("--residual-reg: only with --approach ccn-r or diffsim-r (the residual network's regularization)");
    return CLI_EXIT_USAGE;
  }
  int nonet = a->approach < 0 || a->approach == ID_APP_CCN || a->approach == ID_APP_DIFFSIM;
  if (a->network_out && nonet) {   // (a job's key: a bad job, exit 1, naming the file and the key)
    char what[512];
    if (a->approach < 0) snprintf(what, sizeof what, "only with --approach ccn-r, diffsim-r or end-to-end");
    else snprintf(what, sizeof what, "--approach %s trains no network", g_app_name[a->approach]);
    if (a->netout_job) cli_error("%s: key 'network_out': %s", a->job, what);
    else cli_error("--network-out: %s", what);
    return a->netout_job ? CLI_EXIT_INPUT : CLI_EXIT_USAGE;
  }
  if (a->approach < 0) return -1;
  int net = a->approach == ID_APP_CCN_R || a->approach == ID_APP_DIFFSIM_R || a->approach == ID_APP_E2E;
  const char* unused = !net ? NULL : a->out ? "--out" : a->report ? "--report" : a->checkpoint ? "--checkpoint"
                       : a->bootstrap > 0 ? "--bootstrap" : a->starts > 1 ? "--starts" : a->optimizer >= 0 ? "--optimizer"
                       : a->approach == ID_APP_E2E && a->write_model ? "--write-model" : NULL;
  if (unused) {   // (the networks' Adam runs print their result and write --network-out, --write-model only)
    cli_error("%s: not with --approach %s", unused, g_app_name[a->approach]);
    return CLI_EXIT_USAGE;
  }
  switch (a->approach) {
    case ID_APP_CCN_R:
    case ID_APP_CCN:
      if (a->loss >= 0 && a->loss != PHYS_LOSS_VIOLATION) break;
      a->loss = PHYS_LOSS_VIOLATION;
      return -1;
    case ID_APP_DIFFSIM:
    case ID_APP_DIFFSIM_R:
      if (a->loss >= 0 && a->loss != PHYS_LOSS_ONESTEP) break;
      a->loss = PHYS_LOSS_ONESTEP;
      if (a->contact < 0) a->contact = PHYS_CONTACT_CCP;
      if (a->optimizer < 0) a->optimizer = PHYS_OPT_ADAM;
      return -1;
    default: return -1;
  }
  cli_error("--approach %s: fits its own loss; --loss is not for it", g_app_name[a->approach]);
  return CLI_EXIT_USAGE;
}

// write network n (role) to --network-out (atomically: the output module's temporary and rename); 0 on failure
static int write_network(cliOutput* o, const physMlp* n, const char* role) {
  if (!o->path) return 1;
  if (!cli_output_open(o)) return 0;
  if (!phys_mlp_write_json(o->f, n, role)) {
    cli_error("%s %s: write error", o->option, o->path);
    cli_output_abort(o);
    return 0;
  }
  return cli_output_commit(o);
}

// --network-out checked against the inputs before any work
static int check_network_out(cliOutput* o, const idArgs* a) {
  const char* input[ID_MAXDATA + 1];
  int n = 0;
  input[n++] = a->model;
  for (int k = 0; k < a->ndata; k++) input[n++] = a->data[k];
  return cli_output_check(o, "--network-out", a->network_out) && !cli_output_conflicts(o, 1, input, n);
}

int id_run_e2e(idArgs* a) {
  int npos = 0;
  while (a->pos[npos]) npos++;
  a->model = npos > 0 ? a->pos[0] : NULL;
  for (int i = 1; i < npos && a->ndata < ID_MAXDATA; i++) a->data[a->ndata++] = a->pos[i];
  if (!a->model || a->ndata < 1 || a->param.n > 0 || a->job) {
    cli_error("identify --approach end-to-end: %s", !a->model ? "missing MODEL" : a->ndata < 1 ? "missing DATA"
              : a->job ? "no --job (give the options)" : "no --param (the network has no physical parameters)");
    return CLI_EXIT_USAGE;
  }
  cliOutput o;
  if (!check_network_out(&o, a)) return CLI_EXIT_INPUT;
  physModel* m = cli_load_model(a->model, a->floating);
  if (!m) return CLI_EXIT_INPUT;
  physDataset ds;
  physDataOptions dopt = {0};
  dopt.max_files = a->files > 0 ? a->files : 0;
  dopt.first_file = a->skip > 0 ? a->skip : 0;
  physLog log;
  memset(&log, 0, sizeof log);
  int code = CLI_EXIT_INPUT;
  char err[160];
  physMlp* n = NULL;
  if (phys_dataset_load(&ds, m, a->data, a->ndata, &dopt, &log) != PHYS_OK) {
    cli_error("%s", log.error);
  } else if (!(n = phys_e2e_alloc(m, 4, 256, (uint64_t)(a->seed >= 0 ? a->seed : 1), err, sizeof err))) {
    cli_error("%s", err);
  } else {
    physE2eOptions eo;
    phys_e2e_defaults(&eo);
    if (a->iters > 0) eo.epochs = a->iters;
    if (a->lr > 0) eo.lr = a->lr;
    if (a->seed >= 0) eo.seed = (uint64_t)a->seed;
    eo.verbose = !a->quiet;
    double* hist = malloc(sizeof(double) * (size_t)(eo.epochs + 1));
    if (hist && phys_e2e_train(m, n, &ds, &eo, hist, &log) == PHYS_OK) {
      printf("end-to-end (4 x 256 tanh, %d parameters): next-velocity loss %.9g -> %.9g in %d epochs\n", n->nparam,
             hist[0], hist[eo.epochs], eo.epochs);
      if (write_network(&o, n, "end-to-end")) code = CLI_EXIT_OK;
    } else {
      cli_error("identify: %s", hist ? log.error : "out of memory");
    }
    free(hist);
  }
  phys_mlp_free(n);
  phys_dataset_free(&ds);
  phys_free_model(m);
  return code;
}

int id_run_residual(idRun* r, const idArgs* a) {
  cliOutput o, om;
  if (!check_network_out(&o, a) || !cli_output_check(&om, "--write-model", a->write_model)) return CLI_EXIT_INPUT;
  if (!id_load_data(r, a)) return CLI_EXIT_INPUT;
  physModel* m = r->m;
  char err[160];
  if (!m->residual) {   // the paper's network: 2 x 128 ReLU, started near zero (else --residual FILE's)
    int size[4] = {phys_residual_nfeature(m), 128, 128, m->nv};
    m->residual = phys_mlp_alloc(3, size, PHYS_MLP_RELU, err, sizeof err);
    if (!m->residual) {
      cli_error("%s", err);
      return CLI_EXIT_INPUT;
    }
    physRng rng;
    phys_rng_seed(&rng, (uint64_t)(a->seed >= 0 ? a->seed : 1));
    phys_mlp_randomize(m->residual, &rng, 0.01);
  }
  if (!cli_residual_fits(m)) return CLI_EXIT_USAGE;
  physResTrainOptions ro;
  phys_res_train_defaults(&ro);
  if (a->iters > 0) ro.iters = a->iters;
  if (a->lr > 0) ro.lr_theta = a->lr;
  if (!isnan(a->rr[0])) ro.reg_out = a->rr[0], ro.reg_w = a->rr[1];
  ro.substeps = r->fit.substeps > 0 ? r->fit.substeps : 1;
  ro.verbose = !a->quiet;
  int nt = r->table.ntheta;
  double* theta = malloc(sizeof(double) * (size_t)(nt + 1));
  double* hist = malloc(sizeof(double) * (size_t)(ro.iters + 1));
  physLog log;
  memset(&log, 0, sizeof log);
  int ok = theta && hist;
  if (ok) memcpy(theta, r->theta0, sizeof(double) * (size_t)nt);
  physViolationWeights vw;
  phys_violation_defaults(&vw);
  if (!isnan(a->vw[0])) vw.comp = a->vw[0], vw.diss = a->vw[1], vw.pen = a->vw[2];
  int ccn = a->approach == ID_APP_CCN_R;
  double* W = NULL;   // ccn-r: --violation-metric (r->fit's, default velocity as ccn's): fixed at the model as given
  if (ok && ccn && r->fit.viol_metric) {
    physData* d = phys_make_data(m);
    W = malloc(sizeof(double) * (size_t)m->nv);
    if (d && W) phys_violation_metric(m, d, W);
    ok = d && W;
    phys_free_data(d);
    vw.metric = W;
  }
  if (ok && (ccn ? phys_res_train_violation(m, &r->table, theta, r->lower, r->upper, &r->ds, &vw, &ro, hist, &log)
                 : phys_res_train(m, &r->table, theta, r->lower, r->upper, &r->ds, &ro, hist, &log)) != PHYS_OK) {
    cli_error("identify: %s", log.error);
    ok = 0;
  }
  if (ok) {
    printf("%s (contact %s, residual %d-%d-%d-%d %s): %s loss %.9g -> %.9g in %d iterations\n",
           g_app_name[a->approach], phys_contact_name(m->opt.contact), m->residual->size[0], m->residual->size[1], m->residual->size[2],
           m->residual->size[m->residual->nlayer], phys_mlp_act_name(m->residual->act),
           !ccn ? "one-step" : W ? "violation (velocity metric)" : "violation (energy)",
           hist[0], hist[ro.iters],
           ro.iters);
    for (int i = 0; i < nt; i++) printf("  %-32s %.9g  (start %.9g)\n", r->label[i], theta[i], r->theta0[i]);
    ok = write_network(&o, m->residual, "residual");
    if (ok && om.path) {   // the model with the identified values (the network is beside it: --network-out)
      ok = cli_output_open(&om) && id_write_model(om.f, r->model_path, m, &r->table, err, sizeof err);
      if (!ok) {
        cli_error("%s", err);
        cli_output_abort(&om);
      } else {
        ok = cli_output_commit(&om);
      }
    }
  }
  free(theta);
  free(hist);
  free(W);
  return ok ? CLI_EXIT_OK : CLI_EXIT_INPUT;
}
