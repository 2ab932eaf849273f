/* Minimal OpenCL microbenchmarks for a PoCL CPU device profile (in the spirit of SHOC;
 * the full characterizer is `clprism characterize`).
 *
 * Build:  cc -O2 -o /tmp/pocl_microbench profiles/tools/pocl_microbench.c -lOpenCL
 * Run:    POCL_DEVICES=pthread /tmp/pocl_microbench > pthread.json
 *         POCL_DEVICES=basic   /tmp/pocl_microbench > basic.json
 *
 * Uses the first device of the first platform. Kernel times come from profiling events
 * (best of REPS runs, to reduce the effect of other load on a shared machine); launch
 * overhead and copies from wall time. Prints one JSON object: throughputs in units per ns.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5
#define CHECK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static const char *SRC =
"#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
"kernel void empty(global int *o) { }\n"
"/* each work-item streams a contiguous chunk: the pattern a CPU driver runs fastest */\n"
"kernel void gread(global const float4 *a, global float *o, uint n) {\n"
"  size_t g = get_global_id(0), c = n / get_global_size(0); float4 acc = 0;\n"
"  for (size_t i = g * c; i < (g + 1) * c; i++) acc += a[i];\n"
"  o[g] = acc.x + acc.y + acc.z + acc.w; }\n"
"kernel void gwrite(global float4 *a, uint n) {\n"
"  size_t g = get_global_id(0), c = n / get_global_size(0);\n"
"  for (size_t i = g * c; i < (g + 1) * c; i++) a[i] = (float4)(g); }\n"
"kernel void fp32(global float *o, uint it) {\n"
"  float a0=get_global_id(0),a1=a0+1,a2=a0+2,a3=a0+3,a4=a0+4,a5=a0+5,a6=a0+6,a7=a0+7; float m=0.999f,c=0.001f;\n"
"  for (uint i=0;i<it;i++){ a0=fma(a0,m,c);a1=fma(a1,m,c);a2=fma(a2,m,c);a3=fma(a3,m,c);a4=fma(a4,m,c);a5=fma(a5,m,c);a6=fma(a6,m,c);a7=fma(a7,m,c);}\n"
"  o[get_global_id(0)] = a0+a1+a2+a3+a4+a5+a6+a7; }\n"
"kernel void fp64(global double *o, uint it) {\n"
"  double a0=get_global_id(0),a1=a0+1,a2=a0+2,a3=a0+3,a4=a0+4,a5=a0+5,a6=a0+6,a7=a0+7; double m=0.999,c=0.001;\n"
"  for (uint i=0;i<it;i++){ a0=fma(a0,m,c);a1=fma(a1,m,c);a2=fma(a2,m,c);a3=fma(a3,m,c);a4=fma(a4,m,c);a5=fma(a5,m,c);a6=fma(a6,m,c);a7=fma(a7,m,c);}\n"
"  o[get_global_id(0)] = a0+a1+a2+a3+a4+a5+a6+a7; }\n"
"kernel void int32(global uint *o, uint it) {\n"
"  uint a0=get_global_id(0),a1=a0+1,a2=a0+2,a3=a0+3,a4=a0+4,a5=a0+5,a6=a0+6,a7=a0+7; uint m=it|1u;\n"
"  for (uint i=0;i<it;i++){ a0=a0*m+i;a1=a1*m+i;a2=a2*m+i;a3=a3*m+i;a4=a4*m+i;a5=a5*m+i;a6=a6*m+i;a7=a7*m+i;}\n"
"  o[get_global_id(0)] = a0^a1^a2^a3^a4^a5^a6^a7; }\n"
"kernel void special(global float *o, uint it) {\n"
"  float a0=get_global_id(0)*1e-6f,a1=a0+.1f,a2=a0+.2f,a3=a0+.3f;\n"
"  for (uint i=0;i<it;i++){ a0=sin(a0);a1=sin(a1);a2=sin(a2);a3=sin(a3);}\n"
"  o[get_global_id(0)] = a0+a1+a2+a3; }\n"
"kernel void conv(global float *o, uint it) {\n"
"  float f0=get_global_id(0),f1=f0+1,f2=f0+2,f3=f0+3; int i0,i1,i2,i3;\n"
"  for (uint i=0;i<it;i++){ i0=convert_int(f0);i1=convert_int(f1);i2=convert_int(f2);i3=convert_int(f3);\n"
"    f0=convert_float(i0+1);f1=convert_float(i1+1);f2=convert_float(i2+1);f3=convert_float(i3+1);}\n"
"  o[get_global_id(0)] = f0+f1+f2+f3; }\n"
"kernel void bar(global float *o, uint it, local float *l) {\n"
"  size_t li=get_local_id(0), ls=get_local_size(0); float a=li;\n"
"  for (uint i=0;i<it;i++){ l[li]=a; barrier(CLK_LOCAL_MEM_FENCE); a+=l[(li+1)%ls]; barrier(CLK_LOCAL_MEM_FENCE);}\n"
"  o[get_global_id(0)] = a; }\n"
"kernel void atom(global int *c, uint it) {\n"
"  size_t g=get_global_id(0);\n"
"  for (uint i=0;i<it;i++) atomic_add(&c[g], 1); }\n"
"kernel void lmem(global float *o, uint it, local float *l) {\n"
"  size_t li=get_local_id(0), ls=get_local_size(0); float a=0; l[li]=li; barrier(CLK_LOCAL_MEM_FENCE);\n"
"  for (uint i=0;i<it;i++){ a+=l[(li+i)%ls]; l[(li+2*i+1)%ls]=a; }\n"
"  o[get_global_id(0)] = a; }\n";

static cl_context ctx; static cl_command_queue q; static cl_program prog; static cl_device_id dev;

static double now_ns(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e9 + t.tv_nsec; }

/* Best-of-REPS kernel time in ns from profiling events. */
static double run(cl_kernel k, size_t gsz, size_t lsz) {
    double best = 1e300;
    for (int r = 0; r < REPS + 1; r++) {
        cl_event ev; cl_ulong s, e;
        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, &lsz, 0, NULL, &ev));
        CHECK(clWaitForEvents(1, &ev));
        CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof s, &s, NULL));
        CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof e, &e, NULL));
        clReleaseEvent(ev);
        if (r > 0 && (double)(e - s) < best) best = (double)(e - s); /* r == 0: warm-up */
    }
    return best;
}

static cl_kernel K(const char *n) { cl_int e; cl_kernel k = clCreateKernel(prog, n, &e); CHECK(e); return k; }

int main(void) {
    cl_platform_id plat; cl_int e;
    CHECK(clGetPlatformIDs(1, &plat, NULL));
    CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    char name[256], version[256]; cl_uint cus; size_t maxwg;
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof version, version, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cus, &cus, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof maxwg, &maxwg, NULL);
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e); CHECK(e);
    q = clCreateCommandQueue(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &e); CHECK(e);
    prog = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &e); CHECK(e);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[16384]; clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log); return 1;
    }
    const size_t L = 64;                 /* work-group size */
    const size_t G = L * 8 * cus;        /* 8 work-groups per compute unit */
    const size_t NB = 128u << 20;        /* 128 MiB: larger than the caches' share of this VM */
    cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, NB, NULL, &e); CHECK(e);
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (NB / 1024 > G ? NB / 1024 : G) * 8, NULL, &e); CHECK(e);
    void *host = malloc(NB); memset(host, 1, NB);
    CHECK(clEnqueueWriteBuffer(q, big, CL_TRUE, 0, NB, host, 0, NULL, NULL));
    cl_uint n4 = (cl_uint)(NB / 16);

    /* launch overhead: enqueue + finish of an empty 1-work-item kernel, wall time, median-ish (best of 5 batches) */
    cl_kernel ke = K("empty"); CHECK(clSetKernelArg(ke, 0, sizeof out, &out));
    double launch = 1e300; size_t one = 1;
    for (int b = 0; b < 5; b++) {
        double t0 = now_ns();
        for (int i = 0; i < 100; i++) { CHECK(clEnqueueNDRangeKernel(q, ke, 1, NULL, &one, &one, 0, NULL, NULL)); CHECK(clFinish(q)); }
        double t = (now_ns() - t0) / 100; if (t < launch) launch = t;
    }

    cl_kernel kr = K("gread"); clSetKernelArg(kr, 0, sizeof big, &big); clSetKernelArg(kr, 1, sizeof out, &out); clSetKernelArg(kr, 2, sizeof n4, &n4);
    const size_t GM = n4 / 64;           /* 64 float4 = 1 KiB contiguous per work-item */
    double t_read = run(kr, GM, L);
    cl_kernel kw = K("gwrite"); clSetKernelArg(kw, 0, sizeof big, &big); clSetKernelArg(kw, 1, sizeof n4, &n4);
    double t_write = run(kw, GM, L);
    /* one work-group only: a single compute unit busy */
    double t_read1 = run(kr, L, L);

    cl_uint it = 4096;
    double ops[8];
    const char *names[] = {"fp32", "fp64", "int32", "special", "conv"};
    double per_iter[] = {8, 8, 16, 4, 8}; /* lane instructions per loop iteration (int32: mul+add x 8; conv: 2 x 4) */
    cl_uint iters[] = {4096, 2048, 4096, 256, 2048};
    for (int i = 0; i < 5; i++) {
        cl_kernel k = K(names[i]); clSetKernelArg(k, 0, sizeof out, &out); clSetKernelArg(k, 1, sizeof iters[i], &iters[i]);
        double t = run(k, G, L);
        ops[i] = (double)G * iters[i] * per_iter[i] / t;
        clReleaseKernel(k);
    }
    cl_uint itb = 256;
    cl_kernel kb = K("bar"); clSetKernelArg(kb, 0, sizeof out, &out); clSetKernelArg(kb, 1, sizeof itb, &itb); clSetKernelArg(kb, 2, L * 4, NULL);
    double t_bar = run(kb, G, L);
    double bar_per_ns = (double)G * itb * 2 / t_bar;      /* lane barrier instructions / ns (upper bound on cost: includes the local accesses) */
    cl_mem cnt = clCreateBuffer(ctx, CL_MEM_READ_WRITE, G * 4, NULL, &e); CHECK(e);
    cl_kernel ka = K("atom"); clSetKernelArg(ka, 0, sizeof cnt, &cnt); cl_uint ita = 1024; clSetKernelArg(ka, 1, sizeof ita, &ita);
    double t_atom = run(ka, G, L);
    double atom_per_ns = (double)G * ita / t_atom;
    cl_uint itl = 4096;
    cl_kernel kl = K("lmem"); clSetKernelArg(kl, 0, sizeof out, &out); clSetKernelArg(kl, 1, sizeof itl, &itl); clSetKernelArg(kl, 2, L * 4, NULL);
    double t_l = run(kl, G, L);
    double lbytes_per_ns = (double)G * itl * 8 / t_l;     /* one 4-B load + one 4-B store per iteration */

    /* host <-> device, 128 MiB blocking copies, best of 5 */
    double h2d = 1e300, d2h = 1e300;
    for (int r = 0; r < 5; r++) {
        double t0 = now_ns(); CHECK(clEnqueueWriteBuffer(q, big, CL_TRUE, 0, NB, host, 0, NULL, NULL)); double t = now_ns() - t0; if (t < h2d) h2d = t;
        t0 = now_ns(); CHECK(clEnqueueReadBuffer(q, big, CL_TRUE, 0, NB, host, 0, NULL, NULL)); t = now_ns() - t0; if (t < d2h) d2h = t;
    }
    printf("{\n  \"device_name\": \"%s\",\n  \"device_version\": \"%s\",\n  \"max_compute_units\": %u,\n  \"max_work_group_size\": %zu,\n", name, version, cus, maxwg);
    printf("  \"work_group_size\": %zu,\n  \"global_size\": %zu,\n", L, G);
    printf("  \"launch_overhead_ns\": %.1f,\n", launch);
    printf("  \"global_read_bytes_per_ns\": %.3f,\n  \"global_read_one_wg_bytes_per_ns\": %.3f,\n  \"global_write_bytes_per_ns\": %.3f,\n", NB / t_read, NB / t_read1, NB / t_write);
    printf("  \"fp32_per_ns\": %.3f,\n  \"fp64_per_ns\": %.3f,\n  \"int_per_ns\": %.3f,\n  \"special_per_ns\": %.4f,\n  \"conversion_per_ns\": %.3f,\n", ops[0], ops[1], ops[2], ops[3], ops[4]);
    printf("  \"barrier_per_ns\": %.4f,\n  \"atomic_per_ns\": %.4f,\n  \"local_bytes_per_ns\": %.3f,\n", bar_per_ns, atom_per_ns, lbytes_per_ns);
    printf("  \"host_to_device_bytes_per_ns\": %.3f,\n  \"device_to_host_bytes_per_ns\": %.3f\n}\n", NB / h2d, NB / d2h);
    (void)it;
    return 0;
}
