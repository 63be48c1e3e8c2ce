#!/usr/bin/env python3
"""examples/pbd/profile_design.py - the instructions of the pbd design gradient (design_grad.py's task on the pbd
step, 5 steps, one L-BFGS-B iteration from the paper's initial design: two rollout gradients) under callgrind:
the program's total and the pbd step's VJP (pbd_jacobian, inclusive). Session 32: 423.0M / 381.5M before the
held components were skipped (the f583fa1 binary), 314.0M / 272.5M after (10 complex-step columns a VJP instead
of 14: 2nv = 8 state columns, and pos:elbow.x, pos:tip.x of the 6 design components).

usage: examples/pbd/profile_design.py [PHYSID]   (from the repository root; valgrind and callgrind_annotate)
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
PHYSID = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/physid")
os.environ["INTEGRATOR"] = "pbd"
sys.argv = sys.argv[:1]
import design_grad  # noqa: E402

with tempfile.TemporaryDirectory() as tmp:
    design_grad.write_model(tmp, *design_grad.L0)
    task = dict(model="design_grad.xml", horizon=5, method="lbfgsb", init=design_grad.INIT,
                design=[{"param": "pos:elbow", "lower": [1.0, 0, 0], "upper": [4.0, 0, 0]},
                        {"param": "pos:tip", "lower": [0.02, 0, 0], "upper": [1.5, 0, 0]}],
                cost={"running": [{"site": "ee", "ref_body": "target", "pos": [0, 0, 0], "weight": 1}]},
                options={"maxiter": 1, "tol": 1e-12}, out={"result": "r.json"})
    with open(os.path.join(tmp, "task.json"), "w") as f:
        json.dump(task, f)
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out, PHYSID, "optimize", "task.json",
                    "--quiet"], cwd=tmp, check=True, capture_output=True)
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", out], capture_output=True, text=True).stdout
    total = re.search(r"([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS", text).group(1)
    vjp = re.search(r"^\s*([\d,]+) \([\d.]+%\)\s+\S*pbd_deriv\.c:pbd_jacobian ", text, re.M).group(1)
    print("instructions: program %s, pbd_jacobian (the VJPs) %s" % (total, vjp))
