"""physid.torch: the step as a torch.autograd.Function whose backward is physid's analytic VJP.

    import torch, physid, physid.torch as pt
    m = physid.load("tests/data/double_pendulum.xml")
    p = m.params(["mass:link1"])
    step = pt.Step(m, p)                       # a callable module-like object
    q1, v1 = step(q, v, u, theta)              # tensors (B, nq), (B, nv), (B, nu), (ntheta,)
    loss.backward()                            # grads of q, v, u, theta from phys_step_vjp / phys_step_param_vjp

Coordinates: the inputs and outputs are qpos and qvel as physid stores them. physid differentiates in tangent
coordinates (a ball or free joint's rotation as a body-frame rotation vector, include/physid/derivatives.h); the
backward maps a quaternion's cotangent to the tangent and back in C (phys_qpos_bar_to_tangent,
phys_tangent_bar_to_qpos: q' = q exp(w / 2), dq = L(q)[:, 1:] w / 2), so the gradient of a quaternion input is
the one in its tangent plane (it is orthogonal to q). Everything runs in float64 on the CPU; a batch is one C call (rows spread
over Step's threads, the same numbers for any count).
"""
import ctypes

import numpy as np
import torch

from . import Error, Params, _check
from . import _lib as _c


def _np(t):
    """A tensor as a C-contiguous float64 array (a copy only when needed)."""
    return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float64)


def _rows(t, n, nb, out):
    """Tensor t ((n,), (1, n) or (nb, n); None: zeros) into out (nb, n), a float64 array (a view of a bigger one)."""
    if t is None:
        out[...] = 0
    else:
        out[...] = t.detach().cpu().numpy().reshape(-1, n) if n else 0
    return out


def _direct(t, n):
    """Whether tensor t's memory is n float64 numbers in a row on the CPU (copied by address, not through torch's
    numpy(): the per-call cost of the binding is mostly such conversions). is_cpu and `dtype is` are the cheap
    forms of these tests (t.device.type builds a device object on every call)."""
    return t.dtype is torch.float64 and t.is_cpu and t.is_contiguous() and t.numel() == n


def _vec(t, n):
    """Whether t is None or a vector (n,) that _direct copies by address."""
    return t is None or (t.dim() == 1 and _direct(t, n))


def _put(addr, t, n):
    """The n numbers of tensor t (None: zeros) to address addr (by address when t is _direct, else through a
    contiguous float64 copy)."""
    if n == 0:
        return
    if t is None:
        ctypes.memset(addr, 0, 8 * n)
        return
    if not _direct(t, n):
        t = t.detach().to(dtype=torch.float64, device="cpu").contiguous()
    ctypes.memmove(addr, t.data_ptr(), 8 * n)


class _OneFn(torch.autograd.Function):
    """The one-row step (qpos, qvel, ctrl, theta, act) -> (qpos+, qvel+[, act+]) for vectors that _direct copies
    by address (the common call, the one whose per-call cost bench/bench_torch.py measures: docs/performance.md).
    Forward: one zero-filled ctypes block per call (x, x+, the next state's cotangent, the state's gradient, u),
    the tensors copied in by address, one phys_step_batch, the outputs new tensors; no numpy, no conversions, no
    torch view (a split or slice costs more than a new tensor and a copy). Backward: the cotangents into the
    saved block, one phys_step_vjp_batch_qpos (the quaternion's cotangent mapped in C) writing the state's
    gradient into the block, copied out into new tensors. ctrl, theta, act may be None (zeros, the model's theta,
    zeros); act+ is an output only when the model has activations."""

    @staticmethod
    def forward(ctx, qpos, qvel, ctrl, theta, act, owner):
        nq, nv, na, nu, ns = owner._sizes
        buf = owner._block()   # zeros: a missing act or ctrl is zero
        a = ctypes.addressof(buf)
        mm = ctypes.memmove
        mm(a, qpos.data_ptr(), 8 * nq)
        mm(a + 8 * nq, qvel.data_ptr(), 8 * nv)
        if act is not None and na:
            mm(a + 8 * (nq + nv), act.data_ptr(), 8 * na)
        ua = None
        if ctrl is not None and nu:
            ua = a + 32 * ns
            mm(ua, ctrl.data_ptr(), 8 * nu)
        tab = owner._tab
        if theta is not None and tab is not None:   # theta into the model (as Step._set_theta, inline)
            th = owner._theta_t()
            mm(th, theta.data_ptr(), 8 * owner._ntheta)
            if owner._f_pset(tab, owner._mptr, th) != 0:
                owner._set_theta(theta)   # Error with the message
        else:
            th = owner._set_theta(theta)
        xn = a + 8 * ns
        st = owner._f_step(owner._mptr, owner._work, owner.threads, 1, a, ua, xn, owner._logp)
        if st:
            owner._fail(st)
        ctx.owner, ctx.saved = owner, (buf, a, ua, th)
        q1, v1 = torch.empty(nq, dtype=torch.float64), torch.empty(nv, dtype=torch.float64)
        mm(q1.data_ptr(), xn, 8 * nq)
        mm(v1.data_ptr(), xn + 8 * nq, 8 * nv)
        if not na:
            return q1, v1
        a1 = torch.empty(na, dtype=torch.float64)
        mm(a1.data_ptr(), xn + 8 * (nq + nv), 8 * na)
        return q1, v1, a1

    @staticmethod
    def backward(ctx, gq1, gv1, ga1=None):
        owner = ctx.owner
        nq, nv, na, nu, ns = owner._sizes
        buf, a, ua, th = ctx.saved
        need = ctx.needs_input_grad
        ya, xa = a + 16 * ns, a + 24 * ns
        _put(ya, gq1, nq)
        _put(ya + 8 * nq, gv1, nv)
        _put(ya + 8 * (nq + nv), ga1, na)
        tab = owner._tab
        if th is not None:   # the forward's theta back into the model (another call may have changed it)
            owner._f_pset(tab, owner._mptr, th)
        gu = torch.empty(nu, dtype=torch.float64) if ua is not None and need[2] else None
        gth = torch.empty(owner._ntheta, dtype=torch.float64) if tab is not None and need[3] else None
        st = owner._f_vjp(owner._mptr, owner._work, owner.threads, None if gth is None else tab, 1, a, ua, a + 8 * ns,
                          ya, xa, None if gu is None else gu.data_ptr(), None if gth is None else gth.data_ptr(),
                          owner._logp)
        if st:
            owner._fail(st)
        mm, gq, gv, ga = ctypes.memmove, None, None, None
        if need[0]:
            gq = torch.empty(nq, dtype=torch.float64)
            mm(gq.data_ptr(), xa, 8 * nq)
        if need[1]:
            gv = torch.empty(nv, dtype=torch.float64)
            mm(gv.data_ptr(), xa + 8 * nq, 8 * nv)
        if na and need[4]:
            ga = torch.empty(na, dtype=torch.float64)
            mm(ga.data_ptr(), xa + 8 * (nq + nv), 8 * na)
        return gq, gv, gu, gth, ga, None


def _fill(t, n, nb, x, addr, col):
    """Tensor t ((n,), (1, n) or (nb, n); None: zeros) into columns col .. col + n of the (nb, ns) float64 array x
    at address addr."""
    if n == 0:
        return
    if t is None:
        x[:, col:col + n] = 0
    elif nb == 1 and _direct(t, n):
        ctypes.memmove(addr + 8 * col, t.data_ptr(), 8 * n)
    else:
        x[:, col:col + n] = t.detach().cpu().numpy().reshape(-1, n)


def _grad(g, shape):
    """The gradient g (nb, n) of an input of that shape (broadcast to nb rows) as a tensor, summed back to the
    input's shape (None without the input)."""
    if shape is None:
        return None
    if g.shape == shape:
        return torch.from_numpy(g)
    if len(shape) == g.ndim - 1 or (len(shape) == g.ndim and shape[0] == 1 and g.shape[0] > 1):
        return torch.from_numpy(g.sum(0).reshape(shape))   # broadcast over the batch: summed
    return torch.from_numpy(g.reshape(shape))


class _StepFn(torch.autograd.Function):
    """(qpos, qvel, ctrl, theta, act) -> (qpos+, qvel+, act+) of one phys_step per batch row, all rows in one C
    call (phys_step_batch; the backward one phys_step_vjp_batch_qpos, the qpos cotangents mapped in C). Inputs (n,)
    or (B, n); ctrl, theta, act may be None (zero controls, the model's theta, zero activations); ctrl and act (n,)
    with qpos (B, nq) are broadcast."""

    @staticmethod
    def forward(ctx, qpos, qvel, ctrl, theta, act, owner):
        m, p = owner.model, owner.params
        nq, nv, na, nu = m.nq, m.nv, m.na, m.nu
        single = qpos.dim() == 1
        nb = 1 if single else qpos.shape[0]
        ns, nth = nq + nv + na, 0 if p is None else p.ntheta
        # the arrays of the call and the backward's scratch in one block (one address: numpy's .ctypes costs per
        # call): x, x+ (saved), the next state's cotangent (nb x ns each), U (nb x nu), thetabar (nb x nth)
        k, ku = nb * ns, nb * nu
        buf = np.empty(3 * k + ku + nb * nth)
        a = buf.ctypes.data
        x, xn = buf[:k].reshape(nb, ns), buf[k:2 * k].reshape(nb, ns)
        _fill(qpos, nq, nb, x, a, 0)
        _fill(qvel, nv, nb, x, a, nq)
        _fill(act, na, nb, x, a, nq + nv)
        ua = None
        if nu and ctrl is not None:
            ua = a + 8 * 3 * k
            _fill(ctrl, nu, nb, buf[3 * k:3 * k + ku].reshape(nb, nu), ua, 0)
        th = owner._set_theta(theta)
        owner._call("phys_step_batch", m._ptr, owner._work, owner.threads, nb, a, ua, a + 8 * k, owner._logp)
        ctx.owner, ctx.saved = owner, (buf, a, ua, th)
        ctx.shapes = tuple(None if t is None else tuple(t.shape) for t in (qpos, qvel, ctrl, theta, act))
        r = xn.copy()   # the outputs' memory (the saved x+ stays as computed if the caller writes them in place)
        r = r[0] if single else r
        return torch.from_numpy(r[..., :nq]), torch.from_numpy(r[..., nq:nq + nv]), torch.from_numpy(r[..., nq + nv:])

    @staticmethod
    def backward(ctx, gq1, gv1, ga1):
        owner = ctx.owner
        m, p = owner.model, owner.params
        nq, nv, na, nu = m.nq, m.nv, m.na, m.nu
        buf, a, ua, th = ctx.saved
        qpos, qvel, ctrl, theta, act = ctx.shapes
        nb = 1 if len(qpos) == 1 else qpos[0]
        ns, need = nq + nv + na, ctx.needs_input_grad
        k, ku = nb * ns, nb * nu
        ybar = buf[2 * k:3 * k].reshape(nb, ns)
        ya = a + 8 * 2 * k
        out = np.empty(nb * (ns + nu))   # the gradients returned: new memory on every backward (retain_graph)
        oa = out.ctypes.data
        xbar = out[:k].reshape(nb, ns)
        _fill(gq1, nq, nb, ybar, ya, 0)   # the next state's cotangent (qpos, qvel, act), mapped in C
        _fill(gv1, nv, nb, ybar, ya, nq)
        _fill(ga1, na, nb, ybar, ya, nq + nv)
        owner._set_theta(th)
        ubar = out[k:].reshape(nb, nu) if nu and need[2] and ctrl is not None else None
        tbar = buf[3 * k + ku:].reshape(nb, p.ntheta) if p is not None and need[3] else None
        owner._call("phys_step_vjp_batch_qpos", m._ptr, owner._work, owner.threads,
                    None if tbar is None else ctypes.byref(p._t), nb, a, ua, a + 8 * k, ya, oa,
                    None if ubar is None else oa + 8 * k, None if tbar is None else a + 8 * (3 * k + ku), owner._logp)
        r = xbar[0] if len(qpos) == 1 else xbar
        gq = _grad(r[..., :nq], qpos) if need[0] else None
        gv = _grad(r[..., nq:nq + nv], qvel) if need[1] else None
        gu = _grad(ubar[0] if len(ctrl) == 1 else ubar, ctrl) if ubar is not None else None
        gth = torch.from_numpy(tbar.sum(0).reshape(theta)) if tbar is not None and theta is not None else None
        ga = _grad(r[..., nq + nv:], act) if need[4] and act is not None else None
        return gq, gv, gu, gth, ga, None


class _RolloutFn(torch.autograd.Function):
    """(qpos0, qvel0, U (B, T, nu), theta, act0) -> (qpos (B, T + 1, nq), qvel (B, T + 1, nv), act (B, T + 1, na));
    the forward is one phys_rollout_batch, the backward one phys_rollout_states_vjp per row (the VJP of the T
    steps from the forward's states, one linearization per step, in C: no Python call per step)."""

    @staticmethod
    def forward(ctx, qpos, qvel, ctrl, theta, act, owner):
        m = owner.model
        nq, nv, na, nu = m.nq, m.nv, m.na, m.nu
        nb, T = ctrl.shape[0], ctrl.shape[1]
        x = np.empty((nb, nq + nv + na))
        _rows(qpos, nq, nb, x[:, :nq])
        _rows(qvel, nv, nb, x[:, nq:nq + nv])
        _rows(act, na, nb, x[:, nq + nv:])
        U = np.ascontiguousarray(ctrl.detach().cpu().numpy(), dtype=np.float64)
        th = owner._set_theta(theta)
        xs = np.empty((nb, T + 1, nq + nv + na))
        owner._call("phys_rollout_batch", m._ptr, owner._work, owner.threads, nb, T, x.ctypes.data,
                    U.ctypes.data if nu else None, xs.ctypes.data, owner._logp)
        ctx.owner, ctx.saved = owner, (xs.copy(), U, th)   # the states as computed (the outputs may be changed)
        out = torch.from_numpy(xs)
        return out[:, :, :nq], out[:, :, nq:nq + nv], out[:, :, nq + nv:]

    @staticmethod
    def backward(ctx, gqs, gvs, gas):
        owner = ctx.owner
        m, d, p = owner.model, owner.data, owner.params
        nq, nv, na = m.nq, m.nv, m.na
        xs, U, theta = ctx.saved
        owner._set_theta(theta)
        nb, T = U.shape[0], U.shape[1]
        Y = np.zeros(xs.shape)   # the states' cotangents in qpos coordinates (nb, T + 1, nq + nv + na)
        for g, lo, n in ((gqs, 0, nq), (gvs, nq, nv), (gas, nq + nv, na)):
            if g is not None and n:
                Y[:, :, lo:lo + n] = g.detach().cpu().numpy()
        xb0, gu = np.empty((nb, xs.shape[2])), np.empty_like(U)
        nth = p.ntheta if p is not None else 0
        tb, gth = np.empty(nth), np.zeros(nth)
        tab = None if p is None else owner._tab
        for b in range(nb):   # one C call per row
            owner._call("phys_rollout_states_vjp", m._ptr, d._ptr, tab, T, xs[b].ctypes.data,
                        U[b].ctypes.data if m.nu else None, Y[b].ctypes.data, xb0[b].ctypes.data,
                        gu[b].ctypes.data if m.nu else None, tb.ctypes.data if nth else None, owner._logp)
            gth += tb
        return (torch.from_numpy(xb0[:, :nq].copy()), torch.from_numpy(xb0[:, nq:nq + nv].copy()),
                torch.from_numpy(gu), torch.from_numpy(gth) if p is not None and theta is not None else None,
                torch.from_numpy(xb0[:, nq + nv:].copy()) if na else None, None)


class Step:
    """One physid step of model m as a differentiable torch function: step(qpos, qvel, ctrl=None, theta=None) ->
    (qpos+, qvel+). Inputs are float64 tensors, batched (B, n) or single (n,); theta (ntheta,) are the values of
    the Params table (given: they are written into the model before the step, the model keeps the last ones).
    The batch is one C call (phys_step_batch), on `threads` threads (rows spread over them; the numbers are the
    same, bit for bit, for any count); each row starts from its own state alone (time 0, no warm start). The
    backward pass is one phys_step_vjp_batch (phys_step_vjp and phys_step_param_vjp of every row). A model with
    actuator activations (na > 0): step(qpos, qvel, ctrl, theta, act) -> (qpos+, qvel+, act+), act (B, na) or
    (na,) (None: zero), differentiable in act too."""

    def __init__(self, model, params=None, threads=1):
        self.model, self.data = model, model.make_data()
        self.params = params if params is None or isinstance(params, Params) else model.params(params)
        if not 1 <= int(threads) <= 64:
            raise Error(f"physid.torch.Step: threads {threads} outside 1..64", 1)
        self.threads = int(threads)
        # one scratch Data per thread (the batch calls' work Datas), kept for the Step's life
        self._datas = [self.data] + [model.make_data() for _ in range(self.threads - 1)]
        self._work = (ctypes.c_void_p * self.threads)(*[w._ptr for w in self._datas])
        self._log = _c.Log()
        self._logp = ctypes.byref(self._log)
        # what every call uses, looked up once: sizes, the C functions, the model and table pointers, the ctypes
        # types of the one-row block (_OneFn: x, x+, the cotangent, the gradient: nq + nv + na each; u) and of theta
        ns = model.nq + model.nv + model.na
        self._sizes = (model.nq, model.nv, model.na, model.nu, ns)
        self._ntheta = 0 if self.params is None else self.params.ntheta
        L = _c.lib()
        self._f_step, self._f_vjp, self._f_pset = L.phys_step_batch, L.phys_step_vjp_batch_qpos, L.phys_param_set
        self._mptr = model._ptr
        self._tab = None if self.params is None else ctypes.byref(self.params._t)
        self._block = ctypes.c_double * (4 * ns + model.nu)
        self._theta_t = ctypes.c_double * self._ntheta

    def _call(self, name, *args):
        """A batch call of the C library; Error with its message when it fails (the log then cleared: it keeps
        only its first error)."""
        status = getattr(_c.lib(), name)(*args)
        if status:
            self._fail(status)

    def _fail(self, status):
        """Error for a failed C call, with the log's message (the log then cleared: it keeps only its first
        error)."""
        try:
            _check(status, "physid.torch", self._log)
        finally:
            self._log.status, self._log.error = 0, b""

    def _set_theta(self, theta):
        """theta (a tensor, an array or a ctypes array) written into the model; None: the model's own values, read.
        Returns theta as a ctypes array of doubles (None without a table)."""
        p = self.params
        if p is None:
            return None
        n = p.ntheta
        if theta is None:   # the model's values: read, nothing to set
            buf = self._theta_t()
            _c.lib().phys_param_get(self._tab, self._mptr, buf)
            return buf
        if isinstance(theta, ctypes.Array):
            buf = theta
        elif isinstance(theta, torch.Tensor) and _direct(theta, n):
            buf = self._theta_t()
            ctypes.memmove(buf, theta.data_ptr(), 8 * n)
        else:
            th = np.ravel(theta.detach().cpu().numpy() if isinstance(theta, torch.Tensor) else theta)
            if th.size != n:
                p.set(th)   # Error naming the size
            buf = (ctypes.c_double * n)(*th)
        if self._f_pset(self._tab, self._mptr, buf) != 0:
            p.set(np.array(buf))   # a value out of range: Error with the message
        return buf

    def _load(self, q, v, u, act=None):
        d = self.data
        d.reset()
        d.qpos[:], d.qvel[:] = q, v
        if self.model.nu and u is not None:
            d.ctrl[:] = u
        if self.model.na and act is not None:
            d.act[:] = act

    def __call__(self, qpos, qvel, ctrl=None, theta=None, act=None):
        nq, nv, na, nu, _ = self._sizes
        if nu == 0:
            ctrl = None
        if not na:
            act = None
        if qpos.dim() == 1 and _direct(qpos, nq) and qvel is not None and _vec(qvel, nv) and _vec(ctrl, nu) and \
                _vec(act, na) and _vec(theta, self._ntheta):
            return _OneFn.apply(qpos, qvel, ctrl, theta, act, self)
        q1, v1, a1 = _StepFn.apply(qpos, qvel, ctrl, theta, act, self)
        return (q1, v1, a1) if na else (q1, v1)

    def rollout(self, qpos, qvel, ctrl, theta=None, act=None):
        """The states after each of T = len(ctrl) steps (ctrl (T, nu) or (T, B, nu)): (T + 1, ...) tensors of
        qpos and qvel (and act, for a model with activations: act the start's, None zero), differentiable through
        every step's VJP (one autograd node per step)."""
        m = self.model
        if m.na and act is None:
            act = torch.zeros(qpos.shape[:-1] + (m.na,), dtype=torch.float64)
        qs, vs, acts = [qpos], [qvel], [act]
        for t in range(ctrl.shape[0]):
            out = self(qs[-1], vs[-1], ctrl[t], theta, acts[-1])
            qs.append(out[0])
            vs.append(out[1])
            acts.append(out[2] if m.na else None)
        if m.na:
            return torch.stack(qs), torch.stack(vs), torch.stack(acts)
        return torch.stack(qs), torch.stack(vs)

    def rollout_fn(self, qpos, qvel, ctrl, theta=None, act=None):
        """The same states as one autograd node: qpos (B, nq) or (nq,), ctrl (B, T, nu) or (T, nu) -> qpos (B, T + 1,
        nq), qvel (B, T + 1, nv) (no B: (T + 1, ...)), and act (B, T + 1, na) for a model with activations (act
        the start's, None zero). The forward is one phys_rollout_batch, its backward phys_rollout_states_vjp per row
        (the steps' VJPs chained in C from the forward's states, one linearization per step) for the incoming
        cotangents: the gradient of the chained steps of rollout()."""
        m = self.model
        single = qpos.dim() == 1
        qpos, qvel = qpos.reshape(-1, m.nq), qvel.reshape(-1, m.nv)
        T = ctrl.shape[-2]
        ctrl = ctrl.reshape(ctrl.shape[0] if ctrl.dim() == 3 else 1, T, m.nu).expand(qpos.shape[0], T, m.nu)
        if theta is None:
            theta = torch.as_tensor(self.params.get() if self.params is not None else np.zeros(0))
        if m.na and act is not None:
            act = act.reshape(-1, m.na).expand(qpos.shape[0], m.na)
        qs, vs, acts = _RolloutFn.apply(qpos, qvel, ctrl, theta, act if m.na else None, self)
        out = (qs, vs, acts) if m.na else (qs, vs)
        return tuple(o[0] for o in out) if single else out
