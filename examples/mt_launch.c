/*
 * mt_launch - multi-threaded host program (pthreads) launching a tiny kernel
 * from T threads that share one context and one program.
 *
 * usage: mt_launch [T=4] [L=50] [mode=both] [--dump FILE]
 *   mode "private": each thread creates its own command queue;
 *   mode "shared":  all threads enqueue into one shared queue, each launch
 *                   (with its clSetKernelArg calls) under a mutex;
 *   mode "both":    private, then shared.
 *   Each thread owns its kernel object (clSetKernelArg is not thread-safe
 *   on a shared kernel) and a buffer of L * 64 uints; launch i writes slice
 *   i. Total launches: T * L per mode. Output is checked exactly. Used to
 *   check that an interposer loses no log record under concurrency.
 *   --dump writes all thread buffers (private mode first).
 */
#define _POSIX_C_SOURCE 200809L
#include "common.h"
#include "mt_launch_cl.h"

#include <pthread.h>
#include <string.h>

#define G 64  /* work-items per launch */
#define WG 16 /* work-group size */
static const char *USAGE =
    "mt_launch [T=4] [L=50] [private|shared|both (default both)] [--dump FILE]";

typedef struct {
    unsigned tid, launches;
    cl_context ctx;
    cl_device_id dev;
    cl_program prog;
    cl_command_queue shared_q; /* NULL: create a private queue */
    pthread_mutex_t *lock;
    uint32_t *host; /* L * G results */
    unsigned long launched;
} worker;

static void *run(void *p)
{
    worker *w = p;
    cl_int err;
    cl_command_queue q = w->shared_q;
    if (!q) {
        q = clCreateCommandQueue(w->ctx, w->dev, 0, &err);
        CL_CHECK_ERR(err, "clCreateCommandQueue");
    }
    cl_kernel k = ex_kernel(w->prog, "tag");
    const size_t bytes = (size_t)w->launches * G * sizeof(uint32_t);
    cl_mem buf = ex_buffer(w->ctx, CL_MEM_READ_WRITE, bytes);
    const size_t gws = G, lws = WG;
    cl_uint tid = w->tid;
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &buf));
    CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_uint), &tid));
    for (cl_uint i = 0; i < w->launches; i++) {
        cl_uint base = i * G;
        if (w->shared_q)
            pthread_mutex_lock(w->lock);
        CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_uint), &i));
        CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &base));
        CL_CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &gws, &lws, 0, NULL,
                                        NULL));
        w->launched++;
        if (w->shared_q)
            pthread_mutex_unlock(w->lock);
    }
    if (w->shared_q) {
        /* Non-blocking read on the shared queue, then wait on its event. */
        cl_event ev;
        CL_CHECK(clEnqueueReadBuffer(q, buf, CL_FALSE, 0, bytes, w->host, 0,
                                     NULL, &ev));
        CL_CHECK(clWaitForEvents(1, &ev));
        CL_CHECK(clReleaseEvent(ev));
    } else {
        CL_CHECK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, bytes, w->host, 0,
                                     NULL, NULL));
    }
    CL_CHECK(clReleaseMemObject(buf));
    CL_CHECK(clReleaseKernel(k));
    if (!w->shared_q)
        CL_CHECK(clReleaseCommandQueue(q));
    return NULL;
}

/* Runs T workers in one mode; returns the number of wrong values. */
static long run_mode(const char *mode, unsigned T, unsigned L, cl_context ctx,
                     cl_device_id dev, cl_program prog, int shared,
                     unsigned long *launched, const ex_args *a)
{
    cl_int err;
    cl_command_queue sq = NULL;
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    if (shared) {
        sq = clCreateCommandQueue(ctx, dev, 0, &err);
        CL_CHECK_ERR(err, "clCreateCommandQueue");
    }
    worker *ws = ex_malloc(T * sizeof *ws);
    pthread_t *th = ex_malloc(T * sizeof *th);
    for (unsigned t = 0; t < T; t++) {
        ws[t] = (worker){.tid = t, .launches = L, .ctx = ctx, .dev = dev,
                         .prog = prog, .shared_q = sq, .lock = &lock,
                         .host = ex_malloc((size_t)L * G * sizeof(uint32_t)),
                         .launched = 0};
        memset(ws[t].host, 0, (size_t)L * G * sizeof(uint32_t));
        if (pthread_create(&th[t], NULL, run, &ws[t]) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    }
    long bad = 0;
    for (unsigned t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        *launched += ws[t].launched;
        for (uint32_t i = 0; i < L; i++)
            for (uint32_t g = 0; g < G; g++) {
                uint32_t want = (t << 24) ^ (i << 8) ^ g ^ 0x5a5a5a5au;
                uint32_t got = ws[t].host[i * G + g];
                if (got != want) {
                    if (bad < 10)
                        printf("mismatch %s thread %u launch %u item %u: "
                               "0x%08x, want 0x%08x\n",
                               mode, t, i, g, got, want);
                    bad++;
                }
            }
        ex_dump(a, ws[t].host, (size_t)L * G * sizeof(uint32_t));
        free(ws[t].host);
    }
    if (sq)
        CL_CHECK(clReleaseCommandQueue(sq));
    pthread_mutex_destroy(&lock);
    free(ws);
    free(th);
    return bad;
}

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const unsigned long T = ex_arg_ulong(&a, 0, 4, 1, USAGE);
    const unsigned long L = ex_arg_ulong(&a, 1, 50, 1, USAGE);
    const char *mode = a.npos > 2 ? a.pos[2] : "both";
    int do_priv = !strcmp(mode, "private") || !strcmp(mode, "both");
    int do_shared = !strcmp(mode, "shared") || !strcmp(mode, "both");
    if (!do_priv && !do_shared)
        ex_usage(USAGE, "mode must be private, shared or both");
    if (T > 255 || L > 65535)
        ex_usage(USAGE, "T <= 255 and L <= 65535");

    ex_cl cl; /* its queue is unused by the workers but released cleanly */
    ex_init(&cl, "mt_launch", kernel_source, NULL, 0);

    unsigned long launched = 0;
    long bad = 0;
    double t0 = ex_now();
    if (do_priv)
        bad += run_mode("private", (unsigned)T, (unsigned)L, cl.context,
                        cl.device, cl.program, 0, &launched, &a);
    if (do_shared)
        bad += run_mode("shared", (unsigned)T, (unsigned)L, cl.context,
                        cl.device, cl.program, 1, &launched, &a);
    double t1 = ex_now();
    ex_release(&cl);

    printf("kernels: %lu\n", launched);
    if (bad) {
        printf("FAIL mt_launch threads=%lu launches=%lu mode=%s "
               "mismatches=%ld\n",
               T, L, mode, bad);
        return 1;
    }
    printf("PASS mt_launch threads=%lu launches=%lu mode=%s time_ms=%.1f\n", T,
           L, mode, (t1 - t0) * 1e3);
    return 0;
}
