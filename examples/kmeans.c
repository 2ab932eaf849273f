/*
 * kmeans - Lloyd's k-means with an assign kernel and an update kernel
 * launched alternately (each dependent on the previous), integer variant
 * of Rodinia kmeans (Boyer ch. 4, Table 4.3).
 *
 * usage: kmeans [N=65536] [iters=10] [--dump FILE]
 *   N points (multiple of 256) with DIMS=4 integer features in [0, 1024),
 *   K=8 clusters, `iters` iterations = 2 * iters launches. After each
 *   iteration the host reads the number of changed memberships (a small
 *   blocking read, as Rodinia's convergence test does); the counter reset
 *   is a non-blocking write. --dump writes centroids[K*DIMS] then
 *   membership[N] (uint32). Exact integer arithmetic: results must match
 *   the reference exactly.
 */
#include "common.h"
#include "kmeans_cl.h"

#include <string.h>

#define DIMS 4
#define K 8
#define WG_ASSIGN 256
#define WG_UPDATE 64
static const char *USAGE =
    "kmeans [N=65536, multiple of 256] [iters=10] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 65536, WG_ASSIGN, USAGE);
    const unsigned long iters = ex_arg_ulong(&a, 1, 10, 1, USAGE);
    if (n % WG_ASSIGN || n > (1u << 22))
        ex_usage(USAGE, "N must be a multiple of 256, at most 2^22");

    /* Points scattered around K random centers (feature-major layout). */
    uint32_t *pts = ex_malloc(n * DIMS * sizeof(uint32_t));
    ex_lcg g = {1618u};
    uint32_t centers[K][DIMS];
    for (int c = 0; c < K; c++)
        for (int d = 0; d < DIMS; d++)
            centers[c][d] = 100 + ex_lcg_below(&g, 824);
    for (size_t i = 0; i < n; i++) {
        uint32_t c = ex_lcg_below(&g, K);
        for (int d = 0; d < DIMS; d++)
            pts[d * n + i] = centers[c][d] - 100 + ex_lcg_below(&g, 201);
    }
    /* Initial centroids: the first K points (as Rodinia); membership: none. */
    uint32_t cent[K * DIMS], rcent[K * DIMS];
    for (int c = 0; c < K; c++)
        for (int d = 0; d < DIMS; d++)
            cent[c * DIMS + d] = rcent[c * DIMS + d] = pts[d * n + c];
    uint32_t *memb = ex_malloc(n * sizeof(uint32_t));
    uint32_t *rmemb = ex_malloc(n * sizeof(uint32_t));
    memset(memb, 0xff, n * sizeof(uint32_t));
    memset(rmemb, 0xff, n * sizeof(uint32_t));

    /* Reference: identical integer algorithm. */
    uint32_t *rchanged = ex_malloc(iters * sizeof(uint32_t));
    for (unsigned long it = 0; it < iters; it++) {
        uint32_t ch = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t best = 0, bestd = 0xffffffffu;
            for (uint32_t c = 0; c < K; c++) {
                uint32_t d2 = 0;
                for (int d = 0; d < DIMS; d++) {
                    int diff = (int)pts[d * n + i] - (int)rcent[c * DIMS + d];
                    d2 += (uint32_t)(diff * diff);
                }
                if (d2 < bestd) {
                    bestd = d2;
                    best = c;
                }
            }
            if (rmemb[i] != best) {
                rmemb[i] = best;
                ch++;
            }
        }
        rchanged[it] = ch;
        uint64_t sum[K][DIMS + 1];
        memset(sum, 0, sizeof sum);
        for (size_t i = 0; i < n; i++) {
            for (int d = 0; d < DIMS; d++)
                sum[rmemb[i]][d] += pts[d * n + i];
            sum[rmemb[i]][DIMS]++;
        }
        for (int c = 0; c < K; c++)
            if (sum[c][DIMS])
                for (int d = 0; d < DIMS; d++)
                    rcent[c * DIMS + d] = (uint32_t)(sum[c][d] / sum[c][DIMS]);
    }

    ex_cl cl;
    char opts[64];
    snprintf(opts, sizeof opts, "-DDIMS=%d -DWG=%d", DIMS, WG_UPDATE);
    ex_init(&cl, "kmeans", kernel_source, opts, 0);
    cl_mem dpts = ex_buffer(cl.context, CL_MEM_READ_ONLY,
                            n * DIMS * sizeof(uint32_t));
    cl_mem dcent = ex_buffer(cl.context, CL_MEM_READ_WRITE, sizeof cent);
    cl_mem dmemb = ex_buffer(cl.context, CL_MEM_READ_WRITE, n * sizeof(uint32_t));
    cl_mem dch = ex_buffer(cl.context, CL_MEM_READ_WRITE, sizeof(uint32_t));
    cl_kernel ka = ex_kernel(cl.program, "kmeans_assign");
    cl_kernel ku = ex_kernel(cl.program, "kmeans_update");
    cl_uint nu = (cl_uint)n, ku_ = K;
    CL_CHECK(clSetKernelArg(ka, 0, sizeof(cl_mem), &dpts));
    CL_CHECK(clSetKernelArg(ka, 1, sizeof(cl_mem), &dcent));
    CL_CHECK(clSetKernelArg(ka, 2, sizeof(cl_mem), &dmemb));
    CL_CHECK(clSetKernelArg(ka, 3, sizeof(cl_mem), &dch));
    CL_CHECK(clSetKernelArg(ka, 4, sizeof(cl_uint), &nu));
    CL_CHECK(clSetKernelArg(ka, 5, sizeof(cl_uint), &ku_));
    CL_CHECK(clSetKernelArg(ku, 0, sizeof(cl_mem), &dpts));
    CL_CHECK(clSetKernelArg(ku, 1, sizeof(cl_mem), &dmemb));
    CL_CHECK(clSetKernelArg(ku, 2, sizeof(cl_mem), &dcent));
    CL_CHECK(clSetKernelArg(ku, 3, sizeof(cl_uint), &nu));

    double t0 = ex_now();
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dpts, CL_FALSE, 0,
                                  n * DIMS * sizeof(uint32_t), pts, 0, NULL,
                                  NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dmemb, CL_FALSE, 0,
                                  n * sizeof(uint32_t), memb, 0, NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dcent, CL_TRUE, 0, sizeof cent,
                                  cent, 0, NULL, NULL));
    const size_t ga = n, la = WG_ASSIGN, gu = (size_t)K * WG_UPDATE,
                 lu = WG_UPDATE;
    static const uint32_t zero = 0;
    long bad = 0;
    for (unsigned long it = 0; it < iters; it++) {
        uint32_t ch = 0;
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, dch, CL_FALSE, 0,
                                      sizeof zero, &zero, 0, NULL, NULL));
        ex_launch(cl.queue, ka, 1, &ga, &la, 0, NULL, NULL);
        ex_launch(cl.queue, ku, 1, &gu, &lu, 0, NULL, NULL);
        CL_CHECK(clEnqueueReadBuffer(cl.queue, dch, CL_TRUE, 0, sizeof ch, &ch,
                                     0, NULL, NULL));
        if (ch != rchanged[it]) {
            if (bad < 10)
                printf("mismatch iteration %lu: %u memberships changed, ref "
                       "%u\n",
                       it, ch, rchanged[it]);
            bad++;
        }
    }
    /* membership non-blocking, centroids blocking. */
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dmemb, CL_FALSE, 0,
                                 n * sizeof(uint32_t), memb, 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dcent, CL_TRUE, 0, sizeof cent,
                                 cent, 0, NULL, NULL));
    CL_CHECK(clFinish(cl.queue));
    double t1 = ex_now();

    for (int i = 0; i < K * DIMS; i++)
        if (cent[i] != rcent[i]) {
            if (bad < 10)
                printf("mismatch centroid %d dim %d: %u ref %u\n", i / DIMS,
                       i % DIMS, cent[i], rcent[i]);
            bad++;
        }
    for (size_t i = 0; i < n; i++)
        if (memb[i] != rmemb[i]) {
            if (bad < 10)
                printf("mismatch membership[%zu] = %u ref %u\n", i, memb[i],
                       rmemb[i]);
            bad++;
        }
    ex_dump(&a, cent, sizeof cent);
    ex_dump(&a, memb, n * sizeof(uint32_t));

    CL_CHECK(clReleaseKernel(ka));
    CL_CHECK(clReleaseKernel(ku));
    CL_CHECK(clReleaseMemObject(dpts));
    CL_CHECK(clReleaseMemObject(dcent));
    CL_CHECK(clReleaseMemObject(dmemb));
    CL_CHECK(clReleaseMemObject(dch));
    ex_release(&cl);
    free(pts);
    free(memb);
    free(rmemb);

    ex_print_kernels();
    if (bad) {
        free(rchanged);
        printf("FAIL kmeans n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS kmeans n=%zu k=%d dims=%d iters=%lu changed_last=%u "
           "time_ms=%.1f\n",
           n, K, DIMS, iters, rchanged[iters - 1], (t1 - t0) * 1e3);
    free(rchanged);
    return 0;
}
