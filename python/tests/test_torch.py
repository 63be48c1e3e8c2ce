"""physid.torch: the step's autograd.Function against torch.autograd.gradcheck in float64 (issue 18 item 3)."""
import numpy as np
import pytest
import torch

import physid
import physid.torch as pt
from conftest import path


def test_gradcheck_step_with_params():
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    step = pt.Step(m, ["mass:link1", "pos:link2"])
    theta0 = torch.tensor(step.params.get(), dtype=torch.float64)
    q = torch.tensor([[0.5, -0.3], [0.1, 0.7]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([[0.7, -1.1], [0.0, 0.4]], dtype=torch.float64, requires_grad=True)
    u = torch.tensor([[0.2, -0.1], [0.0, 0.3]], dtype=torch.float64, requires_grad=True)
    th = theta0.clone().requires_grad_(True)
    assert torch.autograd.gradcheck(lambda q, v, u, th: step(q, v, u, th), (q, v, u, th), eps=1e-6, atol=1e-6,
                                    rtol=1e-5)


def test_gradcheck_free_body_in_contact():
    # the cube sliding and spinning on the table, 0.1 mm into it (lcp contact, friction as theta): a free joint's
    # quaternion input. Not at the loaded state: the cube rests there at distance exactly 0, where a perturbation
    # turns the contacts on and off (a kink: the differences see a jump of the position correction)
    m = physid.load(path("models", "cube.xml"))
    step = pt.Step(m, ["friction:cube"])
    d = m.make_data()
    q = torch.tensor(d.qpos.copy(), dtype=torch.float64, requires_grad=True)
    with torch.no_grad():
        q[2] = 0.0523
    v = torch.tensor([0.3, 0.1, -0.05, 0, 0, 0.5], dtype=torch.float64, requires_grad=True)
    th = torch.tensor(step.params.get(), dtype=torch.float64, requires_grad=True)
    # perturbations of the quaternion inside its tangent plane only: gradcheck on (pos, rotation vector)
    q0 = q.detach()

    def f(pos, w, v, th):
        quat = q0[3:7] + 0.5 * torch.stack([-(q0[4:7] * w).sum(), *(q0[3] * w + torch.linalg.cross(q0[4:7], w))])
        qq = torch.cat([pos, quat])
        return step(qq, v, None, th)

    pos = q0[:3].clone().requires_grad_(True)
    w = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(f, (pos, w, v, th), eps=1e-7, atol=1e-5, rtol=1e-4)


def test_rollout_backward_matches_rollout_grad():
    # T steps through autograd (one VJP per step) give physid's rollout gradient (phys_rollout_grad)
    m = physid.load(path("models", "arm7.xml"))
    step = pt.Step(m)
    d = m.make_data()
    T = 10
    U = 0.3 * np.random.default_rng(2).standard_normal((T, m.nu))
    q0 = torch.tensor(d.qpos.copy(), requires_grad=True)
    v0 = torch.tensor(d.qvel.copy(), requires_grad=True)
    Ut = torch.tensor(U, requires_grad=True)
    qs, vs = step.rollout(q0, v0, Ut)
    L = 0.5 * (qs ** 2).sum() + 0.05 * (vs ** 2).sum()
    L.backward()
    g = m.rollout_grad(d, U, lambda t, q, v: (0.5 * q @ q + 0.05 * v @ v, q, 0.1 * v))
    assert L.item() == pytest.approx(g["loss"], rel=1e-12)
    np.testing.assert_allclose(Ut.grad.numpy(), g["ctrl"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(q0.grad.numpy(), g["x0"][:m.nv], rtol=1e-9, atol=1e-12)


def test_cube_fit_example():
    # examples/torch_cube/fit.py: Adam on (friction, restitution) of the real cube through physid.torch lowers the
    # one-step loss (two tosses, five iterations here; docs/python.md gives the full run's figures)
    import importlib.util
    spec = importlib.util.spec_from_file_location("fit", path("examples", "torch_cube", "fit.py"))
    fit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit)
    theta, losses = fit.main(iters=5, ntoss=2)
    assert len(losses) == 6 and losses[-1] < 0.8 * losses[0]
    assert np.all(theta >= 0) and np.all(theta < 0.4)


def test_rollout_fn():
    # the rollout as one autograd node (backward: phys_rollout_grad) gives the chained steps' states and gradients,
    # and passes gradcheck with theta (pendulum, 2 rows, 15 steps)
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    step = pt.Step(m, ["mass:link1"])
    rng = np.random.default_rng(7)
    q = torch.tensor([[0.5, -0.3], [0.2, 0.4]], dtype=torch.float64, requires_grad=True)
    v = torch.tensor([[0.1, 0.0], [-0.3, 0.2]], dtype=torch.float64, requires_grad=True)
    U = torch.tensor(0.5 * rng.standard_normal((2, 15, 2)), requires_grad=True)
    th = torch.tensor([1.1], dtype=torch.float64, requires_grad=True)
    qs, vs = step.rollout_fn(q, v, U, th)
    assert qs.shape == (2, 16, 2) and vs.shape == (2, 16, 2)
    w = torch.tensor(rng.standard_normal((2, 16, 2)))
    (w * qs).sum().add((vs ** 2).sum()).backward()
    grads = [x.grad.clone() for x in (q, v, U, th)]
    for x in (q, v, U, th):
        x.grad = None
    qs2, vs2 = step.rollout(q, v, U.transpose(0, 1), th)   # chained steps: (T + 1, B, n)
    torch.testing.assert_close(qs2.transpose(0, 1), qs, rtol=0, atol=0)
    (w * qs2.transpose(0, 1)).sum().add((vs2 ** 2).sum()).backward()
    for g, x in zip(grads, (q, v, U, th)):
        torch.testing.assert_close(g, x.grad, rtol=1e-9, atol=1e-12)
    assert torch.autograd.gradcheck(lambda q, v, U, th: step.rollout_fn(q, v, U, th), (q, v, U, th), eps=1e-6,
                                    atol=1e-5, rtol=1e-4)


def test_step_backward_twice_and_threads():
    # a retained graph's second backward adds the same gradients (each backward returns new memory), and a Step on
    # 3 threads gives the batch's numbers bit for bit (the rows of one C call spread over the threads)
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    rng = np.random.default_rng(4)
    q = torch.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    v = torch.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    u = torch.tensor(rng.standard_normal((5, 2)), requires_grad=True)
    outs = []
    for threads in (1, 3):
        step = pt.Step(m, ["mass:link1"], threads=threads)
        th = torch.tensor(step.params.get(), requires_grad=True)
        q1, v1 = step(q, v, u, th)
        loss = (q1 ** 2).sum() + (v1 * q1).sum()
        loss.backward(retain_graph=True)
        g1 = [x.grad.clone() for x in (q, v, u, th)]
        loss.backward()
        for g, x in zip(g1, (q, v, u, th)):
            torch.testing.assert_close(x.grad, 2 * g, rtol=0, atol=0)
            x.grad = None
        outs.append((q1.detach(), v1.detach(), g1))
    for a, b in zip(outs[0][:2] + tuple(outs[0][2]), outs[1][:2] + tuple(outs[1][2])):
        assert torch.equal(a, b)


def test_one_row_path_equals_batch():
    # one row of vectors (physid.torch's by-address path) gives the batch path's numbers bit for bit: outputs and
    # the gradients of q, v, u, theta (and act, for a model with activations), with theta given or None (the
    # model's), a second backward of a retained graph, an output changed in place after the forward (the backward
    # keeps its own copy), and gradcheck on one row
    rng = np.random.default_rng(9)
    for model, spec in ((path("tests", "data", "double_pendulum.xml"), ["mass:link1", "pos:link2"]),
                        (path("tests", "data", "actuator_contact.xml"), ["timeconst:thrust", "mass:box"])):
        m = physid.load(model)
        step = pt.Step(m, spec)
        d = m.make_data()
        x = [d.qpos.copy(), 0.3 * rng.standard_normal(m.nv), rng.uniform(-1, 1, m.nu), step.params.get(),
             rng.uniform(-0.3, 0.3, m.na)]
        w = [torch.tensor(rng.standard_normal(n), dtype=torch.float64) for n in (m.nq, m.nv, m.na)]
        for with_theta in (True, False):
            got = []
            for rows in (False, True):   # (n,) vectors, then the same as a batch of one row (B = 1)
                ins = [torch.tensor(a[None] if rows and i != 3 else a, requires_grad=True) for i, a in enumerate(x)]
                th = ins[3] if with_theta else None
                out = step(ins[0], ins[1], ins[2], th, ins[4])
                loss = sum((o.reshape(-1) * wi).sum() for o, wi in zip(out, w))
                loss.backward(retain_graph=True)
                first = [a.grad.clone() for a in ins if a.grad is not None]
                with torch.no_grad():
                    out[0].mul_(0)   # changed in place: the second backward must not see it
                loss.backward()
                for a, g in zip([a for a in ins if a.grad is not None], first):
                    assert torch.equal(a.grad, 2 * g)
                got.append(([o.detach().reshape(-1) for o in out], [g.reshape(-1) for g in first]))
            (o1, g1), (o2, g2) = got
            assert len(g1) == len(g2) == (5 if with_theta else 4) - (m.na == 0)
            for a, b in zip(o1[1:] + g1, o2[1:] + g2):
                assert torch.equal(a, b)
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    step = pt.Step(m, ["mass:link1"])
    ins = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in
           ([0.5, -0.3], [0.7, -1.1], [0.2, -0.1], step.params.get())]
    assert torch.autograd.gradcheck(lambda q, v, u, th: step(q, v, u, th), ins, eps=1e-6, atol=1e-6, rtol=1e-5)
