/* What one driver call of a split launch costs on the calling thread, and why (issue 31).
 * A 4-GPU split stencil launch's debug lines (results/session24-2026-11-28) show 17-27 us per
 * chunk clEnqueueNDRangeKernel and 17-25 us per halo read or write, while nv_issue's tiny
 * kernel on a plain queue took 4.4 us with its flush. Each row adds one of the differences,
 * on device 0 of platform P, the queue idle before each repetition (clFinish), medians in us
 * of the call alone:
 *   A  tiny 1-D kernel, plain queue, no event (nv_issue's (1) without the flush)
 *   B  A on a profiling queue (clprism's queues have CL_QUEUE_PROFILING_ENABLE)
 *   C  B returning an event
 *   D  C, then clSetEventCallback on it (the row is the enqueue; D' the callback call)
 *   E  a 2-D kernel of 16384 x 4096 work-items with a global offset (a chunk of a 16384^2
 *      stencil on 4 devices), profiling queue, event
 *   F  E with a wait list of one event (a halo write's, same queue)
 *   G  E while another thread polls clGetEventInfo on a pending event of device 1 in a
 *      yield loop (clprism's launch loop and start-barrier wait poll like this)
 *   H  E while another thread enqueues and flushes a marker on device 1's queue in a loop
 *      (the app's thread, or a second issue thread)
 *   I  E while another thread blocks in clFinish on device 1's queue, held by a barrier
 *      behind a user event (an app waiting for a launch clprism's launch thread runs)
 *   J  as I, the thread blocked in clWaitForEvents on that barrier's event
 *   K  as I, the blocked queue on device 0 (same device and context, another queue)
 *   R  clEnqueueReadBuffer of 64 KiB, non-blocking, into malloc'd memory
 *   Rp the same into pinned memory (CL_MEM_ALLOC_HOST_PTR, mapped)
 *   W  clEnqueueWriteBuffer of 64 KiB, non-blocking, from malloc'd memory, event out
 *   Wp the same from pinned memory
 * usage: nv_enqueue [platform=0] [repetitions=200]
 * build: gcc -O2 -o nv_enqueue bench/nv_enqueue.c -lOpenCL -lpthread */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }

static const char *src =
    "__kernel void tiny(__global int *o) { o[get_global_id(0)] += 1; }\n"
    "__kernel void slab(__global float *a, __global const float *b, int n, float c) {\n"
    "  size_t i = get_global_id(1), j = get_global_id(0);\n"
    "  if (i < 4 && j < (size_t)n) a[i * n + j] = c * b[i * n + j]; }\n";

struct dev { cl_context ctx; cl_command_queue q, qp; cl_kernel tiny, slab; cl_mem buf, a, b; };
static struct dev D[2];
static cl_uint nd;

static void open_dev(cl_device_id id, struct dev *d) {
    cl_int e;
    d->ctx = clCreateContext(NULL, 1, &id, NULL, NULL, &e); CK(e);
    d->q = clCreateCommandQueue(d->ctx, id, 0, &e); CK(e);
    d->qp = clCreateCommandQueue(d->ctx, id, CL_QUEUE_PROFILING_ENABLE, &e); CK(e);
    cl_program p = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &e); CK(e);
    CK(clBuildProgram(p, 1, &id, "", NULL, NULL));
    d->tiny = clCreateKernel(p, "tiny", &e); CK(e);
    d->slab = clCreateKernel(p, "slab", &e); CK(e);
    d->buf = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 4096 * sizeof(int), NULL, &e); CK(e);
    d->a = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &e); CK(e);
    d->b = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 1 << 20, NULL, &e); CK(e);
    CK(clSetKernelArg(d->tiny, 0, sizeof d->buf, &d->buf));
    int n = 16384; float c = 0.5f;
    CK(clSetKernelArg(d->slab, 0, sizeof d->a, &d->a));
    CK(clSetKernelArg(d->slab, 1, sizeof d->b, &d->b));
    CK(clSetKernelArg(d->slab, 2, sizeof n, &n));
    CK(clSetKernelArg(d->slab, 3, sizeof c, &c));
}

static void CL_CALLBACK on_done(cl_event e, cl_int s, void *u) { (void)e; (void)s; (void)u; }

static cl_int enqueue_slab(struct dev *d, cl_uint nwait, const cl_event *wait, cl_event *ev) {
    size_t off[2] = {0, 4096}, g[2] = {16384, 4096}, l[2] = {256, 1};
    return clEnqueueNDRangeKernel(d->qp, d->slab, 2, off, g, l, nwait, wait, ev);
}

/* the disturbing thread of G and H */
static volatile int stop;
static int disturb_kind;
static void *disturb(void *arg) {
    (void)arg;
    struct dev *d = &D[1];
    if (disturb_kind == 0) {
        cl_int e;
        cl_event gate = clCreateUserEvent(d->ctx, &e); CK(e);
        cl_event pending;
        CK(clEnqueueMarkerWithWaitList(d->q, 1, &gate, &pending));
        CK(clFlush(d->q));
        while (!stop) {
            cl_int s;
            CK(clGetEventInfo(pending, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
            sched_yield();
        }
        CK(clSetUserEventStatus(gate, CL_COMPLETE));
        CK(clFinish(d->q));
        clReleaseEvent(pending); clReleaseEvent(gate);
    } else {
        int n = 0;
        while (!stop) {
            cl_event m;
            CK(clEnqueueMarkerWithWaitList(d->q, 0, NULL, &m));
            CK(clFlush(d->q));
            clReleaseEvent(m);
            if (++n % 64 == 0) CK(clFinish(d->q));
        }
        CK(clFinish(d->q));
    }
    return NULL;
}

/* the blocked thread of I, J and K: waits on a barrier held by a user event */
static cl_command_queue blocked_q;
static cl_event blocked_ev;
static int blocked_wait;
static void *blocked(void *arg) {
    (void)arg;
    if (blocked_wait) CK(clWaitForEvents(1, &blocked_ev));
    else CK(clFinish(blocked_q));
    return NULL;
}

static int reps;
static double *v;

static void row(const char *name, const char *what, double x) { printf("%-3s %-62s %8.1f\n", name, what, x); }

static double measure_slab(int nwait) {
    for (int r = 0; r < reps; r++) {
        cl_event w = NULL, ev;
        if (nwait) { static float h[16]; CK(clEnqueueWriteBuffer(D[0].qp, D[0].b, CL_FALSE, 0, sizeof h, h, 0, NULL, &w)); }
        double t = now_us();
        CK(enqueue_slab(&D[0], nwait, nwait ? &w : NULL, &ev));
        v[r] = now_us() - t;
        CK(clFlush(D[0].qp)); CK(clFinish(D[0].qp));
        clReleaseEvent(ev); if (w) clReleaseEvent(w);
    }
    return median(v, reps);
}

int main(int argc, char **argv) {
    cl_uint pi = argc > 1 ? (cl_uint)atoi(argv[1]) : 0;
    reps = argc > 2 ? atoi(argv[2]) : 200;
    setvbuf(stdout, NULL, _IONBF, 0);
    cl_platform_id ps[8]; cl_uint np;
    CK(clGetPlatformIDs(8, ps, &np));
    if (pi >= np) { fprintf(stderr, "platform %u of %u\n", pi, np); return 2; }
    cl_device_id ids[2];
    CK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 2, ids, &nd));
    if (nd < 2) ids[1] = ids[0];
    char name[256];
    CK(clGetDeviceInfo(ids[0], CL_DEVICE_NAME, sizeof name, name, NULL));
    printf("platform %u: %s, %d repetitions, medians in us of the call alone\n", pi, name, reps);
    open_dev(ids[0], &D[0]);
    open_dev(ids[1], &D[1]);
    v = malloc(sizeof(double) * reps);
    size_t g = 4096, l = 64;
    CK(clEnqueueNDRangeKernel(D[0].q, D[0].tiny, 1, NULL, &g, &l, 0, NULL, NULL)); CK(clFinish(D[0].q));
    CK(enqueue_slab(&D[0], 0, NULL, NULL)); CK(clFinish(D[0].qp));

    for (int r = 0; r < reps; r++) {
        double t = now_us();
        CK(clEnqueueNDRangeKernel(D[0].q, D[0].tiny, 1, NULL, &g, &l, 0, NULL, NULL));
        v[r] = now_us() - t; CK(clFinish(D[0].q));
    }
    row("A", "tiny kernel, plain queue, no event", median(v, reps));
    for (int r = 0; r < reps; r++) {
        double t = now_us();
        CK(clEnqueueNDRangeKernel(D[0].qp, D[0].tiny, 1, NULL, &g, &l, 0, NULL, NULL));
        v[r] = now_us() - t; CK(clFinish(D[0].qp));
    }
    row("B", "tiny kernel, profiling queue, no event", median(v, reps));
    for (int r = 0; r < reps; r++) {
        cl_event ev; double t = now_us();
        CK(clEnqueueNDRangeKernel(D[0].qp, D[0].tiny, 1, NULL, &g, &l, 0, NULL, &ev));
        v[r] = now_us() - t; CK(clFinish(D[0].qp)); clReleaseEvent(ev);
    }
    row("C", "tiny kernel, profiling queue, event", median(v, reps));
    double *cb = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        cl_event ev; double t = now_us();
        CK(clEnqueueNDRangeKernel(D[0].qp, D[0].tiny, 1, NULL, &g, &l, 0, NULL, &ev));
        double t1 = now_us();
        CK(clSetEventCallback(ev, CL_COMPLETE, on_done, NULL));
        cb[r] = now_us() - t1; v[r] = t1 - t;
        CK(clFinish(D[0].qp)); clReleaseEvent(ev);
    }
    row("D", "C, then a completion callback: the enqueue", median(v, reps));
    row("D'", "  the clSetEventCallback call", median(cb, reps));
    row("E", "2-D slab 16384 x 4096 with offset, profiling queue, event", measure_slab(0));
    row("F", "E with a wait list of one write's event (same queue)", measure_slab(1));
    for (disturb_kind = 0; disturb_kind < 2; disturb_kind++) {
        pthread_t th; stop = 0;
        pthread_create(&th, NULL, disturb, NULL);
        struct timespec pause = {0, 5000000}; nanosleep(&pause, NULL);
        double x = measure_slab(0);
        stop = 1; pthread_join(th, NULL);
        row(disturb_kind ? "H" : "G", disturb_kind ? "E while a thread enqueues+flushes markers on device 1"
                                                   : "E while a thread polls an event of device 1 (yield loop)", x);
    }
    for (int k = 0; k < 3; k++) {
        struct dev *d = k == 2 ? &D[0] : &D[1];
        cl_int e;
        cl_event gate = clCreateUserEvent(d->ctx, &e); CK(e);
        blocked_q = d->q;
        blocked_wait = k == 1;
        CK(clEnqueueBarrierWithWaitList(d->q, 1, &gate, &blocked_ev));
        CK(clFlush(d->q));
        pthread_t th;
        pthread_create(&th, NULL, blocked, NULL);
        struct timespec pause = {0, 5000000}; nanosleep(&pause, NULL);
        double x = measure_slab(0);
        CK(clSetUserEventStatus(gate, CL_COMPLETE));
        pthread_join(th, NULL);
        clReleaseEvent(blocked_ev); clReleaseEvent(gate);
        const char *what[3] = {"E while a thread blocks in clFinish (device 1, gated barrier)",
                               "E while a thread blocks in clWaitForEvents (device 1, gated)",
                               "E while a thread blocks in clFinish (device 0, other queue)"};
        row(k == 0 ? "I" : k == 1 ? "J" : "K", what[k], x);
    }
    /* reads and writes of 64 KiB */
    size_t n = 65536;
    char *heap = malloc(n);
    memset(heap, 1, n);
    cl_int e;
    cl_mem pin = clCreateBuffer(D[0].ctx, CL_MEM_ALLOC_HOST_PTR, n, NULL, &e); CK(e);
    char *pinned = clEnqueueMapBuffer(D[0].qp, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, n, 0, NULL, NULL, &e); CK(e);
    for (int k = 0; k < 4; k++) {
        char *host = (k & 1) ? pinned : heap;
        int write = k >= 2;
        for (int r = 0; r < reps; r++) {
            cl_event ev; double t = now_us();
            if (write) CK(clEnqueueWriteBuffer(D[0].qp, D[0].a, CL_FALSE, 4096, n, host, 0, NULL, &ev));
            else CK(clEnqueueReadBuffer(D[0].qp, D[0].a, CL_FALSE, 4096, n, host, 0, NULL, &ev));
            v[r] = now_us() - t; CK(clFinish(D[0].qp)); clReleaseEvent(ev);
        }
        const char *names[4] = {"R", "Rp", "W", "Wp"};
        const char *what[4] = {"read 64 KiB, non-blocking, into malloc'd memory, event",
                               "read 64 KiB, non-blocking, into pinned memory, event",
                               "write 64 KiB, non-blocking, from malloc'd memory, event",
                               "write 64 KiB, non-blocking, from pinned memory, event"};
        row(names[k], what[k], median(v, reps));
    }
    free(v); free(cb); free(heap);
    return 0;
}
