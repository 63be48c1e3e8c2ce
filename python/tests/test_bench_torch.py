"""The PyTorch reference models of bench/bench_torch.py (bench/torch_models.py) compute physid's physics: a few
steps of each agree with physid's step, and autograd's gradients through them agree with physid.torch's (the
analytic VJPs), so the benchmark compares two implementations of one function (issue 18 item 5)."""
import os
import sys

import numpy as np
import pytest
import torch

import physid
import physid.torch as pt
from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "bench"))
import torch_models as tm  # noqa: E402

T = torch.float64


def _grads(step, q, v, u, theta, rq, rv):
    """Gradients of (q+ . rq + v+ . rv) to q, v, u, theta through step."""
    xs = [torch.tensor(x, dtype=T, requires_grad=True) for x in (q, v, u, [theta])]
    q1, v1 = step(xs[0], xs[1], xs[2], xs[3])
    (q1 @ torch.tensor(rq, dtype=T) + v1 @ torch.tensor(rv, dtype=T)).backward()
    return [x.grad.numpy() if x.grad is not None else np.zeros(0) for x in xs]


def test_cube_penalty_agrees_with_physid(tmp_path):
    m = physid.load(tm.cube_penalty_file(ROOT, str(tmp_path)))
    cm = tm.CubePenalty(m)
    q, v = tm.cube_start()
    a, b = tm.trajectories(m, lambda x, y: cm.step(x, y, torch.tensor(cm.mu, dtype=T)), q, v, None, 40)
    # the toss is in contact (the check would pass trivially in free flight): the cube stays below its resting height
    assert a[:, 2].min() < 0.0524 - 1e-4
    assert np.abs(a - b).max() < 1e-10, np.abs(a - b).max()
    # a wrong friction is seen (the test can fail): mu 10 % off moves the sliding cube by more than the tolerance
    _, c = tm.trajectories(m, lambda x, y: cm.step(x, y, torch.tensor(1.1 * cm.mu, dtype=T)), q, v, None, 40)
    assert np.abs(a - c).max() > 1e-6


def test_cube_penalty_gradients_match_physid_vjp(tmp_path):
    m = physid.load(tm.cube_penalty_file(ROOT, str(tmp_path)))
    cm = tm.CubePenalty(m)
    q, v = tm.cube_start()
    rng = np.random.default_rng(3)
    rq, rv = rng.standard_normal(7), rng.standard_normal(6)
    step = pt.Step(m, ["friction:cube"])
    g_t = _grads(lambda x, y, u, th: cm.step(x, y, th[0]), q, v, [], cm.mu, rq, rv)
    g_p = _grads(lambda x, y, u, th: step(x, y, None, th), q, v, [], cm.mu, rq, rv)
    # physid's quaternion gradient is the one in the tangent plane (orthogonal to q): project torch's the same way
    tm.project_quat_grad(q, g_t[0])
    for x, y in zip(g_t, g_p):
        assert np.allclose(x, y, rtol=1e-7, atol=1e-8), (x, y)


def test_humanoid_agrees_with_physid(tmp_path):
    m = physid.load(tm.humanoid_air_file(str(tmp_path)))
    hm = tm.Tree(m, "right_hip_y")
    q, v, u = tm.humanoid_start(m)
    b0 = torch.tensor(float(m.field("dof_damping")[hm.param_dof]), dtype=T)
    a, b = tm.trajectories(m, lambda x, y: hm.step(x, y, torch.tensor(u, dtype=T), b0), q, v, u, 10)
    assert np.abs(a - b).max() < 1e-9, np.abs(a - b).max()
    # the check can fail: the parameter 10 % off moves the trajectory by more than the tolerance (and a free
    # joint's bias with its rotation axes accumulated one by one, a bug this file's first version had, was
    # 5.9e-4 off in qvel after one step)
    _, c = tm.trajectories(m, lambda x, y: hm.step(x, y, torch.tensor(u, dtype=T), 1.1 * b0), q, v, u, 10)
    assert np.abs(a - c).max() > 1e-6


def test_humanoid_gradients_match_physid_vjp(tmp_path):
    m = physid.load(tm.humanoid_air_file(str(tmp_path)))
    hm = tm.Tree(m, "right_hip_y")
    q, v, u = tm.humanoid_start(m)
    b0 = torch.tensor(float(m.field("dof_damping")[hm.param_dof]), dtype=T)
    rq, rv = np.zeros(m.nq), np.zeros(m.nv)
    step = pt.Step(m, ["damping:right_hip_y"])
    rng = np.random.default_rng(5)
    rq[:], rv[:] = rng.standard_normal(m.nq), rng.standard_normal(m.nv)
    g_t = _grads(lambda x, y, uu, th: hm.step(x, y, uu, th[0]), q, v, u, float(b0), rq, rv)
    g_p = _grads(lambda x, y, uu, th: step(x, y, uu, th), q, v, u, float(b0), rq, rv)
    tm.project_quat_grad(q, g_t[0])
    for x, y in zip(g_t, g_p):
        assert np.allclose(x, y, rtol=1e-7, atol=1e-8), np.abs(x - y).max()


def test_zeta_matches_restitution():
    # the damping ratio's inverse: eps(zeta(eps)) = eps, and the clamp at zeta 5 below eps(5)
    for eps in (0.125, 0.5, 0.9):
        assert tm.restitution_of_zeta(tm.zeta_of_restitution(eps)) == pytest.approx(eps, rel=1e-12)
    assert tm.zeta_of_restitution(0.0) == 5.0 and tm.zeta_of_restitution(1.0) == 0.0
