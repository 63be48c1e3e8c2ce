// test_identify_approach.c - `physid identify --approach NAME` (tools/identify_approach.c), run as a user would
// (env PHYS_BIN), on a cube sliding on the floor (lcp) simulated by physid at friction 0.3, the model file at 0.18:
//   - ccn and diffsim are identify's fits with the options they stand for (the summary line: loss violation;
//     loss onestep, contact ccp, optimizer adam);
//   - diffsim-r trains friction and a 2 x 128 ReLU residual network: exit 0, the printed loss falls, friction
//     within 0.02 of 0.3 after 40 iterations; --network-out is a network file that `evaluate --residual` reads
//     (exit 0) and --write-model the model with the identified friction;
//   - end-to-end trains the 4 x 256 tanh network: the printed loss falls by 10x or more in 20 epochs; `evaluate
//     --end-to-end` rolls it out (exit 0, position and rotation rows) and refuses a residual network (exit 1);
//   - ccn-r trains friction and the network on the violation loss (exit 0, the loss falls), with the velocity
//     metric by default (--violation-metric energy: the same first loss on this uniform cube, W = M~); with mass
//     it is refused (exit 1: the network's force has no mass derivative in that loss);
//   - --residual-reg OUT,W: with a network whose output is the constant (0, 0, c, 0, 0, 0) (every weight 0 but
//     that bias), the loss before the first iteration is the data loss + OUT c^2 + W c^2, for diffsim-r and
//     ccn-r (the printed initial losses at 2,0 and 0,3 minus the one at 0,0: 2c^2 and 3c^2 to the printed
//     digits); refused with ccn or a malformed value; the job key residual_reg ("OUT,W" or [OUT, W]) gives the
//     option's initial loss bit for bit, the option overrides it, and a bad one (other approach, malformed) is a
//     bad job: exit 1 naming the file and the key, no network written;
//   - --network-out without a network approach, --loss given with an approach that fixes it (twice), --param
//     with end-to-end, --report with diffsim-r (the networks' runs write no result or report): exit 2, nothing
//     written.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sh_run.h"
#include "test.h"

// the two numbers of "loss A -> B" in text (0 if absent)
static int loss_pair(const char* text, double* a, double* b) {
  const char* p = strstr(text, "loss ");
  return p && sscanf(p, "loss %lf -> %lf", a, b) == 2;
}

int main(void) {
  g_bin = getenv("PHYS_BIN");
  CHECK_MSG(g_bin != NULL && access(g_bin, X_OK) == 0, "PHYS_BIN not set or not executable");
  if (!g_bin) return test_done();
  snprintf(g_dir, sizeof g_dir, "/tmp/test_identify_approach_XXXXXX");
  if (!mkdtemp(g_dir)) return 1;
  char args[2048], data[256], truth[256], net[256], e2e[256], fit[256];
  const char* model = "models/cube.xml";
  shRun r;
  // the data: friction 0.3 (the model file's 0.18 replaced), sliding at (1, 0.3) m/s, 30 steps
  char* text = slurp(model);
  char* f = strstr(text, "friction=\"0.18 0 0\"");
  CHECK(f != NULL);
  if (f) memcpy(f, "friction=\"0.30 0 0\"", 19);
  snprintf(truth, sizeof truth, "%s", put("truth.xml", text));
  free(text);
  const char* init = put("init.csv", "t,q0,q1,q2,q3,q4,q5,q6,v0,v1,v2,v3,v4,v5\n0,0,0,0.0523,1,0,0,0,1,0.3,0,0,0,0\n");
  snprintf(data, sizeof data, "%s", path("toss.csv"));
  snprintf(args, sizeof args, "simulate '%s' --init '%s' --steps 30 --out '%s' --quiet", truth, init, data);
  r = run(args);
  CHECK(r.code == 0);
  run_free(&r);

  // ccn, diffsim: identify's own fits
  snprintf(args, sizeof args, "identify %s '%s' --approach ccn --param friction:cube --iters 2", model, data);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.err, "loss violation"), "ccn: %d %s", r.code, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "identify %s '%s' --approach diffsim --param friction:cube --iters 2", model, data);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.err, "loss onestep, contact ccp") && strstr(r.err, "fit adam"), "diffsim: %s", r.err);
  run_free(&r);

  // diffsim-r
  snprintf(net, sizeof net, "%s", path("net.json"));
  snprintf(fit, sizeof fit, "%s", path("fit.xml"));
  snprintf(args, sizeof args, "identify %s '%s' --approach diffsim-r --param friction:cube --contact lcp --iters 40 "
           "--network-out '%s' --write-model '%s' --quiet", model, data, net, fit);
  r = run(args);
  double a = 0, b = 0, mu = 0;
  const char* line = strstr(r.out, "friction:cube");
  CHECK_MSG(r.code == 0 && loss_pair(r.out, &a, &b) && b < a && line && sscanf(line, "friction:cube %lf", &mu) == 1 &&
                fabs(mu - 0.3) < 0.02, "diffsim-r: %d loss %g -> %g friction %g\n%s%s", r.code, a, b, mu, r.out, r.err);
  run_free(&r);
  char* written = slurp(fit);
  CHECK(strstr(written, "friction=\"0.3") != NULL);
  free(written);
  snprintf(args, sizeof args, "evaluate '%s' '%s' --residual '%s' --contact lcp", fit, data, net);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.out, "position_m"), "evaluate --residual: %s", r.err);
  run_free(&r);

  // ccn-r: the violation loss with the network (friction with it: the lcp data's pyramid is wider than the
  // loss's cone, so friction is not compared here; tests/sysid/test_resnet.c does on cone data)
  snprintf(args, sizeof args, "identify %s '%s' --approach ccn-r --param friction:cube --iters 20 --network-out '%s' "
           "--quiet", model, data, path("ccnr.json"));
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.out, "ccn-r (contact") && strstr(r.out, "violation (velocity metric) loss") &&
            loss_pair(r.out, &a, &b) && b < a, "ccn-r: %d %s%s", r.code, r.out, r.err);
  run_free(&r);
  // --violation-metric energy: paper 004's form; for this uniform cube the velocity metric's W is M~ itself, so
  // the first loss is the same (to the printed digits)
  snprintf(args, sizeof args, "identify %s '%s' --approach ccn-r --param friction:cube --iters 1 --violation-metric "
           "energy --quiet", model, data);
  r = run(args);
  double ae = 0;
  CHECK_MSG(r.code == 0 && strstr(r.out, "violation (energy) loss") && loss_pair(r.out, &ae, &b) && ae == a,
            "ccn-r energy: %d %g (velocity %g) %s%s", r.code, ae, a, r.out, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "identify %s '%s' --approach ccn-r --param mass:cube --iters 2", model, data);
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "only friction and size"), "ccn-r mass: %d %s", r.code, r.err);
  run_free(&r);

  // --residual-reg: the regularization's weights, exactly, at a constant-output network
  const double c = 0.5;
  char cnet[4096];
  snprintf(cnet, sizeof cnet, "{\"format\": \"physid-mlp\", \"version\": 1, \"role\": \"residual\", \"input\": "
           "\"state-rotmat\", \"activation\": \"relu\", \"sizes\": [18, 1, 1, 6], \"layers\": ["
           "{\"W\": [[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]], \"b\": [0]}, {\"W\": [[0]], \"b\": [0]}, "
           "{\"W\": [[0],[0],[0],[0],[0],[0]], \"b\": [0,0,%g,0,0,0]}]}", c);
  char cpath[256];   // (put's path is one of path's rotating buffers)
  snprintf(cpath, sizeof cpath, "%s", put("const.json", cnet));
  const char* regs[3] = {"0,0", "2,0", "0,3"};
  for (int ap = 0; ap < 2; ap++) {
    double l0[3] = {0, 0, 0};
    for (int i = 0; i < 3; i++) {
      snprintf(args, sizeof args, "identify %s '%s' --residual '%s' --approach %s --param friction:cube --iters 1 "
               "--residual-reg %s --quiet", model, data, cpath, ap ? "ccn-r" : "diffsim-r", regs[i]);
      r = run(args);
      CHECK_MSG(r.code == 0 && loss_pair(r.out, l0 + i, &b), "--residual-reg %s: %d %s", regs[i], r.code, r.err);
      run_free(&r);
    }
    CHECK_NEAR(l0[1] - l0[0], 2 * c * c, 1e-8);
    CHECK_NEAR(l0[2] - l0[0], 3 * c * c, 1e-8);
    // the job key residual_reg: "OUT,W" gives the option's loss, [OUT, W] too, and the option overrides the job
    const char* jobs[3][2] = {{"{\"residual_reg\": \"2,0\"}", ""}, {"{\"residual_reg\": [0, 3]}", ""},
                              {"{\"residual_reg\": [0, 3]}", "--residual-reg 2,0"}};
    const int same[3] = {1, 2, 1};
    for (int i = 0; i < 3; i++) {
      snprintf(args, sizeof args, "identify %s '%s' --residual '%s' --approach %s --param friction:cube --iters 1 "
               "--job '%s' %s --quiet", model, data, cpath, ap ? "ccn-r" : "diffsim-r", put("reg.json", jobs[i][0]),
               jobs[i][1]);
      r = run(args);
      double lj = -1;
      CHECK_MSG(r.code == 0 && loss_pair(r.out, &lj, &b) && lj == l0[same[i]], "job %s %s: %d loss %.17g, option's "
                "%.17g %s", jobs[i][0], jobs[i][1], r.code, lj, l0[same[i]], r.err);
      run_free(&r);
    }
    // the job keys approach and network_out (approach after residual_reg in the file: read first): the option's
    // loss bit for bit and the network written
    char ajob[512], anet[256];
    snprintf(anet, sizeof anet, "%s", path("jobnet.json"));
    snprintf(ajob, sizeof ajob, "{\"residual_reg\": [0, 3], \"approach\": \"%s\", \"network_out\": \"%s\"}",
             ap ? "ccn-r" : "diffsim-r", anet);
    snprintf(args, sizeof args, "identify %s '%s' --residual '%s' --param friction:cube --iters 1 --job '%s' --quiet",
             model, data, cpath, put("appr.json", ajob));
    r = run(args);
    double lj = -1;
    CHECK_MSG(r.code == 0 && loss_pair(r.out, &lj, &b) && lj == l0[2] && access(anet, F_OK) == 0, "job %s: %d loss "
              "%.17g, option's %.17g %s", ajob, r.code, lj, l0[2], r.err);
    run_free(&r);
    remove(anet);
  }

  // end-to-end
  snprintf(e2e, sizeof e2e, "%s", path("e2e.json"));
  snprintf(args, sizeof args, "identify %s '%s' --approach end-to-end --iters 20 --network-out '%s' --quiet", model,
           data, e2e);
  r = run(args);
  CHECK_MSG(r.code == 0 && loss_pair(r.out, &a, &b) && b < a / 10, "end-to-end: %d %g -> %g %s", r.code, a, b, r.err);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate %s '%s' --end-to-end '%s'", model, data, e2e);
  r = run(args);
  CHECK_MSG(r.code == 0 && strstr(r.out, "position_m") && strstr(r.out, "rotation_deg"), "evaluate --end-to-end: %s",
            r.err);
  run_free(&r);
  snprintf(args, sizeof args, "evaluate %s '%s' --end-to-end '%s'", model, data, net);
  r = run(args);
  CHECK(r.code == 1 && strstr(r.err, "expected \"end-to-end\""));
  run_free(&r);

  // refused
  const char* refusals[][2] = {
      {"--approach diffsim-r --loss violation --param friction:cube", "--loss is not for it"},
      {"--network-out x.json --param friction:cube", "--network-out: only with"},
      {"--approach ccn --loss onestep --param friction:cube", "--loss is not for it"},
      {"--approach end-to-end --param friction:cube", "no --param"},
      {"--approach diffsim-r --param friction:cube --report r.html", "--report: not with --approach diffsim-r"},
      {"--approach ccn --param friction:cube --residual-reg 1,1", "--residual-reg: only with"},
      {"--approach ccn-r --param friction:cube --residual-reg 1", "expected out,w (two numbers"},
      {"--approach diffsim-r --param friction:cube --residual-reg 1,-1", "expected out,w (two numbers"},
  };
  for (int i = 0; i < 8; i++) {
    snprintf(args, sizeof args, "identify %s '%s' %s", model, data, refusals[i][0]);
    r = run(args);
    CHECK_MSG(r.code == 2 && strstr(r.err, refusals[i][1]), "%s: %d %s", refusals[i][0], r.code, r.err);
    run_free(&r);
  }
  CHECK(access("x.json", F_OK) != 0);
  // the job key refused as the option is, as a bad job (exit 1) naming the file and the key
  const char* badjobs[][3] = {
      {"ccn", "{\"residual_reg\": [1, 1]}", "key 'residual_reg': only with --approach ccn-r or diffsim-r"},
      {"ccn-r", "{\"residual_reg\": \"1\"}", "key 'residual_reg': expected \"OUT,W\" or [OUT, W]"},
      {"diffsim-r", "{\"residual_reg\": [1, -1]}", "key 'residual_reg': expected \"OUT,W\" or [OUT, W]"},
      {"ccn-r", "{\"residual_reg\": [1, 2, 3]}", "key 'residual_reg': expected \"OUT,W\" or [OUT, W]"},
      {"diffsim-r", "{\"residual_reg\": 1}", "key 'residual_reg': expected \"OUT,W\" or [OUT, W]"},
  };
  // the job keys approach and network_out: a bad value or a network without a network approach is a bad job (exit
  // 1, naming the file and the key); the command line's --approach overrides the job's (ccn: no network, exit 1)
  const char* badappr[][3] = {
      {"{\"approach\": \"ccnx\"}", "1", "key 'approach': expected one of ccn|ccn-r|diffsim|diffsim-r|end-to-end"},
      {"{\"approach\": \"ccn-r\", \"network_out\": 3}", "1", "key 'network_out': expected a string"},
      {"{\"approach\": \"ccn\", \"network_out\": \"x.json\"}", "1", "key 'network_out': --approach ccn trains no network"},
      {"{\"network_out\": \"x.json\"}", "1", "key 'network_out': only with --approach ccn-r, diffsim-r or end-to-end"},
  };
  for (int i = 0; i < 4; i++) {
    char job[256];
    snprintf(job, sizeof job, "%s", put("badappr.json", badappr[i][0]));
    snprintf(args, sizeof args, "identify %s '%s' --param friction:cube --iters 1 --job '%s'", model, data, job);
    r = run(args);
    CHECK_MSG(r.code == atoi(badappr[i][1]) && strstr(r.err, badappr[i][2]) && strstr(r.err, job),
              "%s: %d %s", badappr[i][0], r.code, r.err);
    run_free(&r);
  }
  snprintf(args, sizeof args, "identify %s '%s' --param friction:cube --iters 1 --approach ccn --job '%s'", model, data,
           put("badappr.json", "{\"approach\": \"ccn-r\", \"network_out\": \"x.json\"}"));
  r = run(args);
  CHECK_MSG(r.code == 1 && strstr(r.err, "key 'network_out': --approach ccn trains no network"), "%d %s", r.code, r.err);
  run_free(&r);
  CHECK(access("x.json", F_OK) != 0);
  for (int i = 0; i < 5; i++) {
    char job[256];
    snprintf(job, sizeof job, "%s", put("badreg.json", badjobs[i][1]));
    snprintf(args, sizeof args, "identify %s '%s' --approach %s --param friction:cube --iters 1 --job '%s'%s%s%s",
             model, data, badjobs[i][0], job, i ? " --network-out '" : "", i ? path("nonet.json") : "", i ? "'" : "");
    r = run(args);
    CHECK_MSG(r.code == 1 && strstr(r.err, job) && strstr(r.err, badjobs[i][2]), "%s: %d %s", badjobs[i][1], r.code,
              r.err);
    run_free(&r);
    CHECK(access(path("nonet.json"), F_OK) != 0);
  }
  remove_scratch();
  return test_done();
}
