"""examples/pbd/spring.py's calibration step (issue 17, paper 003 section V-C: the spring's lengths calibrated
before k): the spring length it measures through the binding is the law of cosines of Eq. 31, and its Gauss-Newton
recovers l1, l2 and alpha2 from exact lengths."""
import math
import os
import sys

from conftest import ROOT

sys.path.insert(0, os.path.join(ROOT, "examples", "pbd"))
import spring  # noqa: E402


def law_of_cosines(l1, l2, a2, theta2):
    return math.sqrt(l1 * l1 + l2 * l2 - 2 * l1 * l2 * math.cos(spring.A1 - a2 - theta2))


def test_spring_lengths_are_eq31(tmp_path, monkeypatch):
    # the sites' distance after physid's kinematics at poses over s1's range (the other joints anywhere) equals
    # the law of cosines at the pose file's s1 angle, with no noise
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(spring, "SIGMA_X", 0.0)
    a2, l2 = math.radians(25), 0.07
    truth = tmp_path / "truth.xml"
    truth.write_text(spring.model(4000.0, a2, l2))
    poses, files = [], []
    for i, s1 in enumerate((-2.0, -1.0, 0.0, 0.5, 1.0)):
        q = [0.3 * (-1) ** j for j in range(7)]
        q[1] = s1
        f = tmp_path / f"pose{i}.csv"
        f.write_text("t,q0,q1\n0," + ",".join("%.17g" % x for x in q[:2]) + "\n")
        poses.append(q)
        files.append(str(f))
    got = spring.spring_lengths(str(truth), poses, files)
    for (theta2, x), q in zip(got, poses):
        assert theta2 == q[1]
        assert abs(x - law_of_cosines(spring.L1, l2, a2, theta2)) < 1e-14


def test_calibrate_recovers_the_lengths():
    # exact lengths at 30 angles over s1's range, started 10 % off in the lengths and 20 deg off in alpha2
    l1, l2, a2 = 0.31, 0.055, math.radians(33)
    meas = [(t, law_of_cosines(l1, l2, a2, t)) for t in (-2.1 + 3.1 * i / 29 for i in range(30))]
    c1, c2, ca, rms = spring.calibrate(meas, 1.1 * l1, 0.9 * l2, a2 + math.radians(20))
    assert abs(c1 - l1) < 1e-12 and abs(c2 - l2) < 1e-12 and abs(ca - a2) < 1e-10 and rms < 1e-12
