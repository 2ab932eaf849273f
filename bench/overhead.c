/*
 * overhead - micro-benchmark of OpenCL API-call overhead, run with and
 * without an interposer (clprism) to measure what the interposer adds per
 * call (cf. the fixed launch overhead of Boyer ch. 3 and Wang s V).
 *
 * usage: overhead [scale=1.0]
 *   Loop counts are multiplied by `scale`:
 *     clGetPlatformInfo(CL_PLATFORM_VERSION)   N = 1e6
 *     clSetKernelArg(uint)                     N = 1e6
 *     clEnqueueNDRangeKernel(empty, global=1, local=1)
 *                                              N = 20000, clFinish every
 *                                              1000 launches and at the end
 *   Each loop runs once untimed at 1/10 of its count as a warm-up (not
 *   counted in ns/call, but counted in "kernels:").
 *   Output (stdout), machine readable:
 *     overhead getplatforminfo_ns=X setkernelarg_ns=Y enqueue_ns=Z ...
 *       (enqueue_event_ns: each launch asks for an event; enqueue_profiled_ns:
 *       the same on a queue with CL_QUEUE_PROFILING_ENABLE;
 *       enqueue_profiled_noevent_ns: that queue, no event)
 *     kernels: N
 *   Device: CLPRISM_EXAMPLE_DEVICE="P:D" (default 0:0).
 */
#include "common.h"
#include "overhead_cl.h"

#include <string.h>

static const char *USAGE = "overhead [scale=1.0]";

static void loop_platform(cl_platform_id p, long n)
{
    char buf[256];
    for (long i = 0; i < n; i++)
        CL_CHECK(clGetPlatformInfo(p, CL_PLATFORM_VERSION, sizeof buf, buf,
                                   NULL));
}

static void loop_setarg(cl_kernel k, long n)
{
    for (long i = 0; i < n; i++) {
        cl_uint v = (cl_uint)i;
        CL_CHECK(clSetKernelArg(k, 1, sizeof v, &v));
    }
}

static void loop_enqueue(cl_command_queue q, cl_kernel k, long n)
{
    const size_t one = 1;
    for (long i = 0; i < n; i++) {
        ex_launch(q, k, 1, &one, &one, 0, NULL, NULL);
        if ((i + 1) % 1000 == 0)
            CL_CHECK(clFinish(q));
    }
    CL_CHECK(clFinish(q));
}

/* The same launches, each asking the driver for an event that is released at once: what the
 * driver charges for an event per launch (an interposer that times every launch needs one). */
static void loop_enqueue_event(cl_command_queue q, cl_kernel k, long n)
{
    const size_t one = 1;
    for (long i = 0; i < n; i++) {
        cl_event ev;
        ex_launch(q, k, 1, &one, &one, 0, NULL, &ev);
        CL_CHECK(clReleaseEvent(ev));
        if ((i + 1) % 1000 == 0)
            CL_CHECK(clFinish(q));
    }
    CL_CHECK(clFinish(q));
}

int main(int argc, char **argv)
{
    double scale = 1.0;
    if (argc > 2)
        ex_usage(USAGE, "too many arguments");
    if (argc == 2) {
        char *end;
        scale = strtod(argv[1], &end);
        if (*end || !(scale > 0))
            ex_usage(USAGE, "scale must be a positive number");
    }
    const long n_info = (long)(1e6 * scale), n_arg = (long)(1e6 * scale),
               n_enq = (long)(20000 * scale);

    ex_cl cl;
    ex_init(&cl, "overhead", kernel_source, NULL, 0);
    cl_kernel k = ex_kernel(cl.program, "empty");
    cl_mem buf = ex_buffer(cl.context, CL_MEM_READ_WRITE, 64);
    cl_uint zero = 0;
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
    CL_CHECK(clSetKernelArg(k, 1, sizeof zero, &zero));

    loop_platform(cl.platform, n_info / 10 + 1);
    double t0 = ex_now();
    loop_platform(cl.platform, n_info);
    double t1 = ex_now();

    loop_setarg(k, n_arg / 10 + 1);
    double t2 = ex_now();
    loop_setarg(k, n_arg);
    double t3 = ex_now();

    loop_enqueue(cl.queue, k, n_enq / 10 + 1);
    double t4 = ex_now();
    loop_enqueue(cl.queue, k, n_enq);
    double t5 = ex_now();
    loop_enqueue_event(cl.queue, k, n_enq / 10 + 1);
    double t6 = ex_now();
    loop_enqueue_event(cl.queue, k, n_enq);
    double t7 = ex_now();

    /* The same on a queue created with CL_QUEUE_PROFILING_ENABLE: what the driver charges
     * for profiling (clprism enables it to time every launch). */
    cl_int perr;
    cl_command_queue pq = clCreateCommandQueue(cl.context, cl.device, CL_QUEUE_PROFILING_ENABLE, &perr);
    CL_CHECK(perr);
    loop_enqueue_event(pq, k, n_enq / 10 + 1);
    double t8 = ex_now();
    loop_enqueue_event(pq, k, n_enq);
    double t9 = ex_now();
    /* ... and without asking for an event: what profiling costs by itself. */
    loop_enqueue(pq, k, n_enq / 10 + 1);
    double t10 = ex_now();
    loop_enqueue(pq, k, n_enq);
    double t11 = ex_now();
    CL_CHECK(clReleaseCommandQueue(pq));

    CL_CHECK(clReleaseMemObject(buf));
    CL_CHECK(clReleaseKernel(k));
    ex_release(&cl);

    printf("overhead getplatforminfo_ns=%.1f setkernelarg_ns=%.1f "
           "enqueue_ns=%.1f enqueue_event_ns=%.1f enqueue_profiled_ns=%.1f "
           "enqueue_profiled_noevent_ns=%.1f n_info=%ld n_setarg=%ld n_enqueue=%ld\n",
           (t1 - t0) * 1e9 / (double)(n_info ? n_info : 1),
           (t3 - t2) * 1e9 / (double)(n_arg ? n_arg : 1),
           (t5 - t4) * 1e9 / (double)(n_enq ? n_enq : 1),
           (t7 - t6) * 1e9 / (double)(n_enq ? n_enq : 1),
           (t9 - t8) * 1e9 / (double)(n_enq ? n_enq : 1),
           (t11 - t10) * 1e9 / (double)(n_enq ? n_enq : 1), n_info, n_arg,
           n_enq);
    ex_print_kernels();
    return 0;
}
