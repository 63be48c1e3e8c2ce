"""bench_torch.py - issue 18 item 5: one step forward plus backward of the cube with contact and of MuJoCo's humanoid,
written directly in PyTorch with autograd (bench/torch_models.py, the route of papers 000 and 003) against physid
through its Python binding (physid.torch.Step: forward, then backward by phys_step_vjp / phys_step_param_vjp) and
through the C API (bench/bench_torch.c: phys_step, phys_step_vjp, phys_step_param_vjp).

First the check that both compute the same physics: N steps of each from the same start, the largest difference
of qpos and qvel (the torch models are written from physid's equations, so they agree to rounding unless a
contact's branch flips). Then the timing: loss = next state . a fixed random vector, backward to the state, the
controls (the humanoid's 21 motors; the cube has none) and one physical parameter (the cube's friction, the
humanoid's right_hip_y damping); medians of repeats, float64, CPU, one thread.

usage: PATH=build:$PATH PYTHONPATH=python /usr/bin/python3 bench/bench_torch.py [--repeats N] [--bench BIN]
Prints "CHECK scene steps max_dq max_dv" and "RESULT scene route median_us" lines (scripts/bench_torch.sh makes the
table). Timing is information, never a pass/fail test.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python"))
import physid  # noqa: E402
import physid.torch as pt  # noqa: E402
import torch_models as tm  # noqa: E402

T = torch.float64


def median_us(fn, repeats):
    fn()   # warm up (torch's first call allocates)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return 1e6 * float(np.median(times))


def agreement(torch_step, m, qpos, qvel, ctrl, steps):
    """Largest |qpos - qpos_torch|, |qvel - qvel_torch| over steps steps from one start."""
    a, b = tm.trajectories(m, torch_step, qpos, qvel, ctrl, steps)
    return float(np.abs(a[:, :m.nq] - b[:, :m.nq]).max()), float(np.abs(a[:, m.nq:] - b[:, m.nq:]).max())


def scenes(folder):
    """(name, physid model, torch step (q, v, u, theta), start (qpos, qvel, ctrl), param spec, theta0)."""
    cube = physid.load(tm.cube_penalty_file(ROOT, folder))
    cm = tm.CubePenalty(cube)
    q0, v0 = tm.cube_start()
    yield ("cube", cube, lambda q, v, u, th: cm.step(q, v, th), (q0, v0, np.zeros(0)), "friction:cube", cm.mu)
    hum = physid.load(tm.humanoid_air_file(folder))
    hm = tm.Tree(hum, "right_hip_y")
    q0, v0, u0 = tm.humanoid_start(hum)
    b0 = float(hum.field("dof_damping")[hm.param_dof])
    yield ("humanoid", hum, hm.step, (q0, v0, u0), "damping:right_hip_y", b0)


def fwd_bwd(step, start, theta0, seed=1):
    """One forward + backward of step at start: a closure for the timer, and its inputs (for the gradients)."""
    qpos, qvel, ctrl = start
    g = np.random.default_rng(seed)
    rq, rv = torch.tensor(g.standard_normal(len(qpos)), dtype=T), torch.tensor(g.standard_normal(len(qvel)), dtype=T)

    def run():
        q = torch.tensor(qpos, dtype=T, requires_grad=True)
        v = torch.tensor(qvel, dtype=T, requires_grad=True)
        u = torch.tensor(ctrl, dtype=T, requires_grad=len(ctrl) > 0)
        th = torch.tensor(theta0, dtype=T, requires_grad=True)
        q1, v1 = step(q, v, u, th)
        (q1 @ rq + v1 @ rv).backward()
        return q, v, u, th
    return run


def c_api(bench, model_file, start, spec, repeats, folder):
    path = os.path.join(folder, "state.txt")
    with open(path, "w") as f:
        for a in start:
            f.write(" ".join(repr(float(x)) for x in a) + "\n")
    out = subprocess.run([bench, path, "--samples", str(repeats), "--param", spec, model_file], check=True,
                         capture_output=True, text=True).stdout
    fields = dict(kv.split("=") for kv in out.strip().split("\t")[1:])
    return float(fields["step_us"]), float(fields["step_vjp_us"]), float(fields["batch_us"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--steps", type=int, default=100, help="steps of the agreement check")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench_torch"))
    a = ap.parse_args()
    torch.set_num_threads(1)
    folder = tempfile.mkdtemp()
    for name, m, tstep, start, spec, theta0 in scenes(folder):
        th0 = torch.tensor(theta0, dtype=T)
        u0 = torch.tensor(start[2], dtype=T)
        dq, dv = agreement(lambda q, v: tstep(q, v, u0, th0), m, *start, a.steps)
        print(f"CHECK\t{name}\tsteps={a.steps}\tmax_dq={dq:.3g}\tmax_dv={dv:.3g}", flush=True)
        # the gradients of both routes at the start (they should agree too)
        tq = fwd_bwd(tstep, start, theta0)()
        step = pt.Step(m, [spec])
        pq = fwd_bwd(lambda q, v, u, th: step(q, v, u if m.nu else None, th.reshape(1)), start, theta0)()
        # (physid.torch's quaternion gradient is the one in the tangent plane: torch's projected the same way)
        tm.project_quat_grad(start[0], tq[0].grad.numpy())
        gdiff = max(float((x.grad - y.grad).abs().max()) for x, y in zip(tq, pq) if x.grad is not None)
        print(f"CHECK\t{name}\tgrad_max_diff={gdiff:.3g}", flush=True)
        t_torch = median_us(fwd_bwd(tstep, start, theta0), a.repeats)
        t_bind = median_us(fwd_bwd(lambda q, v, u, th: step(q, v, u if m.nu else None, th.reshape(1)), start,
                                   theta0), a.repeats)
        with torch.no_grad():
            t_torch_fwd = median_us(lambda: tstep(torch.tensor(start[0], dtype=T), torch.tensor(start[1], dtype=T),
                                                  u0, th0), a.repeats)
        model_file = os.path.join(folder, "cube_penalty.xml" if name == "cube" else "humanoid_air.xml")
        c_step, c_fb, c_batch = c_api(a.bench, model_file, start, spec, max(a.repeats, 1000), folder)
        print(f"RESULT\t{name}\ttorch_fwd_bwd\t{t_torch:.1f}", flush=True)
        print(f"RESULT\t{name}\ttorch_fwd\t{t_torch_fwd:.1f}", flush=True)
        print(f"RESULT\t{name}\tbinding_fwd_bwd\t{t_bind:.1f}", flush=True)
        print(f"RESULT\t{name}\tc_step\t{c_step:.3f}", flush=True)
        # (step_vjp_us holds the forward step too: one forward plus backward)
        print(f"RESULT\t{name}\tc_fwd_bwd\t{c_fb:.3f}", flush=True)
        print(f"RESULT\t{name}\tc_batch_fwd_bwd\t{c_batch:.3f}", flush=True)


if __name__ == "__main__":
    main()
