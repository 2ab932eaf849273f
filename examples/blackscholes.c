/*
 * blackscholes - European call/put pricing (AMD APP SDK BlackScholes,
 * Boyer ch. 4 Table 4.3).
 *
 * usage: blackscholes [N=262144] [reps=1] [--dump FILE]
 *   N options, a multiple of 256 (work-group 256). The pricing kernel is
 *   launched `reps` times; between repetitions the inputs are re-uploaded
 *   with non-blocking writes (as a streaming application would).
 *   --dump writes call[] then put[].
 */
#include "common.h"
#include "blackscholes_cl.h"

#include <math.h>

#define WG 256
static const char *USAGE =
    "blackscholes [N=262144, multiple of 256] [reps=1] [--dump FILE]";

static double cnd_ref(double d)
{
    const double A1 = 0.31938153, A2 = -0.356563782, A3 = 1.781477937,
                 A4 = -1.821255978, A5 = 1.330274429,
                 RSQRT2PI = 0.39894228040143267794;
    double K = 1.0 / (1.0 + 0.2316419 * fabs(d));
    double c = RSQRT2PI * exp(-0.5 * d * d) *
               (K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))));
    return d > 0.0 ? 1.0 - c : c;
}

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 262144, WG, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 1, 1, USAGE);
    if (n % WG)
        ex_usage(USAGE, "N must be a multiple of 256");
    const float R = 0.02f, V = 0.30f;

    const size_t bytes = n * sizeof(float);
    float *S = ex_malloc(bytes), *X = ex_malloc(bytes), *T = ex_malloc(bytes);
    float *call = ex_malloc(bytes), *put = ex_malloc(bytes);
    /* Input ranges of the SDK samples: S in [5,30], X in [1,100], T in [0.25,10]. */
    ex_lcg g = {5347u};
    for (size_t i = 0; i < n; i++) {
        S[i] = ex_lcg_float(&g, 5.0f, 30.0f);
        X[i] = ex_lcg_float(&g, 1.0f, 100.0f);
        T[i] = ex_lcg_float(&g, 0.25f, 10.0f);
    }

    ex_cl cl;
    ex_init(&cl, "blackscholes", kernel_source, NULL, 0);
    cl_mem dS = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dX = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dT = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dC = ex_buffer(cl.context, CL_MEM_WRITE_ONLY, bytes);
    cl_mem dP = ex_buffer(cl.context, CL_MEM_WRITE_ONLY, bytes);
    cl_kernel k = ex_kernel(cl.program, "blackscholes");
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dS));
    CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dX));
    CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dT));
    CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &dC));
    CL_CHECK(clSetKernelArg(k, 4, sizeof(cl_mem), &dP));
    CL_CHECK(clSetKernelArg(k, 5, sizeof(float), &R));
    CL_CHECK(clSetKernelArg(k, 6, sizeof(float), &V));

    double t0 = ex_now();
    const size_t gws = n, lws = WG;
    for (unsigned long r = 0; r < reps; r++) {
        /* S and X non-blocking, T blocking (also completes S and X in the
         * in-order queue). */
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, dS, CL_FALSE, 0, bytes, S, 0,
                                      NULL, NULL));
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, dX, CL_FALSE, 0, bytes, X, 0,
                                      NULL, NULL));
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, dT, CL_TRUE, 0, bytes, T, 0,
                                      NULL, NULL));
        ex_launch(cl.queue, k, 1, &gws, &lws, 0, NULL, NULL);
    }
    /* call[] non-blocking, put[] blocking: both complete at return. */
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dC, CL_FALSE, 0, bytes, call, 0,
                                 NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dP, CL_TRUE, 0, bytes, put, 0, NULL,
                                 NULL));
    CL_CHECK(clFinish(cl.queue));
    double t1 = ex_now();

    /* Tolerance: each price is a difference of two terms bounded by S and
     * X e^{-RT} <= X. The float evaluation chain (divide, log, sqrt, exp,
     * CND polynomial; each <= 3 ulp in OpenCL 1.2 full profile, s7.4) gives
     * a relative error of at most ~20 ulp = 20 * 2^-23 ~= 2.4e-6 per term,
     * i.e. an absolute error <= 2.4e-6 * (S + X). We allow 1e-5 * (S + X).
     * The polynomial's own error (7.5e-8) cancels: the reference uses it. */
    long bad = 0;
    double maxrel = 0.0;
    for (size_t i = 0; i < n; i++) {
        double s = S[i], x = X[i], t = T[i];
        double sq = sqrt(t);
        double d1 = (log(s / x) + (R + 0.5 * V * V) * t) / (V * sq);
        double d2 = d1 - V * sq;
        double n1 = cnd_ref(d1), n2 = cnd_ref(d2);
        double xe = x * exp(-(double)R * t);
        double rc = s * n1 - xe * n2, rp = xe * (1.0 - n2) - s * (1.0 - n1);
        double scale = s + x, tol = 1e-5 * scale;
        double ec = fabs(call[i] - rc), ep = fabs(put[i] - rp);
        if (ec / scale > maxrel)
            maxrel = ec / scale;
        if (ep / scale > maxrel)
            maxrel = ep / scale;
        if (!(ec <= tol) || !(ep <= tol)) {
            if (bad < 10)
                printf("mismatch option %zu: call %.7g ref %.7g, put %.7g ref "
                       "%.7g (tol %.3g)\n",
                       i, call[i], rc, put[i], rp, tol);
            bad++;
        }
    }
    ex_dump(&a, call, bytes);
    ex_dump(&a, put, bytes);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(dS));
    CL_CHECK(clReleaseMemObject(dX));
    CL_CHECK(clReleaseMemObject(dT));
    CL_CHECK(clReleaseMemObject(dC));
    CL_CHECK(clReleaseMemObject(dP));
    ex_release(&cl);
    free(S);
    free(X);
    free(T);
    free(call);
    free(put);

    ex_print_kernels();
    if (bad) {
        printf("FAIL blackscholes n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS blackscholes n=%zu reps=%lu max_err_rel=%.2e time_ms=%.1f\n",
           n, reps, maxrel, (t1 - t0) * 1e3);
    return 0;
}
