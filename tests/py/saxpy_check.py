#!/usr/bin/python3
"""pyopencl workload for clprism's CI: two kernels launched several times on the first
OpenCL device, results checked against numpy. Prints `kernels: N` (the number of NDRange
launches it made) and `PASS saxpy_check ...`; exits 1 on a wrong result.

Usage: saxpy_check.py [N=65536] [REPS=3]   (N a multiple of 64)
"""
import sys

import numpy as np
import pyopencl as cl

SRC = r"""
__kernel void saxpy(float a, __global const float *x, __global float *y) {
    size_t i = get_global_id(0);
    y[i] = a * x[i] + y[i];
}
__kernel void square_rows(__global const float *x, __global float *out, uint cols) {
    size_t r = get_global_id(1), c = get_global_id(0);
    float v = x[r * cols + c];
    out[r * cols + c] = v * v;
}
"""


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 65536
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    if n % 64:
        sys.exit("N must be a multiple of 64")
    dev = cl.get_platforms()[0].get_devices()[0]
    print(f"device: {dev.name}", file=sys.stderr)
    ctx = cl.Context([dev])
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    rng = np.random.default_rng(7)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    mf = cl.mem_flags
    dx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    dy = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=y)
    cols = 64
    dsq = cl.Buffer(ctx, mf.WRITE_ONLY, size=x.nbytes)
    launches = 0
    expect = y.copy()
    for _ in range(reps):
        prg.saxpy(q, (n,), (64,), np.float32(0.5), dx, dy)
        expect = np.float32(0.5) * x + expect
        launches += 1
    prg.square_rows(q, (cols, n // cols), (16, 4), dx, dsq, np.uint32(cols))
    launches += 1
    got = np.empty_like(y)
    sq = np.empty_like(x)
    cl.enqueue_copy(q, got, dy)
    cl.enqueue_copy(q, sq, dsq)
    q.finish()
    print(f"kernels: {launches}")
    ok = np.allclose(got, expect, rtol=1e-5, atol=1e-5) and np.array_equal(sq, x * x)
    if not ok:
        bad = np.flatnonzero(~np.isclose(got, expect, rtol=1e-5, atol=1e-5))[:5]
        print(f"FAIL saxpy_check n={n} first mismatches at {bad.tolist()}")
        return 1
    print(f"PASS saxpy_check n={n} reps={reps} checksum={float(got.sum()):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
