"""physid: a differentiable rigid-body simulator with frictional contact (Python binding of libphysid.so).

    import numpy as np, physid
    m = physid.load("models/cube.xml")
    d = m.make_data()
    A, B = m.step_jacobian(d)          # (2nv, 2nv), (2nv, nu) in tangent coordinates
    xs = m.rollout(d, steps=100)       # (101, nq + nv)

The binding is ctypes over the C library (docs/python.md says why): Model and Data wrap physModel and physData,
their arrays are numpy views of the C memory (no copies; d.qpos[:] = ... writes the simulator's state), and
every C error status is raised as physid.Error carrying physid's message.
"""
import ctypes
import json
import os
import shutil
import subprocess
import tempfile
import weakref

import numpy as np

from . import _lib as _c

__all__ = ["Error", "Model", "Data", "Params", "load", "identify", "version"]

_TYPES = {0: np.float64, 1: np.intc, 2: np.uint8}


class Error(RuntimeError):
    """A physid call failed: str(e) is physid's message, e.status the physStatus code (physid.h), e.status_name
    its name ("invalid model", ...)."""

    def __init__(self, message, status=0):
        super().__init__(message)
        self.status = status
        self.status_name = _c.lib().phys_status_str(status).decode() if status else ""


def version():
    """The version of the C library in use ("0.1.0")."""
    return _c.lib().phys_version().decode()


def _check(status, what, log=None):
    """Raise Error for a nonzero physStatus, with the log's message when there is one."""
    if status != 0:
        msg = log.error.decode(errors="replace") if log is not None and log.error else ""
        name = _c.lib().phys_status_str(status).decode()
        raise Error(f"{what}: {msg or name}", status)


def _dptr(a):
    """ctypes double* to a C-contiguous float64 array (None for None)."""
    return None if a is None else a.ctypes.data_as(_c._c_double_p)


def _f64(a, shape, what):
    """a as a C-contiguous float64 array of the given shape, or Error naming `what`."""
    arr = np.ascontiguousarray(a, dtype=np.float64)
    if arr.shape != tuple(shape):
        if arr.size == int(np.prod(shape)) and arr.ndim <= 1:
            return arr.reshape(shape)
        raise Error(f"{what}: shape {arr.shape}, expected {tuple(shape)}", 1)
    return arr


# the fields that are one vector, not an array counted in a size (include/physid/fields.h): shape (cols,)
_VECTORS = ("gravity", "warning_count", "lastwarning")


def _array(owner, ptr, typ, rows, cols, name):
    """The (rows, cols) field at ptr as a numpy view that keeps `owner` (a Model or Data) alive; (rows,) when
    cols is 1, (cols,) for the vectors."""
    dtype = np.dtype(_TYPES[typ])
    shape = (cols,) if name in _VECTORS else (rows,) if cols == 1 else (rows, cols)
    if rows * cols == 0:
        return np.zeros(shape, dtype)
    raw = (ctypes.c_char * (rows * cols * dtype.itemsize)).from_address(ptr)
    raw._physid_owner = owner  # the ctypes buffer holds the owner; numpy holds the buffer
    return np.frombuffer(raw, dtype=dtype).reshape(shape)


def load(path, *, floating=False, actuate=False, add=()):
    """Load an MJCF (.xml, .xml.gz) or URDF model. floating: a URDF's root gets a free joint; actuate: a motor on
    every URDF joint; add: further model files composed into one world (as `physid --add`). Error on bad input,
    with physid's message ("file:line: element: what")."""
    L = _c.lib()
    log = _c.Log()
    opt = _c.LoadOptions()
    opt.urdf_floating, opt.urdf_actuate = int(bool(floating)), int(bool(actuate))
    names = [os.fsencode(a) for a in add]
    keep = (ctypes.c_char_p * max(1, len(names)))(*names)
    opt.add, opt.nadd = ctypes.cast(keep, ctypes.POINTER(ctypes.c_char_p)), len(names)
    ptr = L.phys_load(os.fsencode(path), ctypes.byref(opt), ctypes.byref(log))
    if not ptr:
        raise Error(log.error.decode(errors="replace"), log.status)
    return Model(ptr)


class Model:
    """A physModel: sizes (nq, nv, nu, na, nx = 2 nv + na), the model's arrays by name (m.field("body_mass")),
    the step, its derivatives and rollouts."""

    def __init__(self, ptr):
        self._ptr = ptr
        self._work = []   # scratch Datas of the batch calls (_workers), freed before the model
        L = _c.lib()
        for s in ("nq", "nv", "nu", "na", "nbody", "njnt", "ngeom", "nsite", "nkey", "nsensordata"):
            setattr(self, s, L.phys_model_size(ptr, s.encode()))
        self.nx = 2 * self.nv + self.na

    def __del__(self):
        for w in getattr(self, "_work", ()):
            w.__del__()
        if getattr(self, "_ptr", None):
            _c.lib().phys_free_model(self._ptr)
            self._ptr = None

    @property
    def timestep(self):
        return float(self.field("timestep")[0])

    @timestep.setter
    def timestep(self, value):
        self.field("timestep")[0] = value

    def field(self, name):
        """The model's array `name` (physid.h's physModel fields: "body_mass", "geom_friction", ...) as a numpy
        view: writing it changes the model."""
        t, r, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        p = _c.lib().phys_model_field(self._ptr, name.encode(), ctypes.byref(t), ctypes.byref(r), ctypes.byref(c))
        if not p or t.value not in _TYPES:
            raise Error(f"physModel has no array '{name}'", 1)
        return _array(self, p, t.value, r.value, c.value, name)

    def name2id(self, kind, name):
        """Id of the named object of a kind ("body", "joint", "geom", "site", "actuator", ...); -1 if none."""
        return _c.lib().phys_name2id(self._ptr, kind.encode(), name.encode())

    def make_data(self):
        """A new Data at the model's reset state (qpos0, zero velocity and controls, time 0)."""
        p = _c.lib().phys_make_data(self._ptr)
        if not p:
            raise Error("phys_make_data: out of memory", 7)
        return Data(self, p)

    def params(self, specs):
        """The parameter table of the specs ("damping:hinge", "friction:floor", ...; physid identify --param)."""
        return Params(self, specs)

    # --- simulation

    def forward(self, d):
        """Kinematics, forces, the acceleration and sensors at d's state (phys_forward)."""
        _c.lib().phys_forward(self._ptr, d._ptr)

    def step(self, d, ctrl=None, n=1):
        """n steps (phys_step) with ctrl (nu values, held) if given."""
        if ctrl is not None:
            d.ctrl[:] = _f64(ctrl, (self.nu,), "step: ctrl")
        L = _c.lib()
        for _ in range(n):
            L.phys_step(self._ptr, d._ptr)

    def state(self, d):
        """(nq + nv,) copy of d's (qpos, qvel)."""
        return np.concatenate([d.qpos, d.qvel])

    def set_state(self, d, x):
        """d's (qpos, qvel) from x (nq + nv), or (qpos, qvel, act) from x (nq + nv + na); time (and otherwise the
        activations) are left as they are."""
        n = self.nq + self.nv
        x = _f64(x, (n + self.na,) if np.size(x) == n + self.na and self.na else (n,), "set_state: x")
        d.qpos[:], d.qvel[:] = x[:self.nq], x[self.nq:n]
        if len(x) > n:
            d.act[:] = x[n:]

    def rollout(self, d, steps=None, ctrl=None, x0=None, act=False, threads=1):
        """States (qpos, qvel) along phys_step from d's state. ctrl (T, nu) gives the controls of each step (T =
        steps; without ctrl: steps steps at d's ctrl). Returns (T + 1, nq + nv), row 0 the start. A batch: x0 (B,
        nq + nv) start states and/or ctrl (B, T, nu): returns (B, T + 1, nq + nv), all rows in one C call
        (phys_rollout_batch, on `threads` threads: the same numbers for any count); each row starts from its x0
        (else d's qpos, qvel) and d's activations alone (time 0, no warm start) with d's applied forces; d is not
        changed then. act=True: the rows are (qpos, qvel, act), nq + nv + na columns, and x0 may hold the
        activations too. A rejected step (non-finite state) raises Error."""
        batched = (x0 is not None and np.ndim(x0) == 2) or (ctrl is not None and np.ndim(ctrl) == 3)
        if not batched:
            return self._rollout_one(d, steps, ctrl, x0, act)
        nb = np.shape(x0)[0] if x0 is not None and np.ndim(x0) == 2 else np.shape(ctrl)[0]
        x = self._batch_states(d, x0, nb, "rollout: x0")
        if ctrl is None:
            if steps is None or steps < 0:
                raise Error("rollout: give steps or ctrl", 1)
            U = np.broadcast_to(d.ctrl, (nb, steps, self.nu))
        else:
            U = np.asarray(ctrl, dtype=np.float64)
            U = U.reshape((1,) * (3 - U.ndim) + U.shape) if U.ndim in (2, 3) else U
            if U.ndim != 3 or U.shape[2] != self.nu or U.shape[0] not in (1, nb):
                raise Error(f"rollout: ctrl has shape {np.shape(ctrl)}, expected ({nb}, T, {self.nu})", 1)
            U = np.broadcast_to(U, (nb, U.shape[1], self.nu))
            if steps is not None and steps != U.shape[1]:
                raise Error(f"rollout: ctrl has {U.shape[1]} steps, steps is {steps}", 1)
        U = np.ascontiguousarray(U)
        T = U.shape[1]
        xs = np.empty((nb, T + 1, x.shape[1]))
        log, work = _c.Log(), self._workers(threads, d)
        _check(_c.lib().phys_rollout_batch(self._ptr, work, threads, nb, T, x.ctypes.data,
                                           U.ctypes.data if self.nu else None, xs.ctypes.data, ctypes.byref(log)),
               "rollout", log)
        return xs if act else np.ascontiguousarray(xs[:, :, :self.nq + self.nv])

    def _batch_states(self, d, x, nb, what):
        """(nb, nq + nv + na) rows of start states: x (B, nq + nv [+ na]) or (nq + nv [+ na]) (broadcast), None:
        d's state; without act columns the activations are d's."""
        n, ns = self.nq + self.nv, self.nq + self.nv + self.na
        out = np.empty((nb, ns))
        if x is None:
            out[:, :self.nq], out[:, self.nq:n], out[:, n:] = d.qpos, d.qvel, d.act
            return out
        x = np.asarray(x, dtype=np.float64)
        cols = x.shape[-1] if x.ndim else 0
        if x.ndim not in (1, 2) or cols not in (n, ns) or (x.ndim == 2 and x.shape[0] != nb):
            raise Error(f"{what}: shape {x.shape}, expected ({nb}, {n}) or ({nb}, {ns})", 1)
        out[:, :cols] = x
        if cols < ns:
            if d is None:
                out[:, n:] = 0
            else:
                out[:, n:] = d.act
        return out

    def _workers(self, threads, d=None):
        """`threads` scratch Datas (kept by the model) as the physData* array of a batch call, with d's applied
        forces (zero without d): every row of a batch sees the same inputs whichever Data runs it."""
        threads = int(threads)
        if not 1 <= threads <= 64:
            raise Error(f"threads {threads} outside 1..64", 1)
        while len(self._work) < threads:
            p = _c.lib().phys_make_data(self._ptr)
            if not p:
                raise Error("phys_make_data: out of memory", 7)
            self._work.append(Data(weakref.proxy(self), p))
        for w in self._work[:threads]:
            if d is not None:
                w.qfrc_applied[...], w.xfrc_applied[...] = d.qfrc_applied, d.xfrc_applied
            else:
                w.qfrc_applied[...], w.xfrc_applied[...] = 0, 0
        return (ctypes.c_void_p * threads)(*[w._ptr for w in self._work[:threads]])

    def _batch_ctrl(self, ctrl, nb):
        """(nb, nu) controls from ctrl (B, nu) or (nu) (broadcast); None without controls."""
        if ctrl is None or not self.nu:
            return None
        return np.ascontiguousarray(np.broadcast_to(np.asarray(ctrl, dtype=np.float64).reshape(-1, self.nu),
                                                    (nb, self.nu)))

    def step_batch(self, x, ctrl=None, d=None, threads=1):
        """One step of each row of x (B, nq + nv [+ na]: qpos, qvel, act) with controls ctrl (B, nu) (None: zero),
        all in one C call (phys_step_batch): (B, nq + nv + na) next states. Each row from its own state alone
        (time 0, no warm start), d's applied forces if d is given; the same numbers for any number of threads."""
        x = np.asarray(x, dtype=np.float64)
        nb = x.shape[0] if x.ndim == 2 else 1
        X = self._batch_states(None, x, nb, "step_batch: x")
        U = self._batch_ctrl(ctrl, nb)
        out = np.empty_like(X)
        log = _c.Log()
        _check(_c.lib().phys_step_batch(self._ptr, self._workers(threads, d), threads, nb, X.ctypes.data,
                                        None if U is None else U.ctypes.data, out.ctypes.data, ctypes.byref(log)),
               "step_batch", log)
        return out

    def step_vjp_batch(self, x, ctrl, xbar_next, params=None, d=None, threads=1):
        """Reverse mode of each row's step (as step_batch): xbar_next (B, nx) -> (xbar (B, nx), ubar (B, nu)), and
        theta_bar (B, ntheta) per row as a third value with params; one linearization per row, one C call
        (phys_step_vjp_batch)."""
        x = np.asarray(x, dtype=np.float64)
        nb = x.shape[0] if x.ndim == 2 else 1
        X = self._batch_states(None, x, nb, "step_vjp_batch: x")
        U = self._batch_ctrl(ctrl, nb)
        XB = _f64(xbar_next, (nb, self.nx), "step_vjp_batch: xbar_next")
        params = None if params is None else (params if isinstance(params, Params) else self.params(params))
        xbar, ubar = np.empty((nb, self.nx)), np.empty((nb, self.nu))
        tbar = None if params is None else np.empty((nb, params.ntheta))
        log = _c.Log()
        _check(_c.lib().phys_step_vjp_batch(self._ptr, self._workers(threads, d), threads,
                                            None if params is None else ctypes.byref(params._t), nb, X.ctypes.data,
                                            None if U is None else U.ctypes.data, XB.ctypes.data, xbar.ctypes.data,
                                            ubar.ctypes.data if self.nu else None,
                                            None if tbar is None else tbar.ctypes.data, ctypes.byref(log)),
               "step_vjp_batch", log)
        return (xbar, ubar) if params is None else (xbar, ubar, tbar)

    def _rollout_one(self, d, steps, ctrl, x0, act=False):
        if x0 is not None:
            self.set_state(d, x0)
        if ctrl is not None:
            ctrl = np.ascontiguousarray(ctrl, dtype=np.float64).reshape(len(ctrl), self.nu)
            if steps is not None and steps != len(ctrl):
                raise Error(f"rollout: ctrl has {len(ctrl)} rows, steps is {steps}", 1)
            steps = len(ctrl)
        if steps is None or steps < 0:
            raise Error("rollout: give steps or ctrl", 1)
        n = self.nq + self.nv
        xs = np.empty((steps + 1, n + self.na))   # (qpos, qvel, act) rows as C writes them: returned as a view
        log = _c.Log()
        s = _c.lib().phys_rollout_states(self._ptr, d._ptr, steps, ctrl.ctypes.data if ctrl is not None and
                                         self.nu else None, xs.ctypes.data, ctypes.byref(log))
        _check(s, "rollout", log)
        return xs if act or not self.na else xs[:, :n]

    # --- derivatives (include/physid/derivatives.h)

    def step_jacobian(self, d):
        """A = dx+/dx (nx, nx) and B = dx+/du (nx, nu) of one step at d's state, x = (q tangent, v[, act]) (d's
        state is not advanced)."""
        A, B = np.empty((self.nx, self.nx)), np.empty((self.nx, self.nu))
        _check(_c.lib().phys_step_jacobian(self._ptr, d._ptr, _dptr(A), _dptr(B)), "step_jacobian")
        return A, B

    def step_jacobian_fd(self, d, eps=1e-6):
        """A and B by central differences of the step (physid's own check; d's state and time restored)."""
        A, B = np.empty((self.nx, self.nx)), np.empty((self.nx, self.nu))
        _check(_c.lib().phys_step_jacobian_fd(self._ptr, d._ptr, eps, _dptr(A), _dptr(B)), "step_jacobian_fd")
        return A, B

    def param_jacobian(self, d, params):
        """P = dx+/dtheta (nx, ntheta) of one step for a Params table (or a list of specs)."""
        params = params if isinstance(params, Params) else self.params(params)
        P = np.empty((self.nx, params.ntheta))
        _check(_c.lib().phys_step_param_jacobian(self._ptr, d._ptr, ctypes.byref(params._t), _dptr(P)),
               "param_jacobian")
        return P

    def step_vjp(self, d, xbar_next, params=None):
        """Reverse mode of one step: (A' xbar_next, B' xbar_next), and P' xbar_next as a third value with params."""
        xb = _f64(xbar_next, (self.nx,), "step_vjp: xbar_next")
        xbar, ubar = np.empty(self.nx), np.empty(self.nu)
        _check(_c.lib().phys_step_vjp(self._ptr, d._ptr, _dptr(xb), _dptr(xbar), _dptr(ubar)), "step_vjp")
        if params is None:
            return xbar, ubar
        params = params if isinstance(params, Params) else self.params(params)
        tbar = np.empty(params.ntheta)
        _check(_c.lib().phys_step_param_vjp(self._ptr, d._ptr, ctypes.byref(params._t), _dptr(xb), _dptr(tbar)),
               "step_vjp")
        return xbar, ubar, tbar

    def rollout_grad(self, d, ctrl, loss, params=None, interval=0, act=False):
        """Loss L = sum_t loss(t, qpos_t, qvel_t) over the rollout from d's state with controls ctrl (T, nu), and
        its gradient by physid's reverse mode with checkpoints (phys_rollout_grad). loss returns (l, dl/dq in
        tangent coordinates (nv), dl/dv (nv)). act=True (a model with activations): loss(t, qpos, qvel, act)
        returns (l, dl/dq, dl/dv, dl/dact (na)) (phys_rollout_grad_act). Returns a dict: loss, x0 (dL/dx_0, nx),
        ctrl (dL/du, (T, nu)), theta (dL/dtheta, with params). d is left at x_0."""
        ctrl = np.ascontiguousarray(ctrl, dtype=np.float64).reshape(len(ctrl), self.nu)
        T = len(ctrl)
        params = None if params is None else (params if isinstance(params, Params) else self.params(params))
        nth = 0 if params is None else params.ntheta
        nq, nv, na, errors = self.nq, self.nv, self.na, []

        def cb(ctx, t, qpos, qvel, *rest):
            try:
                q = np.ctypeslib.as_array(qpos, (nq,)).copy()
                v = np.ctypeslib.as_array(qvel, (nv,)).copy()
                if act:
                    a = np.ctypeslib.as_array(rest[0], (na,)).copy() if na else np.zeros(0)
                    val, dq, dv, da = loss(t, q, v, a)
                    if na:
                        np.ctypeslib.as_array(rest[3], (na,))[:] = da
                else:
                    val, dq, dv = loss(t, q, v)
                gq, gv = (rest[1], rest[2]) if act else (rest[0], rest[1])
                np.ctypeslib.as_array(gq, (nv,))[:] = dq
                np.ctypeslib.as_array(gv, (nv,))[:] = dv
                return float(val)
            except Exception as e:  # an exception cannot cross C: kept and raised after the call
                errors.append(e)
                return float("nan")

        L = _c.lib()
        fn = _c.LOSS_ACT_FN(cb) if act else _c.LOSS_FN(cb)
        work = np.empty(L.phys_rollout_worksize(self._ptr, T, interval, nth))
        total = ctypes.c_double()
        x0bar, ubar, tbar = np.empty(self.nx), np.empty((T, self.nu)), np.empty(nth)
        log = _c.Log()
        s = (L.phys_rollout_grad_act if act else L.phys_rollout_grad)(
            self._ptr, d._ptr, None if params is None else ctypes.byref(params._t), T, interval, _dptr(ctrl), fn,
            None, _dptr(work), ctypes.byref(total), _dptr(x0bar), _dptr(ubar), _dptr(tbar), ctypes.byref(log))
        if errors:
            raise errors[0]
        _check(s, "rollout_grad", log)
        out = {"loss": total.value, "x0": x0bar, "ctrl": ubar}
        if params is not None:
            out["theta"] = tbar
        return out




class Data:
    """A physData: the state (qpos, qvel, act, time), inputs (ctrl, qfrc_applied, xfrc_applied) and everything a
    step computes. Every array is a numpy view of the C memory (d.field(name) for the others)."""

    def __init__(self, model, ptr):
        self.model, self._ptr = model, ptr
        for name in ("qpos", "qvel", "ctrl", "act", "qfrc_applied", "xfrc_applied", "qacc", "xpos", "xquat",
                     "sensordata"):
            object.__setattr__(self, name, self.field(name))
        self._time = self.field("time")
        self._warning_count = self.field("warning_count")

    def __setattr__(self, name, value):
        cur = self.__dict__.get(name)
        if isinstance(cur, np.ndarray) and name in ("qpos", "qvel", "ctrl", "act", "qfrc_applied", "xfrc_applied"):
            cur[...] = value  # d.qpos = x writes into the simulator's array
        else:
            object.__setattr__(self, name, value)

    def __del__(self):
        if getattr(self, "_ptr", None):
            _c.lib().phys_free_data(self._ptr)
            self._ptr = None

    def field(self, name):
        """physData's array `name` (physid.h's PHYS_DATA_ARRAYS: "qpos", "cvel", "qM", ...) as a numpy view."""
        t, r, c = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        p = _c.lib().phys_data_field(self._ptr, name.encode(), ctypes.byref(t), ctypes.byref(r), ctypes.byref(c))
        if not p or t.value not in _TYPES:
            raise Error(f"physData has no array '{name}'", 1)
        return _array(self, p, t.value, r.value, c.value, name)

    @property
    def time(self):
        return float(self._time[0])

    @time.setter
    def time(self, value):
        self._time[0] = value

    @property
    def last_warning(self):
        """The text of the last numerical warning ("" if none)."""
        raw = bytes(self.field("lastwarning"))
        return raw.split(b"\0", 1)[0].decode(errors="replace")

    @property
    def warnings(self):
        """Numerical warnings counted since make_data / reset, per kind (physWarning order)."""
        return self._warning_count.copy()

    def reset(self, key=None):
        """Back to qpos0 (or keyframe `key`), zero velocity and controls, time 0."""
        L = _c.lib()
        if key is None:
            L.phys_reset_data(self.model._ptr, self._ptr)
        else:
            _check(L.phys_reset_keyframe(self.model._ptr, self._ptr, int(key)), f"reset: keyframe {key}")

    def copy(self):
        """A new Data with this one's state (qpos, qvel, act, ctrl, time, applied forces)."""
        other = self.model.make_data()
        self.copy_to(other)
        return other

    def copy_to(self, other):
        """other's state (qpos, qvel, act, ctrl, time, applied forces) set to this one's."""
        for name in ("qpos", "qvel", "act", "ctrl", "qfrc_applied", "xfrc_applied"):
            getattr(other, name)[...] = getattr(self, name)
        other.time = self.time


class Params:
    """A parameter table (physid/params.h): theta, the named physical parameters of a model."""

    def __init__(self, model, specs):
        if isinstance(specs, str):
            specs = [specs]
        self.model, self.specs = model, list(specs)
        self._t = _c.ParamTable()
        arr = (ctypes.c_char_p * max(1, len(self.specs)))(*[s.encode() for s in self.specs])
        log = _c.Log()
        s = _c.lib().phys_param_table_build(ctypes.byref(self._t), model._ptr, arr, len(self.specs), ctypes.byref(log))
        if s != 0:
            _c.lib().phys_param_table_free(ctypes.byref(self._t))
            _check(s, "params", log)
        self.ntheta = self._t.ntheta
        self.labels = [""] * self.ntheta  # "KIND:NAME" per component, "KIND:NAME[i]" in an entry of several
        for i in range(self._t.n):
            e = self._t.param[i]
            if not e.tied:
                for k in range(e.size):
                    name = e.name.decode()
                    self.labels[e.adr + k] = name if e.size == 1 else f"{name}[{k}]"

    def __del__(self):
        if getattr(self, "_t", None) is not None:
            _c.lib().phys_param_table_free(ctypes.byref(self._t))
            self._t = None

    def get(self):
        """theta (ntheta) from the model."""
        theta = np.empty(self.ntheta)
        _c.lib().phys_param_get(ctypes.byref(self._t), self.model._ptr, _dptr(theta))
        return theta

    def set(self, theta):
        """theta into the model; Error (model unchanged) for a value out of its kind's range."""
        th = _f64(theta, (self.ntheta,), "params.set: theta")
        s = _c.lib().phys_param_set(ctypes.byref(self._t), self.model._ptr, _dptr(th))
        if s != 0:  # phys_param_set has no log: name the first value outside its kind's bounds
            lo, hi = self.bounds()
            bad = [i for i in range(self.ntheta) if not (lo[i] <= th[i] <= hi[i])]
            what = f"{self.labels[bad[0]]} = {th[bad[0]]:g} outside [{lo[bad[0]]:g}, {hi[bad[0]]:g}]" if bad else \
                "a value the model refuses"
            raise Error(f"params.set: {what}", s)

    def bounds(self):
        """(lower, upper), each (ntheta); -inf / inf when unbounded."""
        lo, hi = np.empty(self.ntheta), np.empty(self.ntheta)
        _c.lib().phys_param_bounds(ctypes.byref(self._t), _dptr(lo), _dptr(hi))
        return lo, hi


def _cli():
    """The physid command: $PHYSID_CLI, else `physid` beside the library in use (a build tree) or in its
    PREFIX/bin, else on PATH."""
    env = os.environ.get("PHYSID_CLI")
    if env:
        return env
    libdir = os.path.dirname(os.path.realpath(_c.library_path()))
    for cand in (os.path.join(libdir, "physid"), os.path.join(libdir, "..", "bin", "physid"),
                 os.path.join(libdir, "..", "..", "bin", "physid")):
        if os.path.isfile(cand) and os.access(cand, os.X_OK):
            return os.path.normpath(cand)
    found = shutil.which("physid")
    if not found:
        raise Error("identify: the physid command is not found (set PHYSID_CLI)", 1)
    return found


def identify(model, data, params, *, job=None, options=(), **settings):
    """Run `physid identify` and return its result.json as a dict (theta, stderr, loss, iterations, ...;
    docs/cli.md, result.json). model: the model file; data: a data file or folder, or a list; params: the
    --param specs; settings: further options by their job-file keys (loss="kstep", iters=50, contact="cone",
    ...), or options: extra command-line words. Error with identify's message when it fails."""
    data = [data] if isinstance(data, (str, os.PathLike)) else list(data)
    params = [params] if isinstance(params, str) else list(params)
    with tempfile.TemporaryDirectory(prefix="physid_identify_") as tmp:
        out = os.path.join(tmp, "result.json")
        cmd = [_cli(), "identify", os.fspath(model), *map(os.fspath, data), "--out", out, "--quiet"]
        for p in params:
            cmd += ["--param", p]
        if job is not None:
            cmd += ["--job", os.fspath(job)]
        for key, value in settings.items():
            cmd += ["--" + key.replace("_", "-"), str(value)]
        cmd += list(options)
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            msg = r.stderr.strip().splitlines()
            raise Error(msg[-1] if msg else f"physid identify exited {r.returncode}", 1)
        with open(out) as f:
            return json.load(f)
