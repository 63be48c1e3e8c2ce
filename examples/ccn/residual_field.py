#!/usr/bin/python3
"""residual_field.py - how much of the unmodelled acceleration a residual network (ccn-r, diffsim-r) learned:
its linear output r(x) at every sample of the test tosses against the acceleration the model lacks,
  vortex:  f = -a r + b e_z x r, r = (x - cx, y - cy, 0)   (make_tosses.c's field over the mass)
  gravity: f = (0, 0, G_MODEL - G_DATA)                     (the model falls at G_MODEL, the data at G_DATA)
Prints the RMS of f, the RMS of r - f and the fraction explained, 1 - rms(r - f) / rms(f) (1: the field learned;
0: no better than no network; negative: worse). The network's input is physid's state features
(src/step/residual.c): position, the rotation matrix row-major, then the 6 velocities as recorded.

usage (Debian python3 with numpy, scripts/setup.sh): residual_field.py NET.json DATA_DIR FIRST COUNT vortex A B CX CY
       residual_field.py NET.json DATA_DIR FIRST COUNT gravity G_MODEL G_DATA
"""
import json
import sys

import numpy as np


def quat2mat(q):
    w, x, y, z = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])


def forward(net, phi):
    """the network (hidden layers with its activation, the last linear) at the rows of phi"""
    h = phi
    layers = net["layers"]
    for i, layer in enumerate(layers):
        h = h @ np.array(layer["W"]).T + np.array(layer["b"])
        if i + 1 < len(layers):
            h = np.maximum(h, 0) if net["activation"] == "relu" else np.tanh(h)
    return h


def main():
    if len(sys.argv) < 7:
        sys.exit(__doc__)
    net = json.load(open(sys.argv[1]))
    d, first, count, kind = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    p = [float(x) for x in sys.argv[6:]]
    rows = np.vstack([np.loadtxt("%s/toss_%03d.csv" % (d, t), delimiter=",", skiprows=1)
                      for t in range(first, first + count)])
    phi = np.hstack([rows[:, 1:4], np.array([quat2mat(q).ravel() for q in rows[:, 4:8]]), rows[:, 8:14]])
    r = forward(net, phi)[:, :3]
    if kind == "vortex":
        a, b, cx, cy = p
        rx, ry = rows[:, 1] - cx, rows[:, 2] - cy
        f = np.stack([-a * rx - b * ry, -a * ry + b * rx, 0 * rx], axis=1)
    else:
        f = np.zeros_like(r)
        f[:, 2] = p[0] - p[1]
    rms = lambda e: float(np.sqrt(np.mean(np.sum(e * e, axis=1))))
    print("samples %d: rms field %.4g m/s^2, rms(net - field) %.4g, explained %.3f" % (
        len(rows), rms(f), rms(r - f), 1 - rms(r - f) / rms(f)))


if __name__ == "__main__":
    main()
