/* What a balanced launch's host side costs on a driver, per call (issue 31; the next steps
 * named in results/session23-2026-11-28/README.md). Every device of platform P gets its own
 * context and in-order queue, as clprism's balance devices do. Medians over R repetitions,
 * microseconds, wall clock on the calling thread(s).
 *
 *   (1) enqueue+flush of a tiny kernel, one device, one thread (the cost of one call);
 *   (2) the same on every device, one after the other from one thread (what the launch
 *       thread does per split launch: N calls in a row), time until the last returned;
 *   (3) the same from one thread per device at once (CLPRISM_BALANCE_ISSUE=parallel), time
 *       until the last returned: near (1) when the driver lets contexts issue in parallel,
 *       near (2) when it serialises them;
 *   (4) a barrier gated by a user event on device 0's queue; another thread blocks in
 *       clFinish; the user event is set: time from clSetUserEventStatus to clFinish's return
 *       (what an app that waits after each launch sees after clprism's launch thread ends the
 *       launch, exec::pipeline's end barrier);
 *   (5) as (4) with clWaitForEvents on the barrier's event instead of clFinish;
 *   (6) a tiny kernel's enqueue to clFinish's return, the baseline of (4).
 *
 * PoCL 3.1's `basic` device never completes (4): it does not hold a barrier behind a user
 * event (results/pocl-user-event), and clprism runs such devices synchronously.
 * usage: nv_issue [platform=0] [repetitions=200]
 * build: gcc -O2 -o nv_issue bench/nv_issue.c -lOpenCL -lpthread */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)
#define MAXD 16

static double now_us(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1e6 + t.tv_nsec * 1e-3; }
static int cmp(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static double median(double *v, int n) { qsort(v, n, sizeof *v, cmp); return v[n / 2]; }

static const char *src = "__kernel void tiny(__global int *o) { o[get_global_id(0)] += 1; }";
struct dev { cl_context ctx; cl_command_queue q; cl_kernel k; cl_mem buf; };
static struct dev devs[MAXD];
static cl_uint nd;

static void open_dev(cl_device_id id, struct dev *d) {
    cl_int e;
    d->ctx = clCreateContext(NULL, 1, &id, NULL, NULL, &e); CK(e);
    d->q = clCreateCommandQueue(d->ctx, id, 0, &e); CK(e);
    cl_program p = clCreateProgramWithSource(d->ctx, 1, &src, NULL, &e); CK(e);
    CK(clBuildProgram(p, 1, &id, "", NULL, NULL));
    d->k = clCreateKernel(p, "tiny", &e); CK(e);
    d->buf = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 4096 * sizeof(int), NULL, &e); CK(e);
    CK(clSetKernelArg(d->k, 0, sizeof d->buf, &d->buf));
}

static void enqueue_tiny(struct dev *d) {
    size_t g = 4096, l = 64;
    CK(clEnqueueNDRangeKernel(d->q, d->k, 1, NULL, &g, &l, 0, NULL, NULL));
    CK(clFlush(d->q));
}

/* (3): each thread waits for the go flag, enqueues once, notes when it returned */
static volatile int go;
static double returned[MAXD];
static void *issue_one(void *arg) {
    int i = (int)(size_t)arg;
    while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE)) {}
    enqueue_tiny(&devs[i]);
    returned[i] = now_us();
    return NULL;
}

/* (4)/(5): a thread blocked in clFinish (or clWaitForEvents) notes when it returned */
static cl_event barrier_ev;
static int use_wait;
static double woke;
static void *block(void *arg) {
    (void)arg;
    if (use_wait) CK(clWaitForEvents(1, &barrier_ev));
    else CK(clFinish(devs[0].q));
    woke = now_us();
    return NULL;
}

int main(int argc, char **argv) {
    cl_uint pi = argc > 1 ? (cl_uint)atoi(argv[1]) : 0;
    int reps = argc > 2 ? atoi(argv[2]) : 200;
    setvbuf(stdout, NULL, _IONBF, 0);
    cl_platform_id ps[8]; cl_uint np;
    CK(clGetPlatformIDs(8, ps, &np));
    if (pi >= np) { fprintf(stderr, "platform %u of %u\n", pi, np); return 2; }
    cl_device_id ids[MAXD];
    CK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, MAXD, ids, &nd));
    char name[256];
    CK(clGetDeviceInfo(ids[0], CL_DEVICE_NAME, sizeof name, name, NULL));
    printf("platform %u: %u devices (%s), %d repetitions, medians in us\n", pi, nd, name, reps);
    for (cl_uint i = 0; i < nd; i++) open_dev(ids[i], &devs[i]);
    for (cl_uint i = 0; i < nd; i++) { enqueue_tiny(&devs[i]); CK(clFinish(devs[i].q)); }
    double *v = malloc(sizeof(double) * reps);

    for (int r = 0; r < reps; r++) {
        double t = now_us(); enqueue_tiny(&devs[0]); v[r] = now_us() - t;
        CK(clFinish(devs[0].q));
    }
    printf("(1) one enqueue+flush, one device                   %8.1f\n", median(v, reps));

    for (int r = 0; r < reps; r++) {
        double t = now_us();
        for (cl_uint i = 0; i < nd; i++) enqueue_tiny(&devs[i]);
        v[r] = now_us() - t;
        for (cl_uint i = 0; i < nd; i++) CK(clFinish(devs[i].q));
    }
    printf("(2) %2u devices, one thread, one after the other     %8.1f\n", nd, median(v, reps));

    for (int r = 0; r < reps; r++) {
        pthread_t th[MAXD];
        go = 0;
        for (cl_uint i = 0; i < nd; i++) pthread_create(&th[i], NULL, issue_one, (void *)(size_t)i);
        struct timespec pause = {0, 2000000};
        nanosleep(&pause, NULL); /* the threads are spinning on the flag */
        double t = now_us();
        __atomic_store_n(&go, 1, __ATOMIC_RELEASE);
        for (cl_uint i = 0; i < nd; i++) pthread_join(th[i], NULL);
        double last = 0;
        for (cl_uint i = 0; i < nd; i++) if (returned[i] > last) last = returned[i];
        v[r] = last - t;
        for (cl_uint i = 0; i < nd; i++) CK(clFinish(devs[i].q));
    }
    printf("(3) %2u devices, a thread each, at once              %8.1f\n", nd, median(v, reps));

    for (use_wait = 0; use_wait < 2; use_wait++) {
        for (int r = 0; r < reps; r++) {
            cl_int e;
            cl_event gate = clCreateUserEvent(devs[0].ctx, &e); CK(e);
            CK(clEnqueueBarrierWithWaitList(devs[0].q, 1, &gate, &barrier_ev));
            CK(clFlush(devs[0].q));
            pthread_t th;
            pthread_create(&th, NULL, block, NULL);
            struct timespec pause = {0, 2000000};
            nanosleep(&pause, NULL); /* the thread is blocked in the driver */
            double t = now_us();
            CK(clSetUserEventStatus(gate, CL_COMPLETE));
            pthread_join(th, NULL);
            v[r] = woke - t;
            clReleaseEvent(barrier_ev);
            clReleaseEvent(gate);
        }
        printf("(%d) user event set -> %-28s %8.1f\n", 4 + use_wait,
               use_wait ? "clWaitForEvents returns" : "clFinish returns", median(v, reps));
    }

    for (int r = 0; r < reps; r++) {
        double t = now_us(); enqueue_tiny(&devs[0]); CK(clFinish(devs[0].q)); v[r] = now_us() - t;
    }
    printf("(6) tiny kernel enqueue -> clFinish returns          %8.1f\n", median(v, reps));
    free(v);
    return 0;
}
