#!/usr/bin/python3
"""pyopencl workload for clprism's CI: two kernels launched several times on the first
OpenCL device, results checked against numpy. Prints `kernels: N` (the number of NDRange
launches it made) and `PASS saxpy_check ...`; exits 1 on a wrong result.

Usage: saxpy_check.py [N=65536] [REPS=3] [--dump FILE]   (N a multiple of 64)
The device is `CLPRISM_EXAMPLE_DEVICE` ("P:D", default 0:0), as for examples/; `--dump`
writes both results' bytes.
"""
import os
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
    args = sys.argv[1:]
    dump = None
    if "--dump" in args:
        i = args.index("--dump")
        dump = args[i + 1]
        del args[i : i + 2]
    n = int(args[0]) if len(args) > 0 else 65536
    reps = int(args[1]) if len(args) > 1 else 3
    if n % 64:
        sys.exit("N must be a multiple of 64")
    p, d = (int(v) for v in os.environ.get("CLPRISM_EXAMPLE_DEVICE", "0:0").split(":"))
    dev = cl.get_platforms()[p].get_devices()[d]
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
    if dump:
        with open(dump, "wb") as f:
            f.write(got.tobytes() + sq.tobytes())
    ok = np.allclose(got, expect, rtol=1e-5, atol=1e-5) and np.array_equal(sq, x * x)
    if not ok:
        bad = np.flatnonzero(~np.isclose(got, expect, rtol=1e-5, atol=1e-5))[:5]
        print(f"FAIL saxpy_check n={n} first mismatches at {bad.tolist()}")
        return 1
    print(f"PASS saxpy_check n={n} reps={reps} checksum={float(got.sum()):.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
