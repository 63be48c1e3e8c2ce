"""physid.torch: the step as a torch.autograd.Function whose backward is physid's analytic VJP.

    import torch, physid, physid.torch as pt
    m = physid.load("tests/data/double_pendulum.xml")
    p = m.params(["mass:link1"])
    step = pt.Step(m, p)                       # a callable module-like object
    q1, v1 = step(q, v, u, theta)              # tensors (B, nq), (B, nv), (B, nu), (ntheta,)
    loss.backward()                            # grads of q, v, u, theta from phys_step_vjp / phys_step_param_vjp

Coordinates: the inputs and outputs are qpos and qvel as physid stores them. physid differentiates in tangent
coordinates (a ball or free joint's rotation as a body-frame rotation vector, include/physid/derivatives.h); the
backward maps a quaternion's cotangent to the tangent and back (q' = q exp(w / 2): dq = L(q)[:, 1:] w / 2, and
w = 2 L(q)[:, 1:]' dq for a perturbation of a unit q), so the gradient of a quaternion input is the one in its
tangent plane (it is orthogonal to q). Everything runs in float64 on the CPU; a batch runs row by row on one Data.
"""
import numpy as np
import torch

from . import Error, Params

_FREE, _BALL = 0, 1


def _lmat(q):
    """The 4 x 4 matrix of left multiplication by the quaternion q (w first): q * p = L(q) p."""
    w, x, y, z = q
    return np.array([[w, -x, -y, -z], [x, w, -z, y], [y, z, w, -x], [z, -y, x, w]])


class _Tangent:
    """Maps between cotangents of qpos (nq) and of physid's tangent coordinates (nv) for one model."""

    def __init__(self, m):
        self.nq, self.nv = m.nq, m.nv
        self.quats = []  # (qpos address of the quaternion, dof address of its rotation vector)
        types, qadr, dadr = m.field("jnt_type"), m.field("jnt_qposadr"), m.field("jnt_dofadr")
        self.map = np.full(m.nq, -1)  # qpos index -> dof index for coordinates that are their own tangent
        for j in range(m.njnt):
            t, qa, da = int(types[j]), int(qadr[j]), int(dadr[j])
            if t == _FREE:
                self.map[qa:qa + 3] = np.arange(da, da + 3)
                self.quats.append((qa + 3, da + 3))
            elif t == _BALL:
                self.quats.append((qa, da))
            else:
                self.map[qa] = da

    def qpos_to_tangent_bar(self, qpos, gq):
        """Cotangent of qpos (output side, at qpos) -> cotangent of the tangent: (dqpos/dtangent)' gq."""
        out = np.zeros(self.nv)
        own = self.map >= 0
        out[self.map[own]] = gq[own]
        for qa, da in self.quats:
            out[da:da + 3] = 0.5 * _lmat(qpos[qa:qa + 4])[:, 1:].T @ gq[qa:qa + 4]
        return out

    def tangent_to_qpos_bar(self, qpos, xb):
        """Cotangent of the tangent at qpos (input side) -> cotangent of qpos: (dtangent/dqpos)' xb."""
        out = np.zeros(self.nq)
        own = self.map >= 0
        out[own] = xb[self.map[own]]
        for qa, da in self.quats:
            out[qa:qa + 4] = 2.0 * _lmat(qpos[qa:qa + 4])[:, 1:] @ xb[da:da + 3]
        return out


def _np(t):
    return t.detach().cpu().numpy().astype(np.float64)


class _StepFn(torch.autograd.Function):
    """(qpos, qvel, ctrl, theta, act) -> (qpos+, qvel+, act+) of one phys_step per batch row (act: (B, na), na may
    be 0)."""

    @staticmethod
    def forward(ctx, qpos, qvel, ctrl, theta, act, owner):
        m, d, p = owner.model, owner.data, owner.params
        Q, V, U, th = owner._inputs(qpos, qvel, ctrl, theta)
        Act = _np(act)
        Q1, V1, A1 = np.empty_like(Q), np.empty_like(V), np.empty_like(Act)
        for b in range(Q.shape[0]):
            owner._load(Q[b], V[b], U[b], Act[b])
            before = int(d.warnings[6])
            m.step(d)
            if int(d.warnings[6]) != before:
                raise Error(f"physid.torch: step rejected ({d.last_warning})", 8)
            Q1[b], V1[b], A1[b] = d.qpos, d.qvel, d.act
        ctx.owner, ctx.saved = owner, (Q, V, U, Q1, th, Act)
        return torch.from_numpy(Q1), torch.from_numpy(V1), torch.from_numpy(A1)

    @staticmethod
    def backward(ctx, gq1, gv1, ga1):
        owner = ctx.owner
        m, d, p, tan = owner.model, owner.data, owner.params, owner.tangent
        Q, V, U, Q1, theta, Act = ctx.saved
        if p is not None:
            p.set(theta)
        GQ1 = np.zeros_like(Q1) if gq1 is None else _np(gq1)
        GV1 = np.zeros((Q.shape[0], m.nv)) if gv1 is None else _np(gv1)
        GA1 = np.zeros_like(Act) if ga1 is None else _np(ga1)
        gq, gv, gu, ga = np.empty_like(Q), np.empty_like(V), np.empty_like(U), np.empty_like(Act)
        gth = np.zeros(p.ntheta if p is not None else 0)
        for b in range(Q.shape[0]):
            xbar_next = np.zeros(m.nx)
            xbar_next[:m.nv] = tan.qpos_to_tangent_bar(Q1[b], GQ1[b])
            xbar_next[m.nv:2 * m.nv] = GV1[b]
            xbar_next[2 * m.nv:] = GA1[b]
            owner._load(Q[b], V[b], U[b], Act[b])
            if p is None:
                xbar, ubar = m.step_vjp(d, xbar_next)
            else:
                xbar, ubar, tbar = m.step_vjp(d, xbar_next, params=p)
                gth += tbar
            gq[b] = tan.tangent_to_qpos_bar(Q[b], xbar[:m.nv])
            gv[b], gu[b], ga[b] = xbar[m.nv:2 * m.nv], ubar, xbar[2 * m.nv:]
        return (torch.from_numpy(gq), torch.from_numpy(gv), torch.from_numpy(gu),
                torch.from_numpy(gth) if p is not None else None, torch.from_numpy(ga), None)


class _RolloutFn(torch.autograd.Function):
    """(qpos0, qvel0, U (B, T, nu), theta) -> (qpos (B, T + 1, nq), qvel (B, T + 1, nv)); the backward is one
    phys_rollout_grad per row whose loss is the cotangents' inner product with the states (its gradient: the
    VJP of the whole rollout, with checkpoints, not one Python call per step)."""

    @staticmethod
    def forward(ctx, qpos, qvel, ctrl, theta, owner):
        m, d, p = owner.model, owner.data, owner.params
        Q, V, U, th = owner._inputs(qpos, qvel, ctrl, theta)
        nb, T = U.shape[0], U.shape[1]
        Qs, Vs = np.empty((nb, T + 1, m.nq)), np.empty((nb, T + 1, m.nv))
        for b in range(nb):
            owner._load(Q[b], V[b], U[b, 0] if T else None)
            xs = m.rollout(d, ctrl=U[b])
            Qs[b], Vs[b] = xs[:, :m.nq], xs[:, m.nq:]
        ctx.owner, ctx.saved = owner, (Q, V, U, th)
        return torch.from_numpy(Qs), torch.from_numpy(Vs)

    @staticmethod
    def backward(ctx, gqs, gvs):
        owner = ctx.owner
        m, d, p, tan = owner.model, owner.data, owner.params, owner.tangent
        Q, V, U, theta = ctx.saved
        if p is not None:
            p.set(theta)
        nb, T = U.shape[0], U.shape[1]
        GQ = np.zeros((nb, T + 1, m.nq)) if gqs is None else _np(gqs)
        GV = np.zeros((nb, T + 1, m.nv)) if gvs is None else _np(gvs)
        gq, gv, gu = np.empty_like(Q), np.empty_like(V), np.empty_like(U)
        gth = np.zeros(p.ntheta if p is not None else 0)
        for b in range(nb):
            def loss(t, q, v, b=b):
                return float(GQ[b, t] @ q + GV[b, t] @ v), tan.qpos_to_tangent_bar(q, GQ[b, t]), GV[b, t]
            owner._load(Q[b], V[b], U[b, 0] if T else None)
            g = m.rollout_grad(d, U[b], loss, params=p)
            gq[b] = tan.tangent_to_qpos_bar(Q[b], g["x0"][:m.nv])
            gv[b], gu[b] = g["x0"][m.nv:2 * m.nv], g["ctrl"]
            if p is not None:
                gth += g["theta"]
        return (torch.from_numpy(gq), torch.from_numpy(gv), torch.from_numpy(gu),
                torch.from_numpy(gth) if p is not None else None, None)


class Step:
    """One physid step of model m as a differentiable torch function: step(qpos, qvel, ctrl=None, theta=None) ->
    (qpos+, qvel+). Inputs are float64 tensors, batched (B, n) or single (n,); theta (ntheta,) are the values of
    the Params table (given: they are written into the model before the step, the model keeps the last ones).
    The backward pass is phys_step_vjp (and phys_step_param_vjp for theta) at the same state. A model with actuator
    activations (na > 0): step(qpos, qvel, ctrl, theta, act) -> (qpos+, qvel+, act+), act (B, na) or (na,) (None:
    zero), differentiable in act too; rollout and rollout_fn refuse such models."""

    def __init__(self, model, params=None):
        self.model, self.data = model, model.make_data()
        self.params = params if params is None or isinstance(params, Params) else model.params(params)
        self.tangent = _Tangent(model)

    def _inputs(self, qpos, qvel, ctrl, theta):
        """The tensors as float64 arrays (theta None without a table), theta written into the model."""
        th = _np(theta) if self.params is not None else None
        if th is not None:
            self.params.set(th)
        return _np(qpos), _np(qvel), _np(ctrl), th

    def _load(self, q, v, u, act=None):
        d = self.data
        d.reset()
        d.qpos[:], d.qvel[:] = q, v
        if self.model.nu and u is not None:
            d.ctrl[:] = u
        if self.model.na and act is not None:
            d.act[:] = act

    def __call__(self, qpos, qvel, ctrl=None, theta=None, act=None):
        m = self.model
        single = qpos.dim() == 1
        qpos, qvel = qpos.reshape(-1, m.nq), qvel.reshape(-1, m.nv)
        if ctrl is None or m.nu == 0:
            ctrl = torch.zeros(qpos.shape[0], m.nu, dtype=torch.float64)
        else:
            ctrl = ctrl.reshape(-1, m.nu).expand(qpos.shape[0], m.nu)
        if theta is None:
            theta = torch.as_tensor(self.params.get() if self.params is not None else np.zeros(0))
        if act is None:   # the model's initial activations (zero)
            act = torch.zeros(qpos.shape[0], m.na, dtype=torch.float64)
        else:
            act = act.reshape(-1, m.na).expand(qpos.shape[0], m.na)
        q1, v1, a1 = _StepFn.apply(qpos, qvel, ctrl, theta, act, self)
        out = (q1, v1, a1) if m.na else (q1, v1)
        return tuple(x[0] for x in out) if single else out

    def rollout(self, qpos, qvel, ctrl, theta=None):
        """The states after each of T = len(ctrl) steps (ctrl (T, nu) or (T, B, nu)): (T + 1, ...) tensors of
        qpos and qvel, differentiable through every step's VJP (one autograd node per step)."""
        self._no_act("rollout")
        qs, vs = [qpos], [qvel]
        for t in range(ctrl.shape[0]):
            q, v = self(qs[-1], vs[-1], ctrl[t], theta)
            qs.append(q)
            vs.append(v)
        return torch.stack(qs), torch.stack(vs)

    def rollout_fn(self, qpos, qvel, ctrl, theta=None):
        """The same states as one autograd node: qpos (B, nq) or (nq,), ctrl (B, T, nu) or (T, nu) -> qpos (B, T + 1,
        nq), qvel (B, T + 1, nv) (no B: (T + 1, ...)). Its backward is phys_rollout_grad (reverse mode with
        checkpoints, in C) with the incoming cotangents as the loss."""
        self._no_act("rollout_fn")
        m = self.model
        single = qpos.dim() == 1
        qpos, qvel = qpos.reshape(-1, m.nq), qvel.reshape(-1, m.nv)
        T = ctrl.shape[-2]
        ctrl = ctrl.reshape(ctrl.shape[0] if ctrl.dim() == 3 else 1, T, m.nu).expand(qpos.shape[0], T, m.nu)
        if theta is None:
            theta = torch.as_tensor(self.params.get() if self.params is not None else np.zeros(0))
        qs, vs = _RolloutFn.apply(qpos, qvel, ctrl, theta, self)
        return (qs[0], vs[0]) if single else (qs, vs)

    def _no_act(self, what):
        if self.model.na:
            raise Error(f"physid.torch: {what} of a model with actuator activations is not supported (chain "
                        "step(q, v, u, theta, act) instead)", 1)
