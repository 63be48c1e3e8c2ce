"""The Python binding against the C CLI, central differences and its own promises (issue 18 items 2, 3)."""
import subprocess

import numpy as np
import pytest

import physid
from conftest import path


def cli(*args, check=True):
    """physid's command line: (exit code, stdout, stderr)."""
    r = subprocess.run([physid._cli(), *args], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"physid {' '.join(args)} exited {r.returncode}: {r.stderr}")
    return r.returncode, r.stdout, r.stderr


def csv(text):
    """(header, rows) of a CSV text."""
    lines = text.strip().splitlines()
    return lines[0].split(","), np.array([[float(x) for x in ln.split(",")] for ln in lines[1:]])


def test_readme_example(root, monkeypatch):
    # issue 18 item 2's snippet, verbatim, from the repository root
    monkeypatch.chdir(root)
    import numpy as np, physid  # noqa: E401
    m = physid.load("models/cube.xml")
    d = m.make_data()
    A, B = m.step_jacobian(d)          # (2nv, 2nv), (2nv, nu) in tangent coordinates
    xs = m.rollout(d, steps=100)       # (101, nq + nv)
    assert (m.nq, m.nv, m.nu) == (7, 6, 0)
    assert A.shape == (12, 12) and B.shape == (12, 0)
    assert xs.shape == (101, 13)
    assert np.all(np.isfinite(A)) and np.all(np.isfinite(xs))
    # the cube rests on the table: it stays there (z = half its edge)
    assert abs(xs[-1, 2] - 0.0524) < 1e-3


def test_version_matches_cli():
    _, out, _ = cli("--version")
    assert out.strip() == "physid " + physid.version()


def test_rollout_matches_simulate(tmp_path):
    # physid simulate and Model.rollout run the same steps: the same numbers, to the CSV's printed digits
    model = path("tests", "data", "double_pendulum.xml")
    out = tmp_path / "sim.csv"
    cli("simulate", model, "--steps", "50", "--out", str(out), "--quiet")
    head, rows = csv(out.read_text())
    m = physid.load(model)
    d = m.make_data()
    if m.nkey:
        d.reset(0)
    xs = m.rollout(d, steps=50)
    q = [head.index(f"q{i}") for i in range(m.nq)]
    v = [head.index(f"v{i}") for i in range(m.nv)]
    np.testing.assert_allclose(xs[:, :m.nq], rows[:, q], rtol=0, atol=1e-12)
    np.testing.assert_allclose(xs[:, m.nq:], rows[:, v], rtol=0, atol=1e-12)
    assert d.time == pytest.approx(rows[-1, head.index("t")], abs=1e-12)


def test_jacobians_match_cli(tmp_path):
    # physid jacobian --wrt state,ctrl,param:... prints A, B and P at %.17g: Python's are the same numbers
    model = path("tests", "data", "double_pendulum.xml")
    init = tmp_path / "state.csv"
    init.write_text("t,q0,q1,v0,v1\n0,0.5,-0.3,0.7,-1.1\n")
    _, out, _ = cli("jacobian", model, "--init", str(init), "--wrt", "state,param:pos:link2,param:mass:link1")
    head, rows = csv(out)
    m = physid.load(model)
    d = m.make_data()
    d.qpos[:] = [0.5, -0.3]
    d.qvel[:] = [0.7, -1.1]
    A, _ = m.step_jacobian(d)
    P = m.param_jacobian(d, ["pos:link2", "mass:link1"])
    assert head[:4] == ["dq0", "dq1", "dv0", "dv1"]
    np.testing.assert_array_equal(A, rows[:, :4])
    np.testing.assert_array_equal(P, rows[:, 4:])


def step_from(m, d, q, v, u=None):
    """(qpos+, qvel+) of one step from (q, v) with controls u (copies)."""
    d.reset()
    d.qpos[:], d.qvel[:] = q, v
    if u is not None:
        d.ctrl[:] = u
    m.step(d)
    return d.qpos.copy(), d.qvel.copy()


def test_jacobian_vs_central_differences():
    # A and B against central differences taken here in Python (hinge arm with actuators: tangent = joint values)
    m = physid.load(path("models", "arm7.xml"))
    d = m.make_data()
    rng = np.random.default_rng(3)
    q0 = d.qpos.copy() + 0.1 * rng.standard_normal(m.nq)
    v0 = 0.3 * rng.standard_normal(m.nv)
    u0 = 0.2 * rng.standard_normal(m.nu)
    assert m.nq == m.nv  # hinges only: q is its own tangent
    d.qpos[:], d.qvel[:], d.ctrl[:] = q0, v0, u0
    A, B = m.step_jacobian(d)
    eps = 1e-6
    x0 = np.concatenate([q0, v0])

    def f(x, u):
        q, v = step_from(m, d, x[:m.nq], x[m.nq:], u)
        return np.concatenate([q, v])

    Afd = np.column_stack([(f(x0 + eps * e, u0) - f(x0 - eps * e, u0)) / (2 * eps) for e in np.eye(2 * m.nv)])
    Bfd = np.column_stack([(f(x0, u0 + eps * e) - f(x0, u0 - eps * e)) / (2 * eps) for e in np.eye(m.nu)])
    assert np.max(np.abs(A - Afd)) < 1e-6 * max(1, np.max(np.abs(A)))
    assert np.max(np.abs(B - Bfd)) < 1e-6 * max(1, np.max(np.abs(B)))
    # and physid's own central-difference twin
    d.qpos[:], d.qvel[:], d.ctrl[:] = q0, v0, u0
    Afd2, Bfd2 = m.step_jacobian_fd(d, 1e-6)
    assert np.max(np.abs(A - Afd2)) < 1e-6 * max(1, np.max(np.abs(A)))


def test_vjp_is_transposed_jacobian():
    m = physid.load(path("models", "arm7.xml"))
    d = m.make_data()
    d.qvel[:] = np.linspace(-0.5, 0.5, m.nv)
    d.ctrl[:] = np.linspace(0.1, -0.1, m.nu)
    A, B = m.step_jacobian(d)
    w = np.linspace(1, 2, m.nx)
    xbar, ubar = m.step_vjp(d, w)
    np.testing.assert_allclose(xbar, A.T @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ubar, B.T @ w, rtol=1e-12, atol=1e-12)


def test_param_vjp_and_params():
    model = path("tests", "data", "double_pendulum.xml")
    m = physid.load(model)
    d = m.make_data()
    d.qpos[:] = [0.5, -0.3]
    p = m.params(["mass:link1", "pos:link2"])
    assert p.ntheta == 4
    theta = p.get()
    P = m.param_jacobian(d, p)
    w = np.array([1.0, -2.0, 0.5, 3.0])
    _, _, tbar = m.step_vjp(d, w, params=p)
    np.testing.assert_allclose(tbar, P.T @ w, rtol=1e-12, atol=1e-12)
    # set / get round trip, and the model's array follows
    body = m.name2id("body", "link1")
    p.set(theta * [2, 1, 1, 1])
    assert m.field("body_mass")[body] == pytest.approx(2 * theta[0])
    np.testing.assert_array_equal(p.get(), theta * [2, 1, 1, 1])
    lo, hi = p.bounds()
    assert lo[0] > 0 or lo[0] == 0  # a mass is bounded below


def test_rollout_grad_vs_differences():
    # dL/dx0 and dL/du of a rollout's quadratic loss against central differences of Model.rollout
    m = physid.load(path("models", "arm7.xml"))
    d = m.make_data()
    T = 20
    rng = np.random.default_rng(5)
    U = 0.3 * rng.standard_normal((T, m.nu))

    def loss(t, q, v):
        return 0.5 * (q @ q + 0.1 * v @ v), q, 0.1 * v

    g = m.rollout_grad(d, U, loss)

    def L(q0, U):
        d.reset()
        d.qpos[:] = q0
        xs = m.rollout(d, ctrl=U)
        return sum(0.5 * (x[:m.nq] @ x[:m.nq] + 0.1 * x[m.nq:] @ x[m.nq:]) for x in xs)

    q0 = m.field("qpos0").copy()
    assert g["loss"] == pytest.approx(L(q0, U), rel=1e-12)
    eps = 1e-6
    for j in (0, 3):
        e = np.zeros(m.nq)
        e[j] = eps
        fd = (L(q0 + e, U) - L(q0 - e, U)) / (2 * eps)
        assert g["x0"][j] == pytest.approx(fd, rel=1e-5, abs=1e-8)
    for t, j in ((0, 0), (7, 2), (T - 1, m.nu - 1)):
        e = np.zeros_like(U)
        e[t, j] = eps
        fd = (L(q0, U + e) - L(q0, U - e)) / (2 * eps)
        assert g["ctrl"][t, j] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_batch_rollout():
    m = physid.load(path("models", "arm7.xml"))
    d = m.make_data()
    x0 = np.tile(np.concatenate([d.qpos, d.qvel]), (3, 1))
    x0[1, 0] += 0.1
    x0[2, m.nq + 1] = 0.5
    U = np.zeros((3, 10, m.nu))
    U[2] = 0.5
    xs = m.rollout(d, ctrl=U, x0=x0)
    assert xs.shape == (3, 11, m.nq + m.nv)
    for b in range(3):
        e = m.make_data()
        m.set_state(e, x0[b])
        np.testing.assert_array_equal(xs[b], m.rollout(e, ctrl=U[b]))
    # d itself was not moved by the batch
    assert d.time == 0 and not np.any(d.qvel)
    # one C call on 2 and 3 threads: the same numbers, bit for bit
    for threads in (2, 3):
        np.testing.assert_array_equal(m.rollout(d, ctrl=U, x0=x0, threads=threads), xs)


def test_step_and_vjp_batch():
    # Model.step_batch / step_vjp_batch (phys_step_batch / phys_step_vjp_batch): each row bit for bit the step and
    # the VJP of a fresh Data at the row's state, on 1 and 3 threads; the cube sliding into the table (contacts)
    m = physid.load(path("models", "cube.xml"))
    p = m.params(["friction:cube", "mass:cube"])
    rng = np.random.default_rng(5)
    d = m.make_data()
    X = np.tile(np.concatenate([d.qpos, d.qvel]), (5, 1))
    X[:, 2] -= 1e-4 * np.arange(5)
    X[:, m.nq:] += 0.3 * rng.standard_normal((5, m.nv))
    XB = rng.standard_normal((5, m.nx))
    for threads in (1, 3):
        xn = m.step_batch(X, threads=threads)
        xbar, ubar, tbar = m.step_vjp_batch(X, None, XB, params=p, threads=threads)
        assert xn.shape == (5, m.nq + m.nv) and xbar.shape == (5, m.nx) and tbar.shape == (5, 2)
        for b in range(5):
            e = m.make_data()
            m.set_state(e, X[b])
            rb, ub_, tb = m.step_vjp(e, XB[b], params=p)
            np.testing.assert_array_equal(xbar[b], rb)
            np.testing.assert_array_equal(tbar[b], tb)
            m.step(e)
            np.testing.assert_array_equal(xn[b], m.state(e))
    assert np.any(tbar[:, 0] != 0)   # friction acts: the rows slide
    X[3, m.nq] = np.nan   # a row that cannot step: Error naming it
    with pytest.raises(physid.Error, match="row 3: step 0 rejected"):
        m.step_batch(X, threads=2)


def test_no_copies():
    m = physid.load(path("models", "arm7.xml"))
    d = m.make_data()
    a, b = d.qpos, d.field("qpos")
    assert np.shares_memory(a, b)
    d.qpos[0] = 0.25
    assert d.field("qpos")[0] == 0.25
    d.qpos = np.full(m.nq, 0.1)   # assignment writes into the simulator's array
    assert np.shares_memory(d.qpos, b) and b[0] == 0.1
    mass = m.field("body_mass")
    assert np.shares_memory(mass, m.field("body_mass"))
    # the step moves the arrays in place
    q = d.qpos
    m.step(d)
    assert np.shares_memory(q, d.qpos) and d.time == pytest.approx(m.timestep)
    # a view keeps its Data alive
    v = m.make_data().qvel
    import gc
    gc.collect()
    v[:] = 1.0
    assert np.all(v == 1.0)


def test_errors_carry_messages(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<mujoco><worldbody><body><geom type="nosuch" size="1"/></body></worldbody></mujoco>\n')
    with pytest.raises(physid.Error) as e:
        physid.load(str(bad))
    _, _, err = cli("info", str(bad), check=False)
    assert str(e.value) in err  # the CLI prints the library's message
    assert "bad.xml:1: <geom>: attribute 'type' is 'nosuch'" in str(e.value)
    assert e.value.status == 5 and e.value.status_name  # PHYS_ERR_VALUE
    with pytest.raises(physid.Error) as e:
        physid.load(str(tmp_path / "missing.xml"))
    assert "missing.xml" in str(e.value)
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    with pytest.raises(physid.Error) as e:
        m.params(["damping:nosuch"])
    assert "nosuch" in str(e.value)
    p = m.params(["mass:link1"])
    with pytest.raises(physid.Error) as e:
        p.set([-1.0])
    assert "mass" in str(e.value)
    with pytest.raises(physid.Error):
        m.field("nosuch")
    d = m.make_data()
    with pytest.raises(physid.Error) as e:
        m.step_vjp(d, np.zeros(3))
    assert "shape" in str(e.value)


def test_identify_returns_dict(tmp_path):
    # simulated pendulum with known damping: identify recovers it; the dict is result.json
    model = path("tests", "data", "double_pendulum.xml")
    data = tmp_path / "swing.csv"
    cli("simulate", model, "--steps", "200", "--out", str(data), "--quiet")
    r = physid.identify(model, str(data), ["mass:link1:init=0.8"])
    assert isinstance(r, dict) and r["components"] == ["mass:link1"]
    assert r["params"][0]["init"] == 0.8
    assert r["params"][0]["value"] == pytest.approx(1.0, rel=1e-6)
    assert r["stop"] in ("converged", "stalled")
    with pytest.raises(physid.Error) as e:
        physid.identify(model, str(data), ["damping:nosuch"])
    assert "nosuch" in str(e.value)


def test_rollout_errors():
    m = physid.load(path("tests", "data", "double_pendulum.xml"))
    d = m.make_data()
    # a non-finite state: the step is rejected, the rollout raises with the step and the simulator's warning
    d.qvel[0] = np.inf
    with pytest.raises(physid.Error) as e:
        m.rollout(d, steps=5)
    assert str(e.value).startswith("rollout: step 0 rejected (") and e.value.status == 8
    # an exception in a Python loss passes back through the C rollout gradient
    d.reset(0)

    def bad(t, q, v):
        raise ValueError(f"loss failed at {t}")

    with pytest.raises(ValueError, match="loss failed at"):
        m.rollout_grad(d, np.zeros((3, 2)), bad)
    with pytest.raises(physid.Error) as e:
        m.rollout(d, steps=3, ctrl=np.zeros((4, 2)))
    assert "ctrl has 4 rows, steps is 3" in str(e.value)


def test_rollout_one_call_equals_step_loop():
    # Model.rollout (unbatched) is one C call (phys_rollout_states): bit for bit the states of m.step one at a
    # time on a twin Data that starts mid-run (time, contact list and warm start carried), with controls per step
    # and with d's ctrl held; d is left at the end, and the rows are the C output itself (no copy)
    for model, ctrl in ((path("models", "cube.xml"), None), (path("tests", "data", "actuator_contact.xml"), True)):
        m = physid.load(model)
        d, ref = m.make_data(), m.make_data()
        rng = np.random.default_rng(2)
        d.qvel[:] = ref.qvel[:] = 0.3 * rng.standard_normal(m.nv)
        d.ctrl[:] = ref.ctrl[:] = rng.uniform(-1, 1, m.nu)
        m.step(d, n=5)
        m.step(ref, n=5)
        assert d.time > 0
        U = rng.uniform(-1, 1, (30, m.nu)) if ctrl else None
        xs = m.rollout(d, ctrl=U) if ctrl else m.rollout(d, steps=30)
        want = [np.concatenate([ref.qpos, ref.qvel, ref.act])]
        for t in range(30):
            m.step(ref, None if U is None else U[t])
            want.append(np.concatenate([ref.qpos, ref.qvel, ref.act]))
        want = np.array(want)
        n = m.nq + m.nv
        assert xs.shape == (31, n) and np.array_equal(xs, want[:, :n])
        assert np.array_equal(d.qpos, ref.qpos) and np.array_equal(d.qvel, ref.qvel) and d.time == ref.time
        if m.na:   # a view of the (qpos, qvel, act) rows C wrote, not a copy
            assert xs.base is not None and xs.base.shape == (31, n + m.na)
    # act=True: the (qpos, qvel, act) rows, the whole array C wrote
    ma = physid.load(path("tests", "data", "actuator_contact.xml"))
    da, db = ma.make_data(), ma.make_data()
    U = np.random.default_rng(4).uniform(-1, 1, (12, ma.nu))
    xs = ma.rollout(da, ctrl=U, act=True)
    for t in range(12):
        ma.step(db, U[t])
        assert np.array_equal(xs[t + 1], np.concatenate([db.qpos, db.qvel, db.act]))
    assert ma.na > 0 and xs.shape == (13, ma.nq + ma.nv + ma.na) and xs.flags.c_contiguous
