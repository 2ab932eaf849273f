/*
 * nbody - all-pairs gravitational N-body simulation (AMD APP SDK NBody,
 * Panwar et al. Table II).
 *
 * usage: nbody [N=2048] [steps=4] [--dump FILE]
 *   N bodies, a multiple of 64 (work-group 64); `steps` dependent launches
 *   (ping-pong buffers). --dump writes final pos[] then vel[] (float4).
 */
#include "common.h"
#include "nbody_cl.h"

#include <math.h>
#include <string.h>

#define WG 64
static const char *USAGE =
    "nbody [N=2048, multiple of 64] [steps=4] [--dump FILE]";

/* Parameters of the SDK sample. */
static const float DT = 0.005f, EPS2 = 500.0f;

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 2048, WG, USAGE);
    const unsigned long steps = ex_arg_ulong(&a, 1, 4, 1, USAGE);
    if (n % WG)
        ex_usage(USAGE, "N must be a multiple of 64");

    const size_t bytes = n * 4 * sizeof(float);
    float *pos = ex_malloc(bytes), *vel = ex_malloc(bytes);
    float *gpos = ex_malloc(bytes), *gvel = ex_malloc(bytes);
    ex_lcg g = {777u};
    for (size_t i = 0; i < n; i++) {
        pos[4 * i + 0] = ex_lcg_float(&g, 3.0f, 50.0f);
        pos[4 * i + 1] = ex_lcg_float(&g, 3.0f, 50.0f);
        pos[4 * i + 2] = ex_lcg_float(&g, 3.0f, 50.0f);
        pos[4 * i + 3] = ex_lcg_float(&g, 1.0f, 1000.0f); /* mass */
        vel[4 * i + 0] = vel[4 * i + 1] = vel[4 * i + 2] = 0.0f;
        vel[4 * i + 3] = 0.0f;
    }

    ex_cl cl;
    ex_init(&cl, "nbody", kernel_source, NULL, 0);
    cl_mem dp[2], dv[2];
    for (int b = 0; b < 2; b++) {
        dp[b] = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
        dv[b] = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    }
    cl_kernel k = ex_kernel(cl.program, "nbody_step");
    cl_uint nu = (cl_uint)n;
    CL_CHECK(clSetKernelArg(k, 4, WG * 4 * sizeof(float), NULL));
    CL_CHECK(clSetKernelArg(k, 5, sizeof(cl_uint), &nu));
    CL_CHECK(clSetKernelArg(k, 6, sizeof(float), &DT));
    CL_CHECK(clSetKernelArg(k, 7, sizeof(float), &EPS2));

    double t0 = ex_now();
    /* Positions non-blocking, velocities blocking. */
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dp[0], CL_FALSE, 0, bytes, pos, 0,
                                  NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dv[0], CL_TRUE, 0, bytes, vel, 0,
                                  NULL, NULL));
    const size_t gws = n, lws = WG;
    int cur = 0;
    for (unsigned long s = 0; s < steps; s++) {
        CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dp[cur]));
        CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &dv[cur]));
        CL_CHECK(clSetKernelArg(k, 2, sizeof(cl_mem), &dp[1 - cur]));
        CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_mem), &dv[1 - cur]));
        ex_launch(cl.queue, k, 1, &gws, &lws, 0, NULL, NULL);
        cur = 1 - cur;
    }
    /* Velocities non-blocking, positions blocking. */
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dv[cur], CL_FALSE, 0, bytes, gvel,
                                 0, NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dp[cur], CL_TRUE, 0, bytes, gpos, 0,
                                 NULL, NULL));
    CL_CHECK(clFinish(cl.queue));
    double t1 = ex_now();

    /* Reference in double, same summation order. Tolerance: the float sum
     * of n accelerations has error <= n u sum_j |a_ij| (Higham eq. 3.5); we
     * track that bound per body (abound) and carry it through the step
     * (v += dt a, p += dt v + dt^2/2 a) together with the rounding of the
     * stored values (2 ulp of |p|, |v| per step), then allow 4x that. */
    double *rp = ex_malloc(n * 4 * sizeof(double));
    double *rv = ex_malloc(n * 4 * sizeof(double));
    double *np = ex_malloc(n * 4 * sizeof(double));
    double *nv = ex_malloc(n * 4 * sizeof(double));
    double *ep = ex_malloc(n * sizeof(double)), *ev = ex_malloc(n * sizeof(double));
    for (size_t i = 0; i < 4 * n; i++) {
        rp[i] = pos[i];
        rv[i] = vel[i];
    }
    memset(ep, 0, n * sizeof(double));
    memset(ev, 0, n * sizeof(double));
    const double u = ldexp(1.0, -24), dt = DT;
    /* EX_SKIP_REFERENCE=1 (GPU benchmarks at sizes whose O(n^2 steps) CPU
     * reference would take minutes): no reference; the result is only dumped
     * (--dump) for a byte comparison with another run, and the verdict is
     * UNCHECKED, never PASS. */
    const char *skip_env = getenv("EX_SKIP_REFERENCE");
    const int skip_ref = skip_env && strcmp(skip_env, "1") == 0;
    for (unsigned long s = 0; s < (skip_ref ? 0 : steps); s++) {
        for (size_t i = 0; i < n; i++) {
            double ax = 0, ay = 0, az = 0, abound = 0;
            for (size_t j = 0; j < n; j++) {
                double rx = rp[4 * j] - rp[4 * i], ry = rp[4 * j + 1] - rp[4 * i + 1],
                       rz = rp[4 * j + 2] - rp[4 * i + 2];
                double d2 = rx * rx + ry * ry + rz * rz + EPS2;
                double inv = 1.0 / sqrt(d2);
                double sc = rp[4 * j + 3] * inv * inv * inv;
                ax += sc * rx;
                ay += sc * ry;
                az += sc * rz;
                abound += sc * sqrt(rx * rx + ry * ry + rz * rz);
            }
            /* Per-term relative error (~10 ops) plus the summation bound. */
            double aerr = (double)(n + 10) * u * abound;
            np[4 * i] = rp[4 * i] + rv[4 * i] * dt + ax * 0.5 * dt * dt;
            np[4 * i + 1] = rp[4 * i + 1] + rv[4 * i + 1] * dt + ay * 0.5 * dt * dt;
            np[4 * i + 2] = rp[4 * i + 2] + rv[4 * i + 2] * dt + az * 0.5 * dt * dt;
            np[4 * i + 3] = rp[4 * i + 3];
            nv[4 * i] = rv[4 * i] + ax * dt;
            nv[4 * i + 1] = rv[4 * i + 1] + ay * dt;
            nv[4 * i + 2] = rv[4 * i + 2] + az * dt;
            nv[4 * i + 3] = rv[4 * i + 3];
            double pmag = fabs(np[4 * i]) + fabs(np[4 * i + 1]) + fabs(np[4 * i + 2]);
            double vmag = fabs(nv[4 * i]) + fabs(nv[4 * i + 1]) + fabs(nv[4 * i + 2]);
            /* Position errors of the previous step also perturb the forces;
             * with |da/dp| <= sum m/eps^3 that feedback is tiny for dt=5e-3
             * and is covered by the factor 4 below. */
            ep[i] += ev[i] * dt + aerr * 0.5 * dt * dt + 4 * u * pmag;
            ev[i] += aerr * dt + 4 * u * vmag;
        }
        double *t;
        t = rp; rp = np; np = t;
        t = rv; rv = nv; nv = t;
    }
    long bad = 0;
    double worst = 0.0;
    for (size_t i = 0; i < (skip_ref ? 0 : n); i++)
        for (int c = 0; c < 4; c++) {
            double tp = 4 * ep[i] + 1e-30, tv = 4 * ev[i] + 1e-30;
            double dpe = fabs(gpos[4 * i + c] - rp[4 * i + c]);
            double dve = fabs(gvel[4 * i + c] - rv[4 * i + c]);
            if (dpe / tp > worst)
                worst = dpe / tp;
            if (dve / tv > worst)
                worst = dve / tv;
            if (!(dpe <= tp) || !(dve <= tv)) {
                if (bad < 10)
                    printf("mismatch body %zu comp %d: pos %.9g ref %.9g (tol "
                           "%.3g), vel %.9g ref %.9g (tol %.3g)\n",
                           i, c, gpos[4 * i + c], rp[4 * i + c], tp,
                           gvel[4 * i + c], rv[4 * i + c], tv);
                bad++;
            }
        }
    ex_dump(&a, gpos, bytes);
    ex_dump(&a, gvel, bytes);

    CL_CHECK(clReleaseKernel(k));
    for (int b = 0; b < 2; b++) {
        CL_CHECK(clReleaseMemObject(dp[b]));
        CL_CHECK(clReleaseMemObject(dv[b]));
    }
    ex_release(&cl);
    free(pos); free(vel); free(gpos); free(gvel);
    free(rp); free(rv); free(np); free(nv); free(ep); free(ev);

    ex_print_kernels();
    if (skip_ref) {
        printf("UNCHECKED nbody n=%zu steps=%lu time_ms=%.1f\n", n, steps,
               (t1 - t0) * 1e3);
        return 0;
    }
    if (bad) {
        printf("FAIL nbody n=%zu steps=%lu mismatches=%ld\n", n, steps, bad);
        return 1;
    }
    printf("PASS nbody n=%zu steps=%lu err_over_tol=%.3f time_ms=%.1f\n", n,
           steps, worst, (t1 - t0) * 1e3);
    return 0;
}
