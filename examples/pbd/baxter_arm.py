"""examples/pbd/baxter_arm.py - Baxter's left arm as MJCF text, converted from tests/data/baxter/baxter.urdf
(the chain left_arm_mount -> left_hand, fixed at the arm mount; links hanging off the chain by fixed joints,
the 0.1 g visual and sensor frames, are left out), with one motor per joint and room for extra elements inside
any link (`extra`: link name -> MJCF text) and after the world (`tail`); and the small linear solve both
scripts need. Used by spring.py and torque.py."""
import math
import xml.etree.ElementTree as ET

URDF = "tests/data/baxter/baxter.urdf"
JOINTS = ["left_s0", "left_s1", "left_e0", "left_e1", "left_w0", "left_w1", "left_w2"]


def rpy_quat(rpy):
    """URDF fixed-axis roll, pitch, yaw (R = Rz Ry Rx) as a quaternion w x y z"""
    r, p, y = (0.5 * a for a in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return (cr * cp * cy + sr * sp * sy, sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy)


def vec(s, n=3):
    """numbers of an attribute ('0 0 0' when absent)"""
    return [float(x) for x in (s or " ".join(["0"] * n)).split()]


def fmt(v):
    return " ".join("%.17g" % x for x in v)


def arm_mjcf(extra=None, tail="", timestep=0.002):
    """the MJCF text of the left arm"""
    extra = extra or {}
    root = ET.parse(URDF).getroot()
    links = {l.get("name"): l for l in root.findall("link")}
    joint_of = {j.find("child").get("link"): j for j in root.findall("joint")}
    chain, link = [], "left_hand"
    while link != "left_arm_mount":
        j = joint_of[link]
        chain.append(j)
        link = j.find("parent").get("link")
    chain.reverse()
    out, depth = [], 2
    for j in chain:
        o = j.find("origin")
        child = j.find("child").get("link")
        pad = "  " * depth
        out.append('%s<body name="%s" pos="%s" quat="%s">' % (pad, child, fmt(vec(o.get("xyz"))), fmt(rpy_quat(vec(o.get("rpy"))))))
        if j.get("type") == "revolute":
            lim = j.find("limit")
            out.append('%s  <joint name="%s" axis="%s" limited="true" range="%s %s" damping="%s"/>' % (
                pad, j.get("name"), fmt(vec(j.find("axis").get("xyz"))), lim.get("lower"), lim.get("upper"),
                j.find("dynamics").get("damping")))
        inertial = links[child].find("inertial")
        io, I = inertial.find("origin"), inertial.find("inertia")
        full = [float(I.get(k)) for k in ("ixx", "iyy", "izz", "ixy", "ixz", "iyz")]
        assert vec(io.get("rpy")) == [0, 0, 0], "an inertial frame rotated in the URDF"   # fullinertia: link axes
        out.append('%s  <inertial pos="%s" mass="%s" fullinertia="%s"/>' % (
            pad, fmt(vec(io.get("xyz"))), inertial.find("mass").get("value"), fmt(full)))
        if child in extra:
            out.append(extra[child])
        depth += 1
    for d in range(depth - 1, 1, -1):
        out.append("  " * d + "</body>")
    motors = "\n".join('    <motor name="m_%s" joint="%s" gear="1"/>' % (n, n) for n in JOINTS)
    return ('<mujoco model="baxter_left_arm">\n  <compiler angle="radian"/>\n  <option timestep="%g"/>\n  <worldbody>\n%s\n  </worldbody>\n%s'
            '  <actuator>\n%s\n  </actuator>\n</mujoco>\n' % (timestep, "\n".join(out), tail, motors))


def solve(a, b):
    """x with a x = b (Gaussian elimination with partial pivoting)"""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(c + 1, n):
            f = m[r][c] / m[c][c]
            for k in range(c, n + 1):
                m[r][k] -= f * m[c][k]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][k] * x[k] for k in range(r + 1, n))) / m[r][r]
    return x
