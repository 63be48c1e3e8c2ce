#!/usr/bin/env python3
"""Writes the SUPERball tensegrity models (issue 16, paper 002) from one description.

  models/superball.xml                          ground truth: 6 free rods on a floor, cable actuators with
                                                first-order (filter) activation dynamics
  models/superball_fixed.xml                    the non-contact set: rod r0 welded to the world (no joint),
                                                no floor
  examples/tensegrity/superball_nodyn.xml       as superball.xml with actuators without dynamics
  examples/tensegrity/superball_fixed_nodyn.xml as superball_fixed.xml with actuators without dynamics
  examples/tensegrity/superball_condim3_nodyn.xml as superball_nodyn.xml with sliding friction only (condim 3)
  examples/tensegrity/superball_floor_nodyn.xml as superball_nodyn.xml with the friction "1 1 1" on the floor only
                                                (rods "0 0 0"): the same rod-floor contacts (the pair takes the larger
                                                value), with the floor's friction:, torsion:, rolling: the contacts'
                                                (what identify fits, issue 16); rod-rod contacts frictionless;
                                                penalty contact (its derivatives have the angular rows)
  examples/tensegrity/superball_floor.xml       as superball_floor_nodyn.xml with the filter actuators of
                                                superball.xml (the fit of the ground truth's own data with act)

Geometry: the 6-bar "expanded octahedron" (the SUPERball's icosahedral tensegrity): rods in three parallel pairs
along x, y and z, half-length a = 0.842 m (rod 1.684 m), each pair offset by +-a/2 (the equal-tension
equilibrium of this topology); the 24 cables join every two rod ends sqrt(3/2) a = 1.031 m apart (each end
carries 4 cables; they bound 8 triangles). The floor models rest on one cable triangle: the pose is turned so
that the triangle's centroid direction points down, its three rod ends 1 cm above the floor. Run from the repository root: python3 examples/tensegrity/make_models.py
"""
import itertools
import math
import os

A = 0.842            # rod half-length (paper 002: rod length 1.684 m)
B = A / 2            # offset of each rod of a pair from the centre
RADIUS = 0.05        # capsule radius (not given by the paper)
MASS = 10.0          # rod mass, kg
STIFF, DAMP, REST = 10000.0, 1000.0, 0.95
GAIN, CTRL = 1000.0, 100.0
TAU = 0.1            # filter time constant (the paper gives none; one 10 Hz control period)
FIXED_LIFT = 3.0     # the fixed variant's centre height (no floor)

# rods: (name, centre, axis index); ends at centre -+ a e_axis
RODS = []
for ax, (o1, o2) in enumerate([(2, 1), (0, 2), (1, 0)]):  # x-rods offset in z, y-rods in x, z-rods in y
    for sgn in (1, -1):
        c = [0.0, 0.0, 0.0]
        c[o1] = sgn * B
        RODS.append(("r%d" % len(RODS), c, ax))


def ends(rod):
    """the two end points (world, at the model's rest pose without the lift) of a rod"""
    _, c, ax = rod
    out = []
    for s in (-1, 1):
        p = list(c)
        p[ax] += s * A
        out.append(p)
    return out


def cables():
    """the 24 cables: pairs of ends of different rods sqrt(3/2) a apart"""
    nodes = [(i, k, p) for i, rod in enumerate(RODS) for k, p in enumerate(ends(rod))]
    target = math.sqrt(1.5) * A
    out = []
    for (i, k, p), (j, l, q) in itertools.combinations(nodes, 2):
        if i != j and abs(math.dist(p, q) - target) < 1e-9:
            out.append(((i, k), (j, l)))
    assert len(out) == 24, len(out)
    deg = {}
    for e in out:
        for n in e:
            deg[n] = deg.get(n, 0) + 1
    assert all(d == 4 for d in deg.values()) and len(deg) == 12
    return out


def face_down():
    """the rotation (3x3 rows) that turns the centroid direction of one closed cable triangle to -z: the floor
    model's rest pose lies on that face"""
    cab = cables()
    adj = {}
    for e in cab:
        adj.setdefault(e[0], set()).add(e[1])
        adj.setdefault(e[1], set()).add(e[0])
    pts = {(i, k): p for i, rod in enumerate(RODS) for k, p in enumerate(ends(rod))}
    tri = sorted(t for t in itertools.combinations(sorted(pts), 3)
                 if t[1] in adj[t[0]] and t[2] in adj[t[0]] and t[2] in adj[t[1]])
    assert len(tri) == 8, len(tri)
    c = [sum(pts[n][k] for n in tri[0]) / 3 for k in range(3)]
    n = [x / math.sqrt(sum(y * y for y in c)) for x in c]
    # Rodrigues: turn n onto -z about the axis n x (-z)
    tz = [0.0, 0.0, -1.0]
    ax = [n[1] * tz[2] - n[2] * tz[1], n[2] * tz[0] - n[0] * tz[2], n[0] * tz[1] - n[1] * tz[0]]
    s_ = math.sqrt(sum(x * x for x in ax))
    c_ = sum(n[k] * tz[k] for k in range(3))
    k_ = [x / s_ for x in ax]
    K = [[0, -k_[2], k_[1]], [k_[2], 0, -k_[0]], [-k_[1], k_[0], 0]]
    K2 = [[sum(K[i][m] * K[m][j] for m in range(3)) for j in range(3)] for i in range(3)]
    return [[(1.0 if i == j else 0.0) + s_ * K[i][j] + (1 - c_) * K2[i][j] for j in range(3)] for i in range(3)]


def mat_quat(R):
    """unit quaternion (w first) of a rotation matrix with trace > -1"""
    w = math.sqrt(max(0.0, 1 + R[0][0] + R[1][1] + R[2][2])) / 2
    return [w, (R[2][1] - R[1][2]) / (4 * w), (R[0][2] - R[2][0]) / (4 * w), (R[1][0] - R[0][1]) / (4 * w)]


def fmt(v):
    return " ".join("%.10g" % x for x in v)


def model(fixed, dyn, condim=6, floor=False):
    """the MJCF text of one variant (condim 3: sliding friction only; floor: the friction on the floor only)"""
    R = [[1.0, 0, 0], [0, 1.0, 0], [0, 0, 1.0]] if fixed else face_down()
    rot = lambda p: [sum(R[i][k] * p[k] for k in range(3)) for i in range(3)]
    nodes_z = [rot(p)[2] for rod in RODS for p in ends(rod)]
    lift = FIXED_LIFT if fixed else RADIUS + 0.01 - min(nodes_z)   # the lowest rod end 1 cm above the floor
    quat = mat_quat(R)
    name = "superball" + ("_fixed" if fixed else "") + ("_condim3" if condim == 3 else "") + ("_floor" if floor else "")
    name += "" if dyn else "_nodyn"
    L = []
    L.append('<mujoco model="%s">' % name)
    L.append('  <!-- written by examples/tensegrity/make_models.py (issue 16, paper 002); edit that script, not this'
             ' file -->')
    L.append('  <option timestep="0.001" integrator="Euler"/>')
    L.append('  <default>')
    L.append('    <geom friction="1 1 1" condim="%d"/>' % condim)
    L.append('    <tendon stiffness="%g" damping="%g" springlength="%g"/>' % (STIFF, DAMP, REST))
    L.append('  </default>')
    L.append('  <worldbody>')
    if not fixed:
        L.append('    <geom name="floor" type="plane" size="20 20 0.1"/>')
    for i, rod in enumerate(RODS):
        nm, c, ax = rod
        pos = rot(c)
        pos[2] += lift
        e0 = [0.0, 0.0, 0.0]
        e1 = [0.0, 0.0, 0.0]
        e0[ax], e1[ax] = -A, A
        turn = '' if fixed else ' quat="%s"' % fmt(quat)
        L.append('    <body name="%s" pos="%s"%s>' % (nm, fmt(pos), turn))
        if not (fixed and i == 0):
            L.append('      <freejoint/>')
        L.append('      <geom name="%s" type="capsule" fromto="%s %s" size="%g" mass="%g"%s/>'
                 % (nm, fmt(e0), fmt(e1), RADIUS, MASS, ' friction="0 0 0"' if floor else ''))
        L.append('      <site name="%s_0" pos="%s"/>' % (nm, fmt(e0)))
        L.append('      <site name="%s_1" pos="%s"/>' % (nm, fmt(e1)))
        L.append('    </body>')
    L.append('  </worldbody>')
    L.append('  <tendon>')
    cab = cables()
    for n, ((i, k), (j, l)) in enumerate(cab):
        L.append('    <spatial name="c%d"><site site="r%d_%d"/><site site="r%d_%d"/></spatial>' % (n, i, k, j, l))
    L.append('  </tendon>')
    L.append('  <actuator>')
    for n in range(len(cab)):
        extra = ' dyntype="filter" dynprm="%g"' % TAU if dyn else ''
        L.append('    <general name="a%d" tendon="c%d"%s gainprm="%g" ctrllimited="true" ctrlrange="%g %g"/>'
                 % (n, n, extra, GAIN, -CTRL, CTRL))
    L.append('  </actuator>')
    if floor:   # (the contact model differentiated with the angular rows: penalty)
        L.append('  <custom>')
        L.append('    <text name="physid:contact" data="penalty"/>')
        L.append('  </custom>')
    L.append('</mujoco>')
    return name, "\n".join(L) + "\n"


def main():
    for fixed, dyn in itertools.product((False, True), (True, False)):
        name, text = model(fixed, dyn)
        path = os.path.join("models" if dyn else "examples/tensegrity", name + ".xml")
        with open(path, "w") as f:
            f.write(text)
        print(path)
    for condim, floor, dyn in ((3, False, False), (6, True, False), (6, True, True)):
        name, text = model(False, dyn, condim, floor)
        path = os.path.join("examples/tensegrity", name + ".xml")
        with open(path, "w") as f:
            f.write(text)
        print(path)


if __name__ == "__main__":
    main()
