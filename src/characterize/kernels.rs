//! OpenCL C sources of the microbenchmarks (in the spirit of SHOC's `DeviceMemory`,
//! `MaxFlops` and `BusSpeed` benchmarks, Danalis et al., GPGPU-3 2010).
//!
//! Every kernel writes to global memory only under a condition that never holds for the
//! inputs used (`never`), so that the compiler cannot remove the work and the traffic is
//! the intended one. Instruction counts per loop iteration are given in the comments in
//! the units of the emulator's instruction classes (an FMA counts as one `fp32`/`fp64`
//! instruction, `(x ^ m) + i` on integers as two `int` instructions).

/// Kernels for memory throughput, launch overhead, barriers and atomics (fp32 only).
pub const MEMORY: &str = r#"
kernel void empty(global float *o) { }

/* Coalesced global read, grid-stride: work-item g reads float4 elements g, g + G, g + 2G,
   ... of n (G = global size). Consecutive work-items read consecutive 16-B elements. */
kernel void gread_stride(global const float4 *a, global float *o, uint n, float never) {
  size_t g = get_global_id(0), G = get_global_size(0);
  float4 acc = (float4)(0.0f);
  for (size_t i = g; i < n; i += G) acc += a[i];
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == never) o[g] = s;
}

/* Coalesced global write, grid-stride. */
kernel void gwrite_stride(global float4 *a, uint n) {
  size_t g = get_global_id(0), G = get_global_size(0);
  for (size_t i = g; i < n; i += G) a[i] = (float4)((float)i);
}

/* One float4 per work-item (the shape of most application kernels). */
kernel void gread_item(global const float4 *a, global float *o, float never) {
  size_t g = get_global_id(0);
  float4 v = a[g];
  float s = v.x + v.y + v.z + v.w;
  if (s == never) o[g] = s;
}

kernel void gwrite_item(global float4 *a) {
  size_t g = get_global_id(0);
  a[g] = (float4)((float)g);
}

/* Local memory: each work-item owns words lid, lid + L, lid + 2L, lid + 3L of a 4L-word
   array (consecutive lanes -> consecutive banks: no bank conflict). Per iteration 4 loads
   and 4 stores of 4 bytes at fixed offsets (no index arithmetic, which would make the
   kernel ALU-bound on GPUs); volatile keeps every access. */
kernel void lmem(global float *o, uint it, float never, local volatile float *l) {
  size_t li = get_local_id(0), L = get_local_size(0);
  l[li] = (float)li; l[li + L] = 1.0f; l[li + 2 * L] = 2.0f; l[li + 3 * L] = 3.0f;
  float a = 0.0f;
  for (uint i = 0; i < it; i++) {
    a += l[li];         l[li + L] = a;
    a += l[li + 2 * L]; l[li + 3 * L] = a;
    a += l[li + L];     l[li] = a;
    a += l[li + 3 * L]; l[li + 2 * L] = a;
  }
  if (a == never) o[get_global_id(0)] = a;
}

/* Barriers: per iteration 2 barriers, one local store and one local load. */
kernel void bar(global float *o, uint it, float never, local float *l) {
  size_t li = get_local_id(0), ls = get_local_size(0); float a = (float)li;
  for (uint i = 0; i < it; i++) {
    l[li] = a; barrier(CLK_LOCAL_MEM_FENCE);
    a += l[(li + 1) % ls]; barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (a == never) o[get_global_id(0)] = a;
}

/* Atomics: it atomic_add per work-item on its own int (no contention). */
kernel void atom(global int *c, uint it) {
  size_t g = get_global_id(0);
  for (uint i = 0; i < it; i++) atomic_add(&c[g], 1);
}

/* fp32: 8 independent FMA chains, 8 fp32 instructions per iteration. */
kernel void fp32(global float *o, uint it, float never) {
  float a0 = get_global_id(0), a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4,
        a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  float m = 0.999f, c = 0.001f;
  for (uint i = 0; i < it; i++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  float s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if (s == never) o[get_global_id(0)] = s;
}

/* int: 8 independent chains of xor + add, 16 int instructions per iteration (xor and add
   do not fuse into one machine instruction, unlike mul + add into IMAD on NVIDIA GPUs,
   which would count two emulator instructions per issue slot). */
kernel void int32(global uint *o, uint it, float never) {
  uint a0 = get_global_id(0), a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4,
       a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  uint m = it | 0x5bd1e995u;
  for (uint i = 0; i < it; i++) {
    a0 = (a0 ^ m) + i; a1 = (a1 ^ m) + i; a2 = (a2 ^ m) + i; a3 = (a3 ^ m) + i;
    a4 = (a4 ^ m) + i; a5 = (a5 ^ m) + i; a6 = (a6 ^ m) + i; a7 = (a7 ^ m) + i;
  }
  uint s = a0 ^ a1 ^ a2 ^ a3 ^ a4 ^ a5 ^ a6 ^ a7;
  if ((float)s == never) o[get_global_id(0)] = s;
}

/* special: 4 independent sin chains, 4 special instructions per iteration. */
kernel void special(global float *o, uint it, float never) {
  float a0 = get_global_id(0) * 1e-6f, a1 = a0 + .1f, a2 = a0 + .2f, a3 = a0 + .3f;
  for (uint i = 0; i < it; i++) { a0 = sin(a0); a1 = sin(a1); a2 = sin(a2); a3 = sin(a3); }
  float s = a0 + a1 + a2 + a3;
  if (s == never) o[get_global_id(0)] = s;
}

/* conversion: 4 chains of float->int->float, 8 conversions (and 4 int adds) per
   iteration. */
kernel void conv(global float *o, uint it, float never) {
  float f0 = get_global_id(0), f1 = f0 + 1, f2 = f0 + 2, f3 = f0 + 3;
  for (uint i = 0; i < it; i++) {
    int i0 = convert_int(f0), i1 = convert_int(f1), i2 = convert_int(f2), i3 = convert_int(f3);
    f0 = convert_float(i0 + 1); f1 = convert_float(i1 + 1);
    f2 = convert_float(i2 + 1); f3 = convert_float(i3 + 1);
  }
  float s = f0 + f1 + f2 + f3;
  if (s == never) o[get_global_id(0)] = s;
}
"#;

/// The fp64 kernel, built separately and only when the device supports doubles.
pub const FP64: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* fp64: 8 independent FMA chains, 8 fp64 instructions per iteration. */
kernel void fp64(global double *o, uint it, float never) {
  double a0 = get_global_id(0), a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4,
         a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  double m = 0.999, c = 0.001;
  for (uint i = 0; i < it; i++) {
    a0 = fma(a0, m, c); a1 = fma(a1, m, c); a2 = fma(a2, m, c); a3 = fma(a3, m, c);
    a4 = fma(a4, m, c); a5 = fma(a5, m, c); a6 = fma(a6, m, c); a7 = fma(a7, m, c);
  }
  double s = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
  if ((float)s == never) o[get_global_id(0)] = s;
}
"#;

/// One instruction-throughput benchmark: kernel name, profile class, lane instructions of
/// that class per work-item and loop iteration.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstrKernel {
    /// Kernel function name.
    pub kernel: &'static str,
    /// `ClassThroughput` field it measures.
    pub class: &'static str,
    /// Lane instructions of `class` per work-item per loop iteration.
    pub per_iteration: f64,
    /// What the kernel does (for the profile's `sources`).
    pub what: &'static str,
}

/// The instruction-throughput benchmarks (fp64 is run only when supported).
pub const INSTR: &[InstrKernel] = &[
    InstrKernel {
        kernel: "int32",
        class: "int",
        per_iteration: 16.0,
        what: "8 independent chains of 32-bit xor + add per work-item",
    },
    InstrKernel {
        kernel: "fp32",
        class: "fp32",
        per_iteration: 8.0,
        what: "8 independent fp32 fma chains per work-item (an FMA = 1 instruction)",
    },
    InstrKernel {
        kernel: "fp64",
        class: "fp64",
        per_iteration: 8.0,
        what: "8 independent fp64 fma chains per work-item (an FMA = 1 instruction)",
    },
    InstrKernel {
        kernel: "special",
        class: "special",
        per_iteration: 4.0,
        what: "4 independent sin() chains per work-item",
    },
    InstrKernel {
        kernel: "conv",
        class: "conversion",
        per_iteration: 8.0,
        what: "4 chains of convert_int + convert_float per work-item (8 conversions per iteration)",
    },
    InstrKernel {
        kernel: "bar",
        class: "barrier",
        per_iteration: 2.0,
        what:
            "2 barriers + one local store and load per iteration (upper bound on the barrier cost)",
    },
    InstrKernel {
        kernel: "atom",
        class: "atomic",
        per_iteration: 1.0,
        what: "atomic_add on a distinct global int per work-item (no contention)",
    },
];

/// Kernels of the latency and L2 benchmarks (`clprism characterize --only latency,l2`).
pub const LATENCY: &str = r#"
/* Pointer chasing (Saavedra & Smith; Wong et al. ISPASS'10 for GPUs): one work-item
   follows `steps` dependent loads p = next[p] through a random single cycle of slots, one
   slot per 128-byte line, so every load waits for the previous one. */
kernel void chase(global const uint *next, global uint *o, uint steps, uint start) {
  uint p = start;
  for (uint i = 0; i < steps; i++) p = next[p];
  o[0] = p;
}

/* L2 read throughput: `passes` grid-stride passes over n float4 that fit in the L2. Pass
   p starts `shift * p` elements further (modulo n), so that a compute unit reads in each
   pass data that another compute unit read before: its L1 holds none of it. */
kernel void gread_l2(global const float4 *a, global float *o, uint n, uint passes, uint shift,
                     float never) {
  size_t g = get_global_id(0), G = get_global_size(0);
  float4 acc = (float4)(0.0f);
  for (uint p = 0; p < passes; p++) {
    size_t off = ((size_t)p * shift) % n;
    for (size_t i = g; i < n; i += G) {
      size_t j = i + off;
      if (j >= n) j -= n;
      acc += a[j];
    }
  }
  float s = acc.x + acc.y + acc.z + acc.w;
  if (s == never) o[g] = s;
}
"#;
