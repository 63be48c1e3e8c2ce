#!/usr/bin/env python3
"""examples/pbd/impedance.py - paper 003 section V-E (Figs. 12, 13): joint impedance control of Baxter's joint s1
with a net-torque map built from the differentiable simulator, against PD control, under external torques of 5 and
10 N m.

The arm: baxter_arm.py's left arm at the paper's 10 ms step with every joint but left_s1 fixed (at 0: "all other
joints were fixed during motion"), one motor on s1. Gravity is off: on the robot Baxter's internal model
compensates it and the paper leaves it out of its plots; the simulation without gravity is the exactly
compensated arm.

The net-torque map (Fig. 12): keys the angle difference to the goal dq in [-0.00625, 0.00625] rad (the largest
displacement in one step) and the angular velocity w in [-0.5, 0.5] rad/s, a grid of 11 x 11. At each key the
torque that takes s1 from (q_d - dq, w) to the goal q_d in one step, found by `physid optimize` (horizon 1, DDP,
a final qpos term only: the paper's lambda1 = 1, lambda2 = lambda3 = 0) through the step's exact derivatives;
bilinear interpolation between the keys, the keys clamped to the grid.

Controllers (Eq. 28, its Coriolis term left out as in the paper; goal q_d = -0.45 rad, qdot_d = 0):
  PD:         u = K (q_d - q) + D (qdot_d - qdot)
  impedance:  u = K (q_d - q) + D (qdot_d - qdot) + s tau_net(q_d - q, qdot)
with the paper's K = 30, D = 0.01 and scaling s = 1. External torque on s1: 5 N m from 5 s to 15 s, 10 N m from 20 s
to 30 s; 35 s from rest at the goal. Each step the controller reads the state, sets the motor's control and the
external torque (qfrc_applied), and the simulator steps (physid's Python package on libphysid.so).

usage: /usr/bin/python3 examples/pbd/impedance.py   (from the repository root, a Python with numpy, after building
the shared library: PHYSID_LIBRARY and PHYSID default to build/libphysid.so and build/physid; INTEGRATORS default
"euler,pbd"; writes examples/pbd/impedance.md and impedance.csv; about a minute)
"""
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
os.environ.setdefault("PHYSID_LIBRARY", "build/libphysid.so")
import baxter_arm  # noqa: E402
import physid  # noqa: E402

PHYSID = os.environ.get("PHYSID", "build/physid")
OUT = os.environ.get("OUT", os.path.join(HERE, "impedance.md"))
CSV = os.environ.get("CSV", os.path.join(HERE, "impedance.csv"))
DT, T_END = 0.01, 35.0
QD, K, D, SCALE = -0.45, 30.0, 0.01, 1.0
DQ_MAX, W_MAX, NGRID = 0.00625, 0.5, 11
CSV_EVERY = 5   # impedance.csv: every 5th step (0.05 s)
INTEGRATORS = os.environ.get("INTEGRATORS", "euler,pbd").split(",")
PUSHES = [(5.0, 15.0, 5.0), (20.0, 30.0, 10.0)]   # (from, to, N m)


def s1_model(integrator):
    """the arm's MJCF with s1 the only joint and motor, gravity off, physid's integrator named"""
    text = baxter_arm.arm_mjcf(timestep=DT)
    text = re.sub(r'\s*<joint name="left_(s0|e0|e1|w0|w1|w2)"[^>]*/>', "", text)
    text = re.sub(r'\s*<motor name="m_left_(s0|e0|e1|w0|w1|w2)"[^>]*/>', "", text)
    text = text.replace("</mujoco>", '  <custom><text name="physid:integrator" data="%s"/></custom>\n</mujoco>' % integrator)
    return text.replace('<option timestep="%g"/>' % DT, '<option timestep="%g" gravity="0 0 0"/>' % DT)


def net_torque(tmp, dq, w):
    """the torque taking s1 from (QD - dq, w) to QD in one step, by physid optimize"""
    task = {"model": "s1.xml", "horizon": 1, "init": {"qpos": [QD - dq], "qvel": [w]},
            "cost": {"final": [{"qpos": [QD], "weight": 1}]}, "options": {"tol": 1e-14},
            "out": {"controls": "u.csv", "result": "r.json"}}
    with open(os.path.join(tmp, "task.json"), "w") as f:
        json.dump(task, f)
    p = subprocess.run([PHYSID, "optimize", os.path.join(tmp, "task.json"), "--quiet"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("impedance.py: physid optimize failed: " + p.stderr.strip())
    with open(os.path.join(tmp, "u.csv")) as f:
        return float(f.read().split("\n")[1].split(",")[1])


def build_map(tmp):
    keys_q = [-DQ_MAX + 2 * DQ_MAX * i / (NGRID - 1) for i in range(NGRID)]
    keys_w = [-W_MAX + 2 * W_MAX * j / (NGRID - 1) for j in range(NGRID)]
    return keys_q, keys_w, [[net_torque(tmp, a, b) for b in keys_w] for a in keys_q]


def lookup(m, dq, w):
    """bilinear interpolation of the map at (dq, w), the keys clamped to the grid"""
    kq, kw, tab = m
    def cell(keys, x):
        x = min(max(x, keys[0]), keys[-1])
        i = min(int((x - keys[0]) / (keys[1] - keys[0])), len(keys) - 2)
        return i, (x - keys[i]) / (keys[1] - keys[0])
    i, a = cell(kq, dq)
    j, b = cell(kw, w)
    return ((1 - a) * (1 - b) * tab[i][j] + a * (1 - b) * tab[i + 1][j] + (1 - a) * b * tab[i][j + 1] +
            a * b * tab[i + 1][j + 1])


def external(t):
    return sum(tau for t0, t1, tau in PUSHES if t0 <= t < t1)


def run(model, tmap, impedance):
    """the closed loop: rows (t, q, qdot, u, pd part, impedance part, external torque)"""
    d = model.make_data()
    d.qpos[0], d.qvel[0] = QD, 0.0
    rows = []
    for k in range(int(round(T_END / DT))):
        t = k * DT
        q, w = d.qpos[0], d.qvel[0]
        pd = K * (QD - q) + D * (0.0 - w)
        imp = SCALE * lookup(tmap, QD - q, w) if impedance else 0.0
        rows.append((t, q, w, pd + imp, pd, imp, external(t)))
        d.qfrc_applied[0] = external(t)
        model.step(d, [pd + imp])
    return rows


def stats(rows, t0, t1):
    """during [t0, t1): largest |q - q_d|; q - q_d, the motor torque, its PD and impedance parts averaged over the
    last second; largest |u|; rms velocity over the last second"""
    seg = [r for r in rows if t0 <= r[0] < t1]
    last = [r for r in seg if r[0] >= t1 - 1.0]
    mean = [sum(r[k] for r in last) / len(last) for k in (1, 3, 4, 5)]
    return (max(abs(r[1] - QD) for r in seg), mean[0] - QD, mean[1], mean[2], mean[3], max(abs(r[3]) for r in seg),
            math.sqrt(sum(r[2] ** 2 for r in last) / len(last)))


def experiment(integrator):
    """the map and both controllers' runs on one integrator"""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "s1.xml"), "w") as f:
            f.write(s1_model(integrator))
        model = physid.load(os.path.join(tmp, "s1.xml"))
        tmap = build_map(tmp)
    return tmap, {"PD": run(model, tmap, False), "impedance": run(model, tmap, True)}


def write_table(f, integrator, tmap, runs):
    kq, kw, tab = tmap
    f.write("## Integrator `%s`\n\nNet-torque map (N m; %d x %d keys by `physid optimize`, horizon 1), corners and "
            "centre:\n\n" % (integrator, NGRID, NGRID))
    f.write("| dq (rad) \\\\ w (rad/s) | %g | 0 | %g |\n|---|---|---|---|\n" % (kw[0], kw[-1]))
    for i in (0, NGRID // 2, NGRID - 1):
        f.write("| %g | %.6g | %.6g | %.6g |\n" % (kq[i], tab[i][0], tab[i][NGRID // 2], tab[i][-1]))
    f.write("\n| controller | push (N m) | largest \\|q - q_d\\| (rad) | q - q_d, last 1 s of the push (rad) "
            "| motor torque, last 1 s (N m) | its PD part | its impedance part | largest \\|u\\| (N m) | rms "
            "velocity, last 1 s (rad/s) |\n|---|---|---|---|---|---|---|---|---|\n")
    for name, rows in runs.items():
        for t0, t1, tau in PUSHES:
            f.write("| %s | %g | %.4g | %.4g | %.4g | %.4g | %.4g | %.4g | %.3g |\n" % ((name, tau) +
                                                                                    stats(rows, t0, t1)))
    for name, rows in runs.items():
        s = stats(rows, 30.0, T_END)
        f.write("\n%s after the last push (30-35 s): largest |q - q_d| %.4g rad, rms velocity over the last 1 s "
                "%.3g rad/s." % (name, s[0], s[6]))
    f.write("\n\n")


def main():
    results = {i: experiment(i) for i in INTEGRATORS}
    with open(CSV, "w") as f:
        f.write("integrator,t,q_pd,u_pd,q_imp,u_imp,pd_part_imp,imp_part_imp,tau_ext\n")
        for integ, (tmap, runs) in results.items():
            for a, b in list(zip(runs["PD"], runs["impedance"]))[::CSV_EVERY]:
                f.write("%s,%.2f,%.9g,%.9g,%.9g,%.9g,%.9g,%.9g,%g\n" % (integ, a[0], a[1], a[3], b[1], b[3], b[4], b[5],
                                                                      a[6]))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    with open(OUT, "w") as f:
        f.write("# Paper 003, Figs. 12-13: impedance control of Baxter's joint s1 (examples/pbd/impedance.py)\n\n")
        f.write("Generated at %s. Baxter's left arm (baxter_arm.py), s1 alone free, no gravity (compensated), dt "
                "%g s; goal %g rad; K = %g, D = %g, scaling %g; external torque 5 N m over [5, 15) s and 10 N m over "
                "[20, 30) s; time series in impedance.csv.\n\n" % (commit or "?", DT, QD, K, D, SCALE))
        for integ, (tmap, runs) in results.items():
            write_table(f, integ, tmap, runs)
    print(open(OUT).read())


if __name__ == "__main__":
    main()
