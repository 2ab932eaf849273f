/*
 * matmul_global - naive global-memory matrix multiply C = A * B.
 * Models AMD APP SDK MatrixMultiplication (gmem), Panwar et al. Table II;
 * Boyer ch. 4 Table 4.3 (Matrix Multiplication).
 *
 * usage: matmul_global [N=256] [reps=1] [--dump FILE]
 *   N x N matrices, N a multiple of 16 (work-group 16x16); the kernel is
 *   launched `reps` times (same inputs, same output).
 */
#include "common.h"
#include "matmul_global_cl.h"

#include <float.h>
#include <math.h>

#define TILE 16
static const char *USAGE =
    "matmul_global [N=256, multiple of 16] [reps=1] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 256, TILE, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 1, 1, USAGE);
    if (n % TILE)
        ex_usage(USAGE, "N must be a multiple of 16");

    const size_t elems = n * n, bytes = elems * sizeof(float);
    float *A = ex_malloc(bytes), *B = ex_malloc(bytes), *C = ex_malloc(bytes);
    ex_lcg g = {12345u};
    for (size_t i = 0; i < elems; i++)
        A[i] = ex_lcg_float(&g, -1.0f, 1.0f);
    for (size_t i = 0; i < elems; i++)
        B[i] = ex_lcg_float(&g, -1.0f, 1.0f);

    ex_cl cl;
    ex_init(&cl, "matmul_global", kernel_source, NULL, 0);
    cl_mem dA = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dB = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dC = ex_buffer(cl.context, CL_MEM_WRITE_ONLY, bytes);
    cl_kernel k = ex_kernel(cl.program, "matmul_global");
    cl_uint nu = (cl_uint)n;

    double t0 = ex_now();
    /* A: blocking write; B: non-blocking (the in-order queue orders it
     * before the launch, and B stays alive until the final wait). */
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dA, CL_TRUE, 0, bytes, A, 0, NULL,
                                  NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dB, CL_FALSE, 0, bytes, B, 0,
                                  NULL, NULL));
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dA));
    CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dB));
    CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dC));
    CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &nu));
    const size_t gws[2] = {n, n}, lws[2] = {TILE, TILE};
    for (unsigned long r = 0; r < reps; r++)
        ex_launch(cl.queue, k, 2, gws, lws, 0, NULL, NULL);
    cl_event rd;
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dC, CL_FALSE, 0, bytes, C, 0, NULL,
                                 &rd));
    CL_CHECK(clWaitForEvents(1, &rd));
    CL_CHECK(clReleaseEvent(rd));
    double t1 = ex_now();

    /* Reference in double. Tolerance: a float dot product of length n
     * accumulated in any order (with or without FMA contraction) has
     * |error| <= gamma_n * sum_k |a_ik b_kj|, gamma_n ~= n * u,
     * u = 2^-24 (Higham, Accuracy and Stability, eq. 3.5). We allow
     * n * FLT_EPSILON * sum|a b| = 2 n u sum|a b|, twice the bound. */
    long bad = 0;
    const size_t stride = ex_check_stride();
    /* B transposed in 64x64 tiles, so the reference reads both operands along rows (the
     * column walk through B took 94 s for 16 checked rows of 16384^2) */
    float *BT = ex_malloc(bytes);
    for (size_t k0 = 0; k0 < n; k0 += 64)
        for (size_t j0 = 0; j0 < n; j0 += 64)
            for (size_t kk = k0; kk < k0 + 64 && kk < n; kk++)
                for (size_t j = j0; j < j0 + 64 && j < n; j++)
                    BT[j * n + kk] = B[kk * n + j];
    for (size_t i = 0; i < n; i += stride)
        for (size_t j = 0; j < n; j++) {
            double s = 0.0, sa = 0.0;
            for (size_t kk = 0; kk < n; kk++) {
                double p = (double)A[i * n + kk] * (double)BT[j * n + kk];
                s += p;
                sa += fabs(p);
            }
            double tol = (double)n * FLT_EPSILON * sa + 1e-30;
            double got = C[i * n + j];
            if (!(fabs(got - s) <= tol)) {
                if (bad < 10)
                    printf("mismatch C[%zu][%zu] = %.9g, ref %.9g (tol %.3g)\n",
                           i, j, got, s, tol);
                bad++;
            }
        }
    free(BT);
    ex_dump(&a, C, bytes);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(dA));
    CL_CHECK(clReleaseMemObject(dB));
    CL_CHECK(clReleaseMemObject(dC));
    ex_release(&cl);
    free(A);
    free(B);
    free(C);

    ex_print_kernels();
    if (bad) {
        printf("FAIL matmul_global n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS matmul_global n=%zu reps=%lu check_stride=%zu time_ms=%.1f\n", n, reps, stride,
           (t1 - t0) * 1e3);
    return 0;
}
