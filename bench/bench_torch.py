"""bench_torch.py - issue 18 item 5: one step forward plus backward of the cube with contact and of MuJoCo's humanoid,
written directly in PyTorch with autograd (bench/torch_models.py, the route of papers 000 and 003) against physid
through its Python binding (physid.torch.Step: forward, then backward by phys_step_vjp / phys_step_param_vjp) and
through the C API (bench/bench_torch.c: phys_step, phys_step_vjp, phys_step_param_vjp).

First the check that both compute the same physics: N steps of each from the same start, the largest difference
of qpos and qvel (the torch models are written from physid's equations, so they agree to rounding unless a
contact's branch flips). Then the timing: loss = next state . a fixed random vector, backward to the state, the
controls (the humanoid's 21 motors; the cube has none) and one physical parameter (the cube's friction, the
humanoid's right_hip_y damping); float64, CPU, torch.set_num_threads(1) for every route.

Every time is this process's CPU time (time.process_time_ns; bench_torch.c the same clock), not wall time: on a
machine shared by other jobs the time spent waiting for a core is not counted (with wall time, a 12 ms torch
call is preempted during its run and the binding calls right after it pay the scheduler's catch-up: 16-20 ms
stalls that a median of a block does not remove). The ratio torch / binding is measured side by side in this one process: repetitions interleaved (one torch
call, then `inner` binding calls, the order swapped every repetition), each repetition's ratio from the two
timings next to each other, so a load that comes and goes moves both; reported as the median and the quartiles
and extremes of the per-repetition ratios. The leaves (state, controls, parameter) are made once per route and
their gradients cleared before every call, as an optimizer's loop does. "floor" is the same loss and backward
around a trivial differentiable step (q * theta, v): torch's own fixed cost per call, which no binding avoids.

usage: PATH=build:$PATH PYTHONPATH=python /usr/bin/python3 bench/bench_torch.py [--repeats N] [--bench BIN]
       [--rollout-steps 20,100,500] [--before OTHER_CHECKOUT/python]
Prints "CHECK scene steps max_dq max_dv" and "RESULT scene route median_us" lines (scripts/bench_torch.sh makes the
table). Timing is information, never a pass/fail test.
"""
import argparse
import importlib.util
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
        t0 = time.process_time_ns()
        fn()
        times.append(time.process_time_ns() - t0)
    return 1e-3 * float(np.median(times))


def paired(slow, fast, repeats, inner):
    """Interleaved timing of two routes: per repetition one call of slow and the mean of `inner` calls of fast,
    back to back (which goes first alternates). Returns (slow times, fast times, slow / fast), seconds, arrays."""
    slow(), fast()
    ts, tf = np.empty(repeats), np.empty(repeats)
    for r in range(repeats):
        for which in ((0, 1) if r % 2 == 0 else (1, 0)):
            t0 = time.process_time_ns()
            if which == 0:
                slow()
            else:
                for _ in range(inner):
                    fast()
            dt = 1e-9 * (time.process_time_ns() - t0)
            if which == 0:
                ts[r] = dt
            else:
                tf[r] = dt / inner
    return ts, tf, ts / tf


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
    """One forward + backward of step at start: a closure for the timer (the leaves made once, their gradients
    cleared on every call), and its inputs (for the gradients)."""
    qpos, qvel, ctrl = start
    g = np.random.default_rng(seed)
    rq, rv = torch.tensor(g.standard_normal(len(qpos)), dtype=T), torch.tensor(g.standard_normal(len(qvel)), dtype=T)
    q = torch.tensor(qpos, dtype=T, requires_grad=True)
    v = torch.tensor(qvel, dtype=T, requires_grad=True)
    u = torch.tensor(ctrl, dtype=T, requires_grad=len(ctrl) > 0)
    th = torch.tensor([theta0], dtype=T, requires_grad=True)
    leaves = (q, v, u, th)

    def run():
        for x in leaves:
            x.grad = None
        q1, v1 = step(q, v, u, th)
        (q1 @ rq + v1 @ rv).backward()
        return leaves
    return run


def rollout_fwd_bwd(rollout, start, theta0, T_steps, seed=2):
    """T_steps steps from start as one differentiable rollout (a function (q, v, th) -> (qs, vs), the states
    x_1 .. x_T), loss = sum of the states . fixed random vectors, backward to the start and the parameter."""
    qpos, qvel, _ = start
    g = np.random.default_rng(seed)
    rq = torch.tensor(g.standard_normal((T_steps, len(qpos))), dtype=T)
    rv = torch.tensor(g.standard_normal((T_steps, len(qvel))), dtype=T)
    q = torch.tensor(qpos, dtype=T, requires_grad=True)
    v = torch.tensor(qvel, dtype=T, requires_grad=True)
    th = torch.tensor([theta0], dtype=T, requires_grad=True)

    def run():
        for x in (q, v, th):
            x.grad = None
        qs, vs = rollout(q, v, th)
        ((qs * rq).sum() + (vs * rv).sum()).backward()
        return q, v, th
    return run


def torch_rollout(tstep, T_steps):
    """T_steps torch steps chained by autograd: (q, v, th) -> (qs, vs) (T_steps, n)."""
    def roll(q, v, th):
        qs, vs = [], []
        for _ in range(T_steps):
            q, v = tstep(q, v, None, th[0])
            qs.append(q)
            vs.append(v)
        return torch.stack(qs), torch.stack(vs)
    return roll


def other_binding(pydir):
    """The physid package (and its physid.torch) of another checkout's python/ folder, loaded beside this one as
    the module physid_before (both over the same libphysid.so): for a before/after timing of the binding."""
    spec = importlib.util.spec_from_file_location("physid_before", os.path.join(pydir, "physid", "__init__.py"),
                                                  submodule_search_locations=[os.path.join(pydir, "physid")])
    pkg = importlib.util.module_from_spec(spec)
    sys.modules["physid_before"] = pkg
    spec.loader.exec_module(pkg)
    return pkg, importlib.import_module("physid_before.torch")


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
    ap.add_argument("--rollout-steps", default="20,100,500",
                    help="horizons of the cube's rollout timing, comma-separated (0: none)")
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bench_torch"))
    ap.add_argument("--before", metavar="PYDIR", help="another checkout's python/ folder: its binding timed against "
                    "this one, interleaved call by call (BEFORE lines: the two medians and before / now)")
    a = ap.parse_args()
    a.rollout_steps = [n for n in (int(x) for x in a.rollout_steps.split(",")) if n > 0]
    torch.set_num_threads(1)
    folder = tempfile.mkdtemp()
    for name, m, tstep, start, spec, theta0 in scenes(folder):
        th0 = torch.tensor(theta0, dtype=T)
        u0 = torch.tensor(start[2], dtype=T)
        dq, dv = agreement(lambda q, v: tstep(q, v, u0, th0), m, *start, a.steps)
        print(f"CHECK\t{name}\tsteps={a.steps}\tmax_dq={dq:.3g}\tmax_dv={dv:.3g}", flush=True)
        # the gradients of both routes at the start (they should agree too)
        torch_route = fwd_bwd(lambda q, v, u, th: tstep(q, v, u, th[0]), start, theta0)
        step = pt.Step(m, [spec])
        bind_route = fwd_bwd(lambda q, v, u, th: step(q, v, u if m.nu else None, th), start, theta0)
        tq, pq = [x.grad.clone() if x.grad is not None else None for x in torch_route()], bind_route()
        # (physid.torch's quaternion gradient is the one in the tangent plane: torch's projected the same way)
        tm.project_quat_grad(start[0], tq[0].numpy())
        gdiff = max(float((x - y.grad).abs().max()) for x, y in zip(tq, pq) if x is not None)
        print(f"CHECK\t{name}\tgrad_max_diff={gdiff:.3g}", flush=True)
        if a.before:   # the other binding and this one, call by call, alternating (inner 1: equal costs)
            other, other_torch = other_binding(a.before)
            ostep = other_torch.Step(other.load(tm.cube_penalty_file(ROOT, folder) if name == "cube" else
                                                tm.humanoid_air_file(folder)), [spec])
            before_route = fwd_bwd(lambda q, v, u, th: ostep(q, v, u if m.nu else None, th), start, theta0)
            tb, tn, rb = paired(before_route, bind_route, 20 * a.repeats, 1)
            print(f"BEFORE\t{name}\tbefore_us={1e6 * np.median(tb):.1f}\tnow_us={1e6 * np.median(tn):.1f}"
                  f"\tratio={np.median(rb):.3f}\tq25={np.percentile(rb, 25):.3f}\tq75={np.percentile(rb, 75):.3f}",
                  flush=True)
        floor = fwd_bwd(lambda q, v, u, th: (q * th, v * 1.0), start, theta0)
        inner = 20 if name == "cube" else 200   # binding calls per torch call: about the same wall time
        t_torch, t_bind, ratio = paired(torch_route, bind_route, a.repeats, inner)
        t_floor = median_us(floor, a.repeats * inner)
        with torch.no_grad():
            t_torch_fwd = median_us(lambda: tstep(torch.tensor(start[0], dtype=T), torch.tensor(start[1], dtype=T),
                                                  u0, th0), a.repeats)
        model_file = os.path.join(folder, "cube_penalty.xml" if name == "cube" else "humanoid_air.xml")
        c_step, c_fb, c_batch = c_api(a.bench, model_file, start, spec, max(a.repeats, 1000), folder)
        print(f"RESULT\t{name}\ttorch_fwd_bwd\t{1e6 * np.median(t_torch):.1f}", flush=True)
        print(f"RESULT\t{name}\ttorch_fwd\t{t_torch_fwd:.1f}", flush=True)
        print(f"RESULT\t{name}\tbinding_fwd_bwd\t{1e6 * np.median(t_bind):.1f}", flush=True)
        print(f"RESULT\t{name}\tfloor_fwd_bwd\t{t_floor:.1f}", flush=True)
        q = np.percentile(ratio, [0, 25, 50, 75, 100])
        print(f"RATIO\t{name}\tmin={q[0]:.1f}\tq25={q[1]:.1f}\tmedian={q[2]:.1f}\tq75={q[3]:.1f}\tmax={q[4]:.1f}",
              flush=True)
        for n in (a.rollout_steps if name == "cube" else []):   # a rollout as one autograd node: per step
            U = torch.zeros(n, 0, dtype=T)
            r_torch = rollout_fwd_bwd(torch_rollout(tstep, n), start, theta0, n)
            r_bind = rollout_fwd_bwd(lambda q, v, th: tuple(x[1:] for x in step.rollout_fn(q, v, U, th)), start,
                                     theta0, n)
            gd = max(float((x.grad - y.grad).abs().max()) for x, y in zip(
                [x for x in r_torch()][1:], [y for y in r_bind()][1:]))   # qvel and theta (not the quaternion)
            print(f"CHECK\t{name}\trollout{n}_grad_max_diff={gd:.3g}", flush=True)
            # the same number of repetitions at every horizon (a torch rollout of 500 steps takes seconds)
            rt, rb, rr = paired(r_torch, r_bind, max(a.repeats // 10, 5), 2)
            print(f"RESULT\t{name}\trollout{n}_torch_per_step\t{1e6 * np.median(rt) / n:.1f}", flush=True)
            print(f"RESULT\t{name}\trollout{n}_binding_per_step\t{1e6 * np.median(rb) / n:.1f}", flush=True)
            q = np.percentile(rr, [0, 25, 50, 75, 100])
            print(f"RRATIO\t{name}\tsteps={n}\tmin={q[0]:.1f}\tq25={q[1]:.1f}\tmedian={q[2]:.1f}\tq75={q[3]:.1f}"
                  f"\tmax={q[4]:.1f}", flush=True)
        print(f"RESULT\t{name}\tc_step\t{c_step:.3f}", flush=True)
        # (step_vjp_us holds the forward step too: one forward plus backward)
        print(f"RESULT\t{name}\tc_fwd_bwd\t{c_fb:.3f}", flush=True)
        print(f"RESULT\t{name}\tc_batch_fwd_bwd\t{c_batch:.3f}", flush=True)


if __name__ == "__main__":
    main()
