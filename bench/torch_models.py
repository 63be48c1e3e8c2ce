"""torch_models.py - physid's steps written directly in PyTorch (float64, autograd), the route of papers 000 and 003
(a simulator in an autodiff framework, gradients by backpropagation through every operation), as the reference
of bench/bench_torch.py (issue 18 item 5). Each model computes the same physics as physid's step on the same
model file, so the benchmark compares two implementations of one function; python/tests/test_bench_torch.py
checks that they agree.

CubePenalty: models/cube.xml under penalty contact (src/contact/penalty.c, src/step/step.c penalty_dense), the
same equations in the same order:
  state q = (p, quat w-first), v = (linear velocity of the origin = COM in the world, angular velocity in the body
  frame); M = diag(m I3, I_body) (box centred at the origin, principal axes = body axes), bias c = (-m g,
  w x I w).
  contacts: the box's corners x_i = p + R s_i with height phi_i = x_i.z <= 0, the 4 deepest (plane-box, margin
  0), point pos_i = x_i - n phi_i / 2, rows J_i = [I3, -[r_i]x R] (r_i = pos_i - p) in the frame (n = z, t1,
  t2 = x, y: the law is isotropic in the tangent plane).
  penalty law: spring k (-phi), damper d = max(2 zeta sqrt(k / w), k dt - 2 / (w dt)), w = J_n M^-1 J_n'
  (zeta from the pair's restitution, phys_penalty_zeta), f_n = spring - d v_n > 0 or inactive, friction
  -C v_t with C = mu f_n / max(|v_t|, v_slip).
  linearly implicit step: H = M + dt sum (d J_n'J_n + C J_t'J_t), v+ = v + dt H^-1 (-c + sum J_n'(spring -
  d v_n) - C J_t' v_t), then C re-evaluated at v+ (a contact whose f_n at v+ pulls is released) and solved
  again, at most 3 solves; q+ = (p + dt v+, quat * exp(dt w+ / 2) normalized).

Humanoid: /usr/share/mujoco/model/humanoid/humanoid.xml in the air (no contact within the benchmark's steps,
joints inside their ranges): see the class.
"""
import math
import os

import numpy as np
import torch

DT = torch.float64


def restitution_of_zeta(zeta):
    """Coefficient of restitution of the clamped spring-damper impact (phys_penalty_restitution)."""
    z2 = zeta * zeta
    if abs(z2 - 1) < 1e-10:
        return math.exp(-2.0)
    if zeta < 1:
        wd = math.sqrt(1 - z2)
        th = math.atan2(2 * zeta * wd, 2 * z2 - 1)
        return math.exp(-zeta * th / wd) * (zeta * math.sin(th) - wd * math.cos(th)) / wd
    s = math.sqrt(z2 - 1)
    ph = math.atanh(2 * zeta * s / (2 * z2 - 1))
    return math.exp(-zeta * ph / s) * (zeta * math.sinh(ph) - s * math.cosh(ph)) / s


def zeta_of_restitution(eps, zeta_max=5.0):
    """The damping ratio whose impact rebounds with eps (phys_penalty_zeta, clamped as physid's contacts do):
    bisection on ln eps(zeta), which decreases monotonically."""
    if eps >= 1:
        return 0.0
    if eps <= 0 or eps <= restitution_of_zeta(zeta_max):
        return zeta_max
    lo, hi = 0.0, zeta_max
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if restitution_of_zeta(mid) > eps:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def quat_mul(a, b):
    aw, ax, ay, az = a.unbind(-1)
    bw, bx, by, bz = b.unbind(-1)
    return torch.stack([aw * bw - ax * bx - ay * by - az * bz, aw * bx + ax * bw + ay * bz - az * by,
                        aw * by - ax * bz + ay * bw + az * bx, aw * bz + ax * by - ay * bx + az * bw], -1)


def quat_exp(v):
    """exp of the rotation vector v as a unit quaternion (phys_quat_exp, with its small-angle series)."""
    th = torch.linalg.norm(v)
    if float(th) < 1e-8:
        c, s = 1 - th * th / 8, 0.5 - th * th / 48
    else:
        c, s = torch.cos(0.5 * th), torch.sin(0.5 * th) / th
    return torch.cat([c.reshape(1), s * v])


def quat_integrate(q, w, dt):
    """q * exp(dt w / 2) normalized (body-frame angular velocity w)."""
    r = quat_mul(q, quat_exp(w * dt))
    return r / torch.linalg.norm(r)


def quat_to_mat(q):
    w, x, y, z = q.unbind(-1)
    return torch.stack([torch.stack([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)]),
                        torch.stack([2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)]),
                        torch.stack([2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])])


def skew(r):
    z = torch.zeros((), dtype=r.dtype)
    return torch.stack([torch.stack([z, -r[2], r[1]]), torch.stack([r[2], z, -r[0]]),
                        torch.stack([-r[1], r[0], z])])


class CubePenalty:
    """models/cube.xml under penalty contact, in torch. The constants come from physid's compiled model (so both
    start from the same numbers); mu (the pair's friction) is the differentiable physical parameter."""

    def __init__(self, model):
        inertia = model.field("body_inertia")[1]
        iquat = model.field("body_iquat")[1]
        ipos = model.field("body_ipos")[1]
        if not (np.allclose(iquat, [1, 0, 0, 0]) and np.allclose(ipos, 0)):
            raise ValueError("CubePenalty: the box's inertia frame must be its body frame")
        self.mass = float(model.field("body_mass")[1])
        self.inertia = torch.tensor(inertia, dtype=DT)
        self.half = torch.tensor(model.field("geom_size")[1], dtype=DT)
        self.dt = model.timestep
        self.gravity = torch.tensor(model.field("gravity"), dtype=DT).reshape(3)
        self.k = float(model.field("penalty_stiffness")[0]) if _has(model, "penalty_stiffness") else 1e4
        self.vslip = float(model.field("penalty_vslip")[0]) if _has(model, "penalty_vslip") else 1e-3
        eps = max(float(model.field("geom_restitution")[g]) for g in (0, 1)) if _has(model, "geom_restitution") \
            else 0.125
        self.zeta = zeta_of_restitution(eps)
        self.mu = float(max(model.field("geom_friction")[0][0], model.field("geom_friction")[1][0]))
        signs = [[(1 if i & 1 else -1), (1 if i & 2 else -1), (1 if i & 4 else -1)] for i in range(8)]
        self.corners = torch.tensor(signs, dtype=DT) * self.half

    def damping(self, w):
        """d = 2 zeta sqrt(k / w), at least the stable k dt - 2 / (w dt) (phys_penalty_damping)."""
        dz = 2 * self.zeta * torch.sqrt(self.k / w)
        dmin = self.k * self.dt - 2 / (w * self.dt)
        return dmin if float(dmin) > float(dz) else dz

    def step(self, qpos, qvel, mu):
        """(qpos (7), qvel (6), mu) -> (qpos+, qvel+), differentiable in all three."""
        dt, m = self.dt, self.mass
        p, quat = qpos[:3], qpos[3:]
        R = quat_to_mat(quat)
        Mdiag = torch.cat([torch.full((3,), m, dtype=DT), self.inertia])
        Minv = 1 / Mdiag
        w_body = qvel[3:]
        bias = torch.cat([-m * self.gravity, torch.linalg.cross(w_body, self.inertia * w_body)])
        x = p + self.corners @ R.T                      # the 8 corners (world)
        heights = x[:, 2]
        order = sorted([i for i in range(8) if float(heights[i]) <= 0], key=lambda i: float(heights[i]))[:4]
        rows = []   # per penetrating contact: (J (3 x 6), spring, damping)
        for i in order:
            if not float(heights[i]) < 0:
                continue
            pos = x[i] - torch.stack([heights.new_zeros(()), heights.new_zeros(()), heights[i] / 2])
            J = torch.cat([torch.eye(3, dtype=DT), -skew(pos - p) @ R], 1)
            w = (J[2] * Minv * J[2]).sum()
            rows.append((J, -self.k * heights[i], self.damping(w)))
        state = []  # per contact: [active, slip, C]
        for J, spring, d in rows:
            vr = J @ qvel
            fn = spring - d * vr[2]
            if not float(fn) > 0:
                state.append([False, None, None])
                continue
            slip = torch.clamp(torch.linalg.norm(vr[:2]), min=self.vslip)
            state.append([True, slip, mu * fn / slip])
        vnew = qvel
        for it in range(3):
            H = torch.diag(Mdiag)
            rhs = -bias
            for (J, spring, d), (act, _, C) in zip(rows, state):
                if not act:
                    continue
                vr = J @ qvel
                Jn, Jt = J[2:], J[:2]
                H = H + dt * (d * Jn.T @ Jn + C * Jt.T @ Jt)
                rhs = rhs + Jn[0] * (spring - d * vr[2]) - C * (Jt.T @ vr[:2])
            vnew = qvel + dt * torch.linalg.solve(H, rhs)
            if it + 1 == 3 or not self._update(rows, state, vnew, mu):
                break
        quat1 = quat_integrate(quat, vnew[3:], dt)
        return torch.cat([p + dt * vnew[:3], quat1]), vnew

    def _update(self, rows, state, vnew, mu):
        """phys_penalty_update: release contacts whose f_n at v+ pulls, re-evaluate C where the slip changed."""
        changed = False
        for (J, spring, d), st in zip(rows, state):
            if not st[0]:
                continue
            vr = J @ vnew
            fn = spring - d * vr[2]
            if not float(fn) > 0:
                st[0], changed = False, True
                continue
            slip = torch.clamp(torch.linalg.norm(vr[:2]), min=self.vslip)
            if float(slip) == float(st[1]):
                continue
            st[1], st[2], changed = slip, mu * fn / slip, True
        return changed


def _has(model, name):
    try:
        model.field(name)
        return True
    except Exception:
        return False


def axis_angle_quat(axis, angle):
    """The unit quaternion of a rotation by angle about the unit axis."""
    return torch.cat([torch.cos(0.5 * angle).reshape(1), torch.sin(0.5 * angle) * axis])


def quat_rotate(q, v):
    return quat_to_mat(q) @ v


class Tree:
    """An articulated body (free root and hinges: MuJoCo's humanoid) in torch, in MuJoCo's conventions and from
    physid's compiled model: forward kinematics joint by joint (a hinge rotates its body about its anchor), the
    dofs' spatial motion vectors cdof = (a, x_a x a) at the world origin (free root: (0, e_i) and (R e_i, p x
    R e_i)), the mass matrix M = sum_b S_b' I_b S_b + armature (S_b: the cdof columns of b's ancestors-or-self,
    I_b b's 6 x 6 spatial inertia at the origin), the bias c = RNEA(q, v, 0) with gravity as the base's
    acceleration (MuJoCo's mj_rne: cvel, cdof_dot = cvel x cdof, cacc, cfrc = I cacc + cvel x* I cvel summed
    to the root, tau_j = cdof_j . cfrc; a free joint's translation and rotation each from one cvel), passive forces -k (q - q_spring) - b v, motors gear * clamp(u), and the
    implicit damping of physid's step: v+ = v + dt (M + dt B)^-1 (tau - c + passive), q+ = q (+) dt v+. No
    contact, no joint limits (the benchmark's model disables both and stays inside the ranges)."""

    def __init__(self, model, param_joint):
        f = model.field
        self.param_dof = int(f("jnt_dofadr")[model.name2id("joint", param_joint)])
        self.nq, self.nv, self.nu, self.nbody = model.nq, model.nv, model.nu, model.nbody
        self.dt = model.timestep
        self.parent = [int(x) for x in f("body_parentid")]
        self.body_pos = torch.tensor(f("body_pos"), dtype=DT)
        self.body_quat = torch.tensor(f("body_quat"), dtype=DT)
        self.ipos = torch.tensor(f("body_ipos"), dtype=DT)
        self.iquat = torch.tensor(f("body_iquat"), dtype=DT)
        self.mass = torch.tensor(f("body_mass"), dtype=DT).reshape(-1)
        self.inertia = torch.tensor(f("body_inertia"), dtype=DT)
        self.jnt_type = [int(x) for x in f("jnt_type")]
        self.jnt_body = [int(x) for x in f("jnt_bodyid")]
        self.jnt_qadr = [int(x) for x in f("jnt_qposadr")]
        self.jnt_dadr = [int(x) for x in f("jnt_dofadr")]
        self.jnt_pos = torch.tensor(f("jnt_pos"), dtype=DT)
        self.jnt_axis = torch.tensor(f("jnt_axis"), dtype=DT)
        self.stiffness = [float(x) for x in f("jnt_stiffness")]
        self.qspring = torch.tensor(f("qpos_spring"), dtype=DT).reshape(-1)
        self.damping = torch.tensor(f("dof_damping"), dtype=DT).reshape(-1)
        self.armature = torch.tensor(f("dof_armature"), dtype=DT).reshape(-1)
        self.gravity = torch.tensor(f("gravity"), dtype=DT).reshape(3)
        self.gear = torch.tensor(f("actuator_gear")[:, 0], dtype=DT) if self.nu else torch.zeros(0, dtype=DT)
        self.act_dof = [self.jnt_dadr[int(j)] for j in f("actuator_trnid")] if self.nu else []
        self.ctrlrange = torch.tensor(f("actuator_ctrlrange"), dtype=DT) if self.nu else None
        self.ctrllimited = [int(x) for x in f("actuator_ctrllimited")] if self.nu else []
        if any(t not in (0, 3) for t in self.jnt_type) or (self.nu and any(int(t) != 0 for t in f("actuator_trntype"))):
            raise ValueError("Tree: free and hinge joints with joint motors only")
        self.joints = [[j for j in range(len(self.jnt_type)) if self.jnt_body[j] == b] for b in range(self.nbody)]
        # dofs of each body's ancestors-or-self (the columns of S_b)
        mask = np.zeros((self.nbody, self.nv))
        for b in range(1, self.nbody):
            for j in self.joints[b]:
                n = 6 if self.jnt_type[j] == 0 else 1
                mask[b, self.jnt_dadr[j]:self.jnt_dadr[j] + n] = 1
            mask[b] = np.maximum(mask[b], mask[self.parent[b]])
        self.mask = torch.tensor(mask, dtype=DT)

    def kinematics(self, qpos):
        """Per body: rotation R_b, origin x_b, and the cdof columns (6 x nv) at the world origin."""
        R = [torch.eye(3, dtype=DT)]
        X = [torch.zeros(3, dtype=DT)]
        Q = [torch.tensor([1.0, 0, 0, 0], dtype=DT)]
        cdof = [None] * self.nv
        for b in range(1, self.nbody):
            p = self.parent[b]
            x = X[p] + R[p] @ self.body_pos[b]
            q = quat_mul(Q[p], self.body_quat[b])
            for j in self.joints[b]:
                qa, da = self.jnt_qadr[j], self.jnt_dadr[j]
                if self.jnt_type[j] == 0:   # free: position and orientation are the state
                    x, q = qpos[qa:qa + 3], qpos[qa + 3:qa + 7]
                    Rf = quat_to_mat(q)
                    e = torch.eye(3, dtype=DT)
                    for i in range(3):
                        cdof[da + i] = torch.cat([torch.zeros(3, dtype=DT), e[i]])
                        cdof[da + 3 + i] = torch.cat([Rf[:, i], torch.linalg.cross(x, Rf[:, i])])
                    continue
                Rq = quat_to_mat(q)
                axis = Rq @ self.jnt_axis[j]
                anchor = x + Rq @ self.jnt_pos[j]
                cdof[da] = torch.cat([axis, torch.linalg.cross(anchor, axis)])
                q = quat_mul(q, axis_angle_quat(self.jnt_axis[j], qpos[qa]))
                x = anchor - quat_to_mat(q) @ self.jnt_pos[j]
            X.append(x)
            Q.append(q)
            R.append(quat_to_mat(q))
        return R, X, torch.stack(cdof, 1)

    def spatial_inertia(self, R, X, b):
        """6 x 6 inertia of body b at the world origin: [[I_c - m [c]x[c]x, m [c]x], [-m [c]x, m I]]."""
        m = self.mass[b]
        c = X[b] + R[b] @ self.ipos[b]
        Ri = R[b] @ quat_to_mat(self.iquat[b])
        Ic = Ri @ torch.diag(self.inertia[b]) @ Ri.T
        cx = skew(c)
        return torch.cat([torch.cat([Ic - m * cx @ cx, m * cx], 1),
                          torch.cat([-m * cx, m * torch.eye(3, dtype=DT)], 1)], 0)

    def bias(self, qvel, cdof, inert):
        """c = RNEA(q, v, 0) with gravity (mj_rne's recursion)."""
        nb = self.nbody
        cvel = [torch.zeros(6, dtype=DT)] * nb
        cacc = [torch.cat([torch.zeros(3, dtype=DT), -self.gravity])] + [None] * (nb - 1)
        for b in range(1, nb):
            v, a = cvel[self.parent[b]], cacc[self.parent[b]]
            for j in self.joints[b]:
                da, n = self.jnt_dadr[j], (6 if self.jnt_type[j] == 0 else 1)
                # a free joint's translation, then its rotation (3 dofs each) from one cvel (mj_comVel): the
                # three rotation axes move with the whole angular velocity, whose own part cancels in the sum
                for group in ([(da, 3), (da + 3, 3)] if n == 6 else [(da, 1)]):
                    ks = range(group[0], group[0] + group[1])
                    for k in ks:
                        a = a + cross_motion(v, cdof[:, k]) * qvel[k]
                    for k in ks:
                        v = v + cdof[:, k] * qvel[k]
            cvel[b], cacc[b] = v, a
        cfrc = [None] + [inert[b] @ cacc[b] + cross_force(cvel[b], inert[b] @ cvel[b]) for b in range(1, nb)]
        for b in range(nb - 1, 0, -1):
            if self.parent[b] > 0:
                cfrc[self.parent[b]] = cfrc[self.parent[b]] + cfrc[b]
        body_of_dof = [0] * self.nv
        for j in range(len(self.jnt_type)):
            n = 6 if self.jnt_type[j] == 0 else 1
            for k in range(self.jnt_dadr[j], self.jnt_dadr[j] + n):
                body_of_dof[k] = self.jnt_body[j]
        F = torch.stack([cfrc[body_of_dof[k]] for k in range(self.nv)], 1)
        return (cdof * F).sum(0)

    def step(self, qpos, qvel, ctrl, damping):
        """(qpos, qvel, ctrl, b) -> (qpos+, qvel+); b is the damping of param_joint (the physical parameter,
        physid's damping:JOINT)."""
        R, X, cdof = self.kinematics(qpos)
        inert = [None] + [self.spatial_inertia(R, X, b) for b in range(1, self.nbody)]
        M = torch.diag(self.armature)
        for b in range(1, self.nbody):
            S = cdof * self.mask[b]
            M = M + S.T @ inert[b] @ S
        c = self.bias(qvel, cdof, inert)
        B = torch.cat([self.damping[:self.param_dof], damping.reshape(1), self.damping[self.param_dof + 1:]])
        tau = -B * qvel
        springs = []
        for j in range(len(self.jnt_type)):
            if self.jnt_type[j] == 3:
                qa = self.jnt_qadr[j]
                springs.append(-self.stiffness[j] * (qpos[qa] - self.qspring[qa]))
            else:
                springs.extend([torch.zeros((), dtype=DT)] * 6)
        tau = tau + torch.stack(springs)
        if self.nu:
            u = ctrl
            if any(self.ctrllimited):
                u = torch.clamp(ctrl, self.ctrlrange[:, 0], self.ctrlrange[:, 1])
            tau = tau.index_add(0, torch.tensor(self.act_dof), self.gear * u)
        acc = torch.linalg.solve(M + self.dt * torch.diag(B), tau - c)
        vnew = qvel + self.dt * acc
        return self.integrate(qpos, vnew), vnew

    def integrate(self, qpos, v):
        parts = []
        for j in range(len(self.jnt_type)):
            qa, da = self.jnt_qadr[j], self.jnt_dadr[j]
            if self.jnt_type[j] == 0:
                parts += [qpos[qa:qa + 3] + self.dt * v[da:da + 3], quat_integrate(qpos[qa + 3:qa + 7], v[da + 3:da + 6],
                                                                                   self.dt)]
            else:
                parts.append((qpos[qa] + self.dt * v[da]).reshape(1))
        return torch.cat(parts)


def cross_motion(v, m):
    """(w, v) x (w2, v2) = (w x w2, w x v2 + v x w2)."""
    w, vl, w2, v2 = v[:3], v[3:], m[:3], m[3:]
    return torch.cat([torch.linalg.cross(w, w2), torch.linalg.cross(w, v2) + torch.linalg.cross(vl, w2)])


def cross_force(v, f):
    """(w, v) x* (n, f) = (w x n + v x f, w x f)."""
    w, vl, n, fl = v[:3], v[3:], f[:3], f[3:]
    return torch.cat([torch.linalg.cross(w, n) + torch.linalg.cross(vl, fl), torch.linalg.cross(w, fl)])


#---------------------------------------------------------------------------------------------------------------
# the benchmark's scenes: model files and start states shared by bench_torch.py and its test

HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"


def cube_penalty_file(root, folder):
    """models/cube.xml with its contact model set to penalty (as --contact penalty), written into folder."""
    text = open(os.path.join(root, "models", "cube.xml")).read()
    if 'data="lcp"' not in text:
        raise ValueError("cube.xml: its contact model line changed")
    out = os.path.join(folder, "cube_penalty.xml")
    with open(out, "w") as f:
        f.write(text.replace('data="lcp"', 'data="penalty"'))
    return out


def humanoid_air_file(folder):
    """MuJoCo's humanoid with contacts and joint limits disabled (as bench/bench_grad.c), written into folder."""
    text = open(HUMANOID).read()
    option = '<option timestep="0.005"/>'
    if option not in text:
        raise ValueError(HUMANOID + ": its option line changed")
    out = os.path.join(folder, "humanoid_air.xml")
    with open(out, "w") as f:
        f.write(text.replace(option, '<option timestep="0.005"><flag contact="disable" limit="disable"/></option>'))
    return out


def cube_start():
    """The cube tossed onto the table: 5 mm into it on a corner-first tilt, sliding and spinning."""
    tilt = np.array([0.08, -0.05, 0.02])
    quat = np.concatenate([[math.cos(np.linalg.norm(tilt) / 2)],
                           math.sin(np.linalg.norm(tilt) / 2) * tilt / np.linalg.norm(tilt)])
    qpos = np.concatenate([[0.0, 0.0, 0.0524 * 1.09 - 0.005], quat])
    qvel = np.array([0.6, -0.2, -0.8, 1.5, -2.0, 0.7])
    return qpos, qvel


def humanoid_start(model, seed=7):
    """The humanoid in the air (root 2 m up, tilted), joints and velocities random, controls random in range."""
    rng = np.random.default_rng(seed)
    qpos = model.field("qpos0").reshape(-1).copy()
    qpos[2] = 2.0
    qpos[3:7] = [math.cos(0.1), math.sin(0.1) * 0.6, 0.0, math.sin(0.1) * 0.8]
    qpos[7:] += 0.2 * rng.standard_normal(model.nq - 7)
    qvel = 0.5 * rng.standard_normal(model.nv)
    ctrl = np.clip(0.4 * rng.standard_normal(model.nu), -1, 1)
    return qpos, qvel, ctrl


def trajectories(model, step, qpos, qvel, ctrl, steps):
    """steps of physid (model.step) and of the torch step(q, v) from one start, ctrl held: the two trajectories
    (steps, nq + nv) as numpy arrays, rows after each step."""
    d = model.make_data()
    d.qpos[:], d.qvel[:] = qpos, qvel
    if model.nu:
        d.ctrl[:] = ctrl
    q, v = torch.tensor(qpos, dtype=DT), torch.tensor(qvel, dtype=DT)
    a, b = [], []
    with torch.no_grad():
        for _ in range(steps):
            model.step(d)
            q, v = step(q, v)
            a.append(np.concatenate([d.qpos, d.qvel]))
            b.append(np.concatenate([q.numpy(), v.numpy()]))
    return np.array(a), np.array(b)


def project_quat_grad(qpos, grad, at=3):
    """A quaternion input's gradient as physid.torch gives it: its part in the tangent plane at the unit
    quaternion qpos[at:at + 4] (orthogonal to it), in place on grad (numpy)."""
    q = np.asarray(qpos[at:at + 4], dtype=float)
    grad[at:at + 4] -= q * (q @ grad[at:at + 4]) / (q @ q)
    return grad
