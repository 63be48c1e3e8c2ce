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
    # the chained rollout has no act input: refused with a message
    try:
        step.rollout(q[0], v[0], u)
        raise AssertionError("rollout with act accepted")
    except physid.Error as e:
        assert "activations" in str(e)
