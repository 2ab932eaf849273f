/*
 * reduction - multi-pass sum of N uints with a __local-memory tree
 * reduction per work-group (AMD APP SDK Reduction, Panwar et al. Table II;
 * Boyer s3 partial/full reduction).
 *
 * usage: reduction [N=4194304] [reps=2] [--dump FILE]
 *   N >= 2. Pass 1 turns N values into ceil(N/512) partial sums (one per
 *   work-group of 256); further passes reduce the partial sums until one
 *   value is left (ceil(log_512 N) launches per repetition). Every pass waits
 *   on the previous pass's event (event wait list). The whole reduction is
 *   repeated `reps` times. --dump writes the pass-1 partial sums then the
 *   total (uint32).
 */
#include "common.h"
#include "reduction_cl.h"

#include <string.h>

#define WG 256
static const char *USAGE = "reduction [N=4194304] [reps=2] [--dump FILE]";

static size_t groups_for(size_t n) { return (n + 2 * WG - 1) / (2 * WG); }

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 4194304, 2, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 2, 1, USAGE);
    if (n > 0xffffffffu)
        ex_usage(USAGE, "N too large");

    uint32_t *in = ex_malloc(n * sizeof(uint32_t));
    ex_lcg g = {99u};
    for (size_t i = 0; i < n; i++)
        in[i] = ex_lcg_next(&g);
    const size_t g1 = groups_for(n);
    uint32_t *part = ex_malloc(g1 * sizeof(uint32_t));
    uint32_t total = 0;

    /* Reference: pass-1 partial sums and the total, mod 2^32 (exact). */
    uint32_t *rpart = ex_malloc(g1 * sizeof(uint32_t));
    uint32_t rtotal = 0;
    memset(rpart, 0, g1 * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        rpart[i / (2 * WG)] += in[i];
        rtotal += in[i];
    }

    ex_cl cl;
    ex_init(&cl, "reduction", kernel_source, NULL, 0);
    cl_mem din = ex_buffer(cl.context, CL_MEM_READ_ONLY, n * sizeof(uint32_t));
    cl_mem dp[2];
    dp[0] = ex_buffer(cl.context, CL_MEM_READ_WRITE, g1 * sizeof(uint32_t));
    dp[1] = ex_buffer(cl.context, CL_MEM_READ_WRITE,
                      groups_for(g1) * sizeof(uint32_t));
    cl_kernel k = ex_kernel(cl.program, "reduce");
    CL_CHECK(clSetKernelArg(k, 2, WG * sizeof(uint32_t), NULL));

    long bad = 0;
    double t0 = ex_now();
    for (unsigned long r = 0; r < reps; r++) {
        cl_event prev;
        memset(part, 0, g1 * sizeof(uint32_t));
        total = 0;
        /* Upload non-blocking; pass 1 waits on its event. */
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, din, CL_FALSE, 0,
                                      n * sizeof(uint32_t), in, 0, NULL,
                                      &prev));
        cl_mem src = din;
        size_t cur = n;
        int dst = 0;
        cl_event pass1 = NULL;
        while (cur > 1) {
            cl_uint cu = (cl_uint)cur;
            size_t ng = groups_for(cur);
            size_t gws = ng * WG, lws = WG;
            cl_event ev;
            CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &src));
            CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dp[dst]));
            CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &cu));
            ex_launch(cl.queue, k, 1, &gws, &lws, 1, &prev, &ev);
            if (src == din) {
                /* Read the per-work-group partial sums of pass 1 without
                 * blocking; pass 3 overwrites dp[0] but is enqueued after
                 * this read on the in-order queue. */
                CL_CHECK(clEnqueueReadBuffer(cl.queue, dp[0], CL_FALSE, 0,
                                             g1 * sizeof(uint32_t), part, 1,
                                             &ev, &pass1));
            }
            CL_CHECK(clReleaseEvent(prev));
            prev = ev;
            src = dp[dst];
            dst = 1 - dst;
            cur = ng;
        }
        /* Blocking read of the total after the last pass; if pass 1 left a
         * single group its output is in dp[0]. */
        CL_CHECK(clEnqueueReadBuffer(cl.queue, src, CL_TRUE, 0,
                                     sizeof(uint32_t), &total, 1, &prev,
                                     NULL));
        CL_CHECK(clReleaseEvent(prev));
        CL_CHECK(clWaitForEvents(1, &pass1));
        CL_CHECK(clReleaseEvent(pass1));
        if (memcmp(part, rpart, g1 * sizeof(uint32_t)) != 0) {
            for (size_t i = 0; i < g1; i++)
                if (part[i] != rpart[i]) {
                    if (bad < 10)
                        printf("mismatch rep %lu partial[%zu] = %u, ref %u\n",
                               r, i, part[i], rpart[i]);
                    bad++;
                }
        }
        if (total != rtotal) {
            printf("mismatch rep %lu total = %u, ref %u\n", r, total, rtotal);
            bad++;
        }
    }
    double t1 = ex_now();
    ex_dump(&a, part, g1 * sizeof(uint32_t));
    ex_dump(&a, &total, sizeof total);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(din));
    CL_CHECK(clReleaseMemObject(dp[0]));
    CL_CHECK(clReleaseMemObject(dp[1]));
    ex_release(&cl);
    free(in);
    free(part);
    free(rpart);

    ex_print_kernels();
    if (bad) {
        printf("FAIL reduction n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS reduction n=%zu reps=%lu groups=%zu sum=%u time_ms=%.1f\n", n,
           reps, g1, total, (t1 - t0) * 1e3);
    return 0;
}
