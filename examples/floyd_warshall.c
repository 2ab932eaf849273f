/*
 * floyd_warshall - all-pairs shortest paths by N dependent launches of one
 * kernel, pass k passed as a kernel argument (AMD APP SDK FloydWarshall,
 * Panwar et al. Table II).
 *
 * usage: floyd_warshall [N=256] [--dump FILE]
 *   N nodes, a multiple of 16 (work-group 16x16); N launches. Each launch
 *   waits on the event of the previous one (event wait list).
 *   Integer weights: results must match the reference exactly.
 *   --dump writes dist[] then path[] (uint32).
 */
#include "common.h"
#include "floyd_warshall_cl.h"

#include <string.h>

#define TILE 16
#define NO_EDGE (1u << 28) /* "infinity": 2 * NO_EDGE does not overflow */
static const char *USAGE =
    "floyd_warshall [N=256, multiple of 16] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 256, TILE, USAGE);
    if (n % TILE || n > 4096)
        ex_usage(USAGE, "N must be a multiple of 16, at most 4096");
    const size_t elems = n * n, bytes = elems * sizeof(uint32_t);

    /* Random directed graph: ~1/4 of the edges missing, weights 1..200 (the
     * SDK uses 0..200). */
    uint32_t *dist = ex_malloc(bytes), *path = ex_malloc(bytes);
    uint32_t *rdist = ex_malloc(bytes), *rpath = ex_malloc(bytes);
    ex_lcg g = {2718u};
    for (size_t y = 0; y < n; y++)
        for (size_t x = 0; x < n; x++) {
            uint32_t w = 1 + ex_lcg_below(&g, 200);
            int missing = ex_lcg_below(&g, 4) == 0;
            dist[y * n + x] = x == y ? 0 : (missing ? NO_EDGE : w);
            path[y * n + x] = (uint32_t)y;
        }
    memcpy(rdist, dist, bytes);
    memcpy(rpath, path, bytes);
    for (size_t k = 0; k < n; k++)
        for (size_t y = 0; y < n; y++)
            for (size_t x = 0; x < n; x++) {
                uint32_t via = rdist[y * n + k] + rdist[k * n + x];
                if (via < rdist[y * n + x]) {
                    rdist[y * n + x] = via;
                    rpath[y * n + x] = (uint32_t)k;
                }
            }

    ex_cl cl;
    ex_init(&cl, "floyd_warshall", kernel_source, NULL, 0);
    cl_mem dd = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    cl_mem dpth = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    cl_kernel k = ex_kernel(cl.program, "floyd_pass");
    cl_uint nu = (cl_uint)n;
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dd));
    CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dpth));
    CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_uint), &nu));

    double t0 = ex_now();
    /* dist blocking, path non-blocking with an event the first pass waits on. */
    cl_event prev;
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dd, CL_TRUE, 0, bytes, dist, 0,
                                  NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dpth, CL_FALSE, 0, bytes, path, 0,
                                  NULL, &prev));
    const size_t gws[2] = {n, n}, lws[2] = {TILE, TILE};
    for (cl_uint pass = 0; pass < nu; pass++) {
        cl_event ev;
        CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &pass));
        ex_launch(cl.queue, k, 2, gws, lws, 1, &prev, &ev);
        CL_CHECK(clReleaseEvent(prev));
        prev = ev;
    }
    /* path non-blocking (waits on the last pass), dist blocking. */
    cl_event rd;
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dpth, CL_FALSE, 0, bytes, path, 1,
                                 &prev, &rd));
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dd, CL_TRUE, 0, bytes, dist, 1,
                                 &prev, NULL));
    CL_CHECK(clWaitForEvents(1, &rd));
    CL_CHECK(clReleaseEvent(rd));
    CL_CHECK(clReleaseEvent(prev));
    double t1 = ex_now();

    long bad = 0;
    for (size_t i = 0; i < elems; i++)
        if (dist[i] != rdist[i] || path[i] != rpath[i]) {
            if (bad < 10)
                printf("mismatch [%zu][%zu]: dist %u ref %u, path %u ref %u\n",
                       i / n, i % n, dist[i], rdist[i], path[i], rpath[i]);
            bad++;
        }
    ex_dump(&a, dist, bytes);
    ex_dump(&a, path, bytes);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(dd));
    CL_CHECK(clReleaseMemObject(dpth));
    ex_release(&cl);
    free(dist);
    free(path);
    free(rdist);
    free(rpath);

    ex_print_kernels();
    if (bad) {
        printf("FAIL floyd_warshall n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS floyd_warshall n=%zu time_ms=%.1f\n", n, (t1 - t0) * 1e3);
    return 0;
}
