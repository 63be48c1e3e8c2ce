"""Fit the real cube's friction and restitution with a PyTorch optimizer through physid.torch (issue 18 item 3).

The one-step loss over the bundled tosses (data/cube_toss, 148 Hz, one step per sample): every recorded state
x_k is stepped once by physid (one batch of all samples), and the predicted position after the step is compared
with the recorded x_{k+1} (metres). theta = (friction:cube, restitution:cube) is a tensor input of the step; its
gradient comes from physid's analytic VJP (phys_step_param_vjp), and Adam moves it.

    PATH=$PWD/build:$PATH PYTHONPATH=python /usr/bin/python3 examples/torch_cube/fit.py [ITERS] [NTOSS]
"""
import glob
import os
import sys

import numpy as np
import torch

import physid
import physid.torch as pt

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def load_pairs(ntoss):
    """(x_k, x_{k+1}) of every sample of the first ntoss tosses: qpos (N, 7), qvel (N, 6), next qpos (N, 7)."""
    q, v, q1 = [], [], []
    for f in sorted(glob.glob(os.path.join(ROOT, "data", "cube_toss", "toss_*.csv")))[:ntoss]:
        a = np.loadtxt(f, delimiter=",", skiprows=1)
        q.append(a[:-1, 1:8])
        v.append(a[:-1, 8:14])
        q1.append(a[1:, 1:8])
    return (torch.tensor(np.concatenate(x)) for x in (q, v, q1))


def main(iters=40, ntoss=12):
    """Adam on theta for iters iterations over the first ntoss tosses; returns theta and the loss per iteration."""
    m = physid.load(os.path.join(ROOT, "models", "cube.xml"))
    step = pt.Step(m, ["friction:cube", "restitution:cube"])
    q, v, q1 = load_pairs(ntoss)
    lo, hi = (torch.tensor(b) for b in step.params.bounds())
    theta = torch.tensor([0.4, 0.4], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([theta], lr=0.02)
    losses = []
    for it in range(iters + 1):
        opt.zero_grad()
        qp, _ = step(q, v, None, theta)
        loss = 0.5 * ((qp[:, :3] - q1[:, :3]) ** 2).sum() * 1e6   # mm^2
        loss.backward()
        losses.append(loss.item())
        if it % 10 == 0 or it == iters:
            print(f"iter {it:3d}: loss {loss.item():.6g} mm^2, friction {theta[0].item():.4f}, "
                  f"restitution {theta[1].item():.4f}")
        if it < iters:
            opt.step()
            with torch.no_grad():
                theta.copy_(torch.maximum(torch.minimum(theta, hi), lo))
    return theta.detach().numpy(), losses


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
