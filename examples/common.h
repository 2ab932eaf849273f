/*
 * common.h - shared host-side helpers of the clprism example workload.
 *
 * Every example is a self-checking OpenCL 1.2 host program: it selects a
 * device (CLPRISM_EXAMPLE_DEVICE="P:D", default 0:0), builds its embedded
 * kernel source, runs, checks against a CPU reference and prints
 * "kernels: N" (number of clEnqueueNDRangeKernel calls) and "PASS <name> ...".
 *
 * Exit codes: 0 pass, 1 wrong result or usage error, 2 OpenCL error.
 */
#ifndef CLPRISM_EXAMPLES_COMMON_H
#define CLPRISM_EXAMPLES_COMMON_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/** Exit with code 2 after printing the failing call and its error code. */
#define CL_CHECK(call)                                                        \
    do {                                                                      \
        cl_int ex_err_ = (call);                                              \
        if (ex_err_ != CL_SUCCESS)                                            \
            ex_cl_fail(#call, ex_err_, __FILE__, __LINE__);                   \
    } while (0)

/** Check the errcode_ret of a clCreate* call. */
#define CL_CHECK_ERR(err, what)                                               \
    do {                                                                      \
        if ((err) != CL_SUCCESS)                                              \
            ex_cl_fail((what), (err), __FILE__, __LINE__);                    \
    } while (0)

void ex_cl_fail(const char *call, cl_int err, const char *file, int line);

/** OpenCL objects common to all single-queue examples. */
typedef struct {
    cl_platform_id platform;
    cl_device_id device;
    cl_context context;
    cl_command_queue queue;
    cl_program program;
} ex_cl;

/**
 * Select the device named by CLPRISM_EXAMPLE_DEVICE ("P:D", default "0:0"),
 * print its name to stderr, create a context, an in-order command queue
 * (queue_props, e.g. 0 or CL_QUEUE_PROFILING_ENABLE) and build `source` with
 * `options` (may be NULL). Prints the build log and exits 2 on build failure.
 */
void ex_init(ex_cl *cl, const char *name, const char *source,
             const char *options, cl_command_queue_properties queue_props);

/** Release the program, queue and context created by ex_init. */
void ex_release(ex_cl *cl);

/** Select platform/device only (used by programs that build their own context). */
void ex_select_device(cl_platform_id *platform, cl_device_id *device);

/** Build `source` for `device` in `context`; prints the log on failure. */
cl_program ex_build(cl_context context, cl_device_id device,
                    const char *source, const char *options);

/** Create a kernel, exiting 2 on error. */
cl_kernel ex_kernel(cl_program program, const char *name);

/** Create a buffer, exiting 2 on error. */
cl_mem ex_buffer(cl_context context, cl_mem_flags flags, size_t bytes);

/**
 * clEnqueueNDRangeKernel wrapper: exits 2 on error and counts every call
 * (see ex_kernel_launches). Local size must be given (never NULL).
 */
void ex_launch(cl_command_queue q, cl_kernel k, cl_uint dim,
               const size_t *global, const size_t *local,
               cl_uint n_wait, const cl_event *wait, cl_event *event);

/** Number of clEnqueueNDRangeKernel calls made through ex_launch. */
extern unsigned long ex_kernel_launches;

/** Parsed command line: positional arguments plus the optional --dump FILE. */
typedef struct {
    int npos;
    const char *pos[8];
    const char *dump;
} ex_args;

/** Parse argv; `--dump FILE` may appear anywhere. Exits 1 with `usage` on error. */
void ex_parse_args(ex_args *a, int argc, char **argv, const char *usage);

/** Positional argument i as an unsigned integer, or `def` when absent. Exits 1 if malformed or < min. */
unsigned long ex_arg_ulong(const ex_args *a, int i, unsigned long def,
                           unsigned long min, const char *usage);

/** Append `bytes` bytes at `data` to the dump file (truncated on first call). No-op without --dump. */
void ex_dump(const ex_args *a, const void *data, size_t bytes);

/** Print the usage line and exit 1. */
void ex_usage(const char *usage, const char *why);

/** Deterministic 32-bit LCG (Numerical Recipes constants), fixed seeds per program. */
typedef struct {
    uint32_t s;
} ex_lcg;

uint32_t ex_lcg_next(ex_lcg *g);
/** Uniform float in [lo, hi) from the top 24 bits (exactly representable). */
float ex_lcg_float(ex_lcg *g, float lo, float hi);
/** Uniform integer in [0, n). */
uint32_t ex_lcg_below(ex_lcg *g, uint32_t n);

/** Monotonic wall clock in seconds. */
double ex_now(void);

/** Row/body stride of the CPU reference check: EX_CHECK_STRIDE (default 1 = check all).
 *  Large GPU benchmark sizes check every k-th row only; the PASS line says so. */
size_t ex_check_stride(void);

/** Print "kernels: N" to stdout (the count checked against clprism logs). */
void ex_print_kernels(void);

/** Allocate or exit 1. */
void *ex_malloc(size_t bytes);

#endif
