"""Actuator activations from Python: Data.act as a view, rollout(act=True), set_state with act, and the act blocks
of the step Jacobians (a first-order filter, tests/data/actuator_filter.xml: act' = (u - act) / tau)."""
import numpy as np

import physid
from conftest import path

TAU = 0.05   # the filter's dynprm in actuator_filter.xml


def _model():
    m = physid.load(path("tests", "data", "actuator_filter.xml"))
    assert (m.na, m.nx) == (1, 3)
    return m, m.make_data()


def test_rollout_with_act_follows_the_filter():
    m, d = _model()
    dt = m.timestep
    U = np.array([[0.5], [0.5], [-2.0], [0.3], [0.0]])   # -2 is clamped to the ctrlrange -1
    xs = m.rollout(d, ctrl=U, act=True)
    assert xs.shape == (6, m.nq + m.nv + 1)
    a = 0.0
    for t in range(5):
        a = a + dt * (np.clip(U[t, 0], -1, 1) - a) / TAU   # Euler on act' = (u - act) / tau
        assert abs(xs[t + 1, -1] - a) < 1e-15, (t, xs[t + 1, -1], a)
    # d is left at the end, its act a view of the simulator's memory
    act = d.act
    assert act[0] == xs[-1, -1] and np.shares_memory(act, d.act)
    # without act=True the rows are (qpos, qvel) as before, the same numbers
    d2 = m.make_data()
    assert np.array_equal(m.rollout(d2, ctrl=U), xs[:, :-1])


def test_batched_rollout_and_set_state_with_act():
    m, d = _model()
    X0 = np.array([[0.1, 0.0, 0.2], [-0.2, 0.5, -0.4]])   # (qpos, qvel, act)
    U = np.full((2, 4, 1), 0.3)
    xs = m.rollout(d, ctrl=U, x0=X0, act=True)
    assert xs.shape == (2, 5, 3) and np.array_equal(xs[:, 0], X0)
    for b in range(2):
        e = m.make_data()
        m.set_state(e, X0[b])
        assert e.act[0] == X0[b, 2]
        assert np.array_equal(m.rollout(e, ctrl=U[b], act=True), xs[b])


def test_step_jacobian_act_blocks():
    m, d = _model()
    dt = m.timestep
    m.set_state(d, [0.3, -0.4, 0.25])
    d.ctrl[:] = 0.6
    A, B = m.step_jacobian(d)
    assert A.shape == (3, 3) and B.shape == (3, 1)
    # the act row: act+ = act + dt (u - act) / tau
    assert np.allclose(A[2], [0, 0, 1 - dt / TAU], atol=1e-15) and abs(B[2, 0] - dt / TAU) < 1e-15
    # the whole of A, B against physid's central differences, and the act column moves the arm (gain 2)
    Af, Bf = m.step_jacobian_fd(d, 1e-6)
    assert np.abs(A - Af).max() < 1e-7 and np.abs(B - Bf).max() < 1e-7
    assert A[1, 2] != 0


def test_torch_step_with_act_passes_gradcheck():
    import torch
    import physid.torch as pt
    m, _ = _model()
    step = pt.Step(m, ["timeconst:lag"])
    q = torch.tensor([[0.3], [-0.1]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([[-0.4], [0.2]], dtype=torch.float64, requires_grad=True)
    u = torch.tensor([[0.6], [-0.3]], dtype=torch.float64, requires_grad=True)
    a = torch.tensor([[0.25], [0.1]], dtype=torch.float64, requires_grad=True)
    th = torch.tensor(step.params.get(), dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda q, v, u, th, a: step(q, v, u, th, a), (q, v, u, th, a), eps=1e-6,
                                    atol=1e-7, rtol=1e-6)
    # the forward is physid's step: act+ by the filter's law, with tau the parameter's value
    q1, v1, a1 = step(q[0], v[0], u[0], th, a[0])
    dt, tau = m.timestep, float(th[0])
    assert abs(float(a1[0]) - (0.25 + dt * (0.6 - 0.25) / tau)) < 1e-15


def test_torch_rollout_with_act():
    # Step.rollout (one node per step) and Step.rollout_fn (one node, backward phys_rollout_grad_act) of a model
    # with activations: the same states as chained steps, the same gradients (the act cotangents of every state
    # enter: the act term of the rollout gradient), and gradcheck of both in float64 with theta
    import torch
    import physid.torch as pt
    m = physid.load(path("tests", "data", "actuator_contact.xml"))
    assert m.na == 3 and m.nu == 4
    step = pt.Step(m, ["timeconst:thrust", "gain:thrust"])
    rng = np.random.default_rng(3)
    d = m.make_data()
    q0 = d.qpos.copy()
    q0[2] = 0.1 - 2e-4   # the box pressed into the floor (as tests/grad/test_rollout.c)
    q0[7:9] = 0.3, -0.4
    T = 6
    q = torch.tensor(q0, requires_grad=True)
    v = torch.tensor([1, 0.3, 0, 0, 0, 0.5, 0.5, -1], dtype=torch.float64, requires_grad=True)
    a = torch.tensor([0.2, 0.1, -0.3], dtype=torch.float64, requires_grad=True)
    U = torch.tensor(0.5 * rng.standard_normal((T, m.nu)), requires_grad=True)
    th = torch.tensor(step.params.get(), dtype=torch.float64, requires_grad=True)
    wq, wv, wa = (torch.tensor(rng.standard_normal((T + 1, n))) for n in (m.nq, m.nv, m.na))
    qs, vs, acts = step.rollout(q, v, U, th, a)
    assert qs.shape == (T + 1, m.nq) and acts.shape == (T + 1, m.na)
    ((wq * qs).sum() + (wv * vs).sum() + (wa * acts).sum()).backward()
    # (the chained rollout's state 0 is q itself: its cotangent reaches q.grad unprojected; the rollout node maps
    # every state's quaternion cotangent to the tangent plane, I - q q', as the steps do)
    quat = torch.tensor(q0[3:7])

    def tangent(g):
        g = g.clone()
        g[3:7] -= (g[3:7] @ quat) * quat
        return g
    grads = [x.grad.clone() for x in (q, v, a, U, th)]
    grads[0] = tangent(grads[0])
    for x in (q, v, a, U, th):
        x.grad = None
    qs2, vs2, acts2 = step.rollout_fn(q, v, U, th, a)
    torch.testing.assert_close(qs2, qs, rtol=0, atol=0)
    torch.testing.assert_close(acts2, acts, rtol=0, atol=0)
    ((wq * qs2).sum() + (wv * vs2).sum() + (wa * acts2).sum()).backward()
    for g, x in zip(grads, (q, v, a, U, th)):
        torch.testing.assert_close(x.grad, g, rtol=1e-9, atol=1e-12)
    assert float(grads[2].abs().max()) > 0.1   # the act cotangents reach the start's activations
    # gradcheck on (v, act, U, theta) at the pressed-in start (q's quaternion has its own test in test_torch.py)
    qd = q.detach()
    for fn in (lambda v, a, U, th: step.rollout(qd, v, U, th, a),
               lambda v, a, U, th: step.rollout_fn(qd, v, U, th, a)):
        assert torch.autograd.gradcheck(fn, (v, a, U, th), eps=1e-6, atol=1e-5, rtol=1e-4)
