"""profile_binding.py - where the time of one physid.torch step call goes (docs/performance.md, issue 18): the cube
under penalty contact (bench/torch_models.py), one forward + backward of loss = next state . a fixed random
vector, timed as this process's CPU time, medians over many calls (warm caches, no torch step between):

- "binding": the whole call; "floor": the same loss and backward around a trivial step (q * theta, v); "empty
  Function": a torch.autograd.Function whose forward and backward only make new tensors (its dispatch);
- "inside forward" / "inside backward": the time spent inside physid.torch's one-row Function (_OneFn), C calls
  included (the C calls alone: bench/bench_torch.c's "C batch calls", scripts/bench_torch.sh);
- the unit costs the binding is made of (a new tensor, a ctypes memmove, a view split, the tensor checks).

usage: PHYSID_LIBRARY=build/libphysid.so /usr/bin/python3 bench/profile_binding.py [CALLS]
Timing is information only.
"""
import ctypes
import os
import sys
import tempfile
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import bench_torch as bt  # noqa: E402
import physid.torch as pt  # noqa: E402

T = torch.float64


def med(fn, n):
    """median CPU time of fn in microseconds (after n // 10 warm-up calls)"""
    for _ in range(n // 10):
        fn()
    ts = np.empty(n)
    for i in range(n):
        t0 = time.process_time_ns()
        fn()
        ts[i] = time.process_time_ns() - t0
    return 1e-3 * float(np.median(ts))


class Empty(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, v, th):
        return torch.empty(len(q), dtype=T), torch.empty(len(v), dtype=T)

    @staticmethod
    def backward(ctx, gq, gv):
        return torch.empty(len(gq), dtype=T), torch.empty(len(gv), dtype=T), torch.empty(1, dtype=T)


def inside(fn, n):
    """median CPU time spent inside _OneFn.forward and _OneFn.backward during n calls of fn"""
    spent = {"forward": [], "backward": []}
    saved = {k: getattr(pt._OneFn, k) for k in spent}

    def wrap(k):
        def timed(*a):
            t0 = time.process_time_ns()
            r = saved[k](*a)
            spent[k].append(time.process_time_ns() - t0)
            return r
        return staticmethod(timed)
    for k in spent:
        setattr(pt._OneFn, k, wrap(k))
    try:
        for _ in range(n):
            fn()
    finally:
        for k, f in saved.items():
            setattr(pt._OneFn, k, staticmethod(f))
    return {k: 1e-3 * float(np.median(v[n // 10:])) for k, v in spent.items()}


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    torch.set_num_threads(1)
    name, m, _, start, spec, theta0 = next(bt.scenes(tempfile.mkdtemp()))
    step = pt.Step(m, [spec])
    routes = {"binding": lambda q, v, u, th: step(q, v, None, th), "floor": lambda q, v, u, th: (q * th, v * 1.0),
              "empty Function": lambda q, v, u, th: Empty.apply(q, v, th)}
    for k, f in routes.items():
        print(f"{k:18s} {med(bt.fwd_bwd(f, start, theta0), n):8.1f} us")
    for k, t in inside(bt.fwd_bwd(routes["binding"], start, theta0), n).items():
        print(f"inside {k:11s} {t:8.1f} us")
    ns = m.nq + m.nv
    a = ctypes.addressof((ctypes.c_double * ns)())
    x = torch.zeros(ns, dtype=T)
    units = {"torch.empty(n)": lambda: torch.empty(ns, dtype=T),
             "ctypes.memmove": lambda: ctypes.memmove(a, x.data_ptr(), 8 * ns),
             "Tensor.split(2)": lambda: x.split((m.nq, m.nv)), "t.device.type": lambda: x.device.type == "cpu",
             "t.is_cpu": lambda: x.is_cpu, "t.data_ptr()": lambda: x.data_ptr()}
    for k, f in units.items():
        print(f"{k:18s} {med(f, 4 * n):8.2f} us")


if __name__ == "__main__":
    main()
