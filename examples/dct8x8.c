/*
 * dct8x8 - 8x8 block DCT of an image, forward then inverse (AMD APP SDK
 * DCT, Boyer ch. 4 Table 4.3).
 *
 * usage: dct8x8 [W=512] [reps=1] [--dump FILE]
 *   W x W image of values in [0, 255], W a multiple of 8 (work-group 8x8).
 *   Each repetition launches the forward transform and then the inverse
 *   transform on its output (2 dependent launches; the inverse waits on the
 *   forward launch's event). --dump writes the forward coefficients then
 *   the reconstructed image (float).
 */
#include "common.h"
#include "dct8x8_cl.h"

#include <math.h>

#define BS 8
#define PI 3.14159265358979323846
static const char *USAGE = "dct8x8 [W=512, multiple of 8] [reps=1] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t w = ex_arg_ulong(&a, 0, 512, BS, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 1, 1, USAGE);
    if (w % BS)
        ex_usage(USAGE, "W must be a multiple of 8");
    const size_t elems = w * w, bytes = elems * sizeof(float);

    double D[BS][BS];
    float Df[BS * BS];
    for (int k = 0; k < BS; k++)
        for (int n = 0; n < BS; n++) {
            double c = k == 0 ? sqrt(1.0 / BS) : sqrt(2.0 / BS);
            D[k][n] = c * cos((2 * n + 1) * k * PI / (2.0 * BS));
            Df[k * BS + n] = (float)D[k][n];
        }
    float *img = ex_malloc(bytes), *coef = ex_malloc(bytes), *back = ex_malloc(bytes);
    ex_lcg g = {8888u};
    for (size_t i = 0; i < elems; i++)
        img[i] = ex_lcg_float(&g, 0.0f, 255.0f);

    ex_cl cl;
    ex_init(&cl, "dct8x8", kernel_source, NULL, 0);
    cl_mem din = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dcoef = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    cl_mem dback = ex_buffer(cl.context, CL_MEM_WRITE_ONLY, bytes);
    cl_mem dD = ex_buffer(cl.context, CL_MEM_READ_ONLY, sizeof Df);
    cl_kernel kf = ex_kernel(cl.program, "dct8x8");
    cl_kernel ki = ex_kernel(cl.program, "dct8x8");
    cl_uint wu = (cl_uint)w, fwd = 0, inv = 1;
    CL_CHECK(clSetKernelArg(kf, 0, sizeof(cl_mem), &dcoef));
    CL_CHECK(clSetKernelArg(kf, 1, sizeof(cl_mem), &din));
    CL_CHECK(clSetKernelArg(kf, 2, sizeof(cl_mem), &dD));
    CL_CHECK(clSetKernelArg(kf, 3, BS * BS * sizeof(float), NULL));
    CL_CHECK(clSetKernelArg(kf, 4, sizeof(cl_uint), &wu));
    CL_CHECK(clSetKernelArg(kf, 5, sizeof(cl_uint), &fwd));
    CL_CHECK(clSetKernelArg(ki, 0, sizeof(cl_mem), &dback));
    CL_CHECK(clSetKernelArg(ki, 1, sizeof(cl_mem), &dcoef));
    CL_CHECK(clSetKernelArg(ki, 2, sizeof(cl_mem), &dD));
    CL_CHECK(clSetKernelArg(ki, 3, BS * BS * sizeof(float), NULL));
    CL_CHECK(clSetKernelArg(ki, 4, sizeof(cl_uint), &wu));
    CL_CHECK(clSetKernelArg(ki, 5, sizeof(cl_uint), &inv));

    double t0 = ex_now();
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, dD, CL_TRUE, 0, sizeof Df, Df, 0,
                                  NULL, NULL));
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, din, CL_FALSE, 0, bytes, img, 0,
                                  NULL, NULL));
    const size_t gws[2] = {w, w}, lws[2] = {BS, BS};
    for (unsigned long r = 0; r < reps; r++) {
        cl_event ef;
        ex_launch(cl.queue, kf, 2, gws, lws, 0, NULL, &ef);
        ex_launch(cl.queue, ki, 2, gws, lws, 1, &ef, NULL);
        CL_CHECK(clReleaseEvent(ef));
    }
    /* coefficients non-blocking, reconstruction blocking. */
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dcoef, CL_FALSE, 0, bytes, coef, 0,
                                 NULL, NULL));
    CL_CHECK(clEnqueueReadBuffer(cl.queue, dback, CL_TRUE, 0, bytes, back, 0,
                                 NULL, NULL));
    CL_CHECK(clFinish(cl.queue));
    double t1 = ex_now();

    /* Tolerance: each stage is a length-8 dot product with a row of D
     * (sum |D_kn| <= sqrt(8) for an orthonormal row). With M = max |x|, the
     * stage-1 values are <= sqrt(8) M with error <= gamma_8 sqrt(8) M, and
     * the output error is <= 2 * gamma_8 * 8 M = 128 u M (u = 2^-24, Higham
     * eq. 3.5), plus the float rounding of D (relative u per coefficient).
     * We allow 256 u M for the forward transform and 512 u M for the round
     * trip (forward + inverse, compared with the original image). */
    const double u = ldexp(1.0, -24), M = 255.0;
    const double tolf = 256 * u * M, tolr = 512 * u * M;
    long bad = 0;
    double maxf = 0, maxr = 0;
    for (size_t by = 0; by < w; by += BS)
        for (size_t bx = 0; bx < w; bx += BS) {
            double tmp[BS][BS];
            for (int y = 0; y < BS; y++)
                for (int x = 0; x < BS; x++) {
                    double s = 0;
                    for (int k = 0; k < BS; k++)
                        s += D[y][k] * img[(by + k) * w + bx + x];
                    tmp[y][x] = s;
                }
            for (int y = 0; y < BS; y++)
                for (int x = 0; x < BS; x++) {
                    double s = 0;
                    for (int k = 0; k < BS; k++)
                        s += tmp[y][k] * D[x][k];
                    size_t i = (by + y) * w + bx + x;
                    double ef = fabs(coef[i] - s), er = fabs(back[i] - img[i]);
                    if (ef > maxf)
                        maxf = ef;
                    if (er > maxr)
                        maxr = er;
                    if (!(ef <= tolf) || !(er <= tolr)) {
                        if (bad < 10)
                            printf("mismatch [%zu][%zu]: coef %.7g ref %.7g "
                                   "(tol %.2g), back %.7g orig %.7g (tol %.2g)\n",
                                   by + y, bx + x, coef[i], s, tolf, back[i],
                                   img[i], tolr);
                        bad++;
                    }
                }
        }
    ex_dump(&a, coef, bytes);
    ex_dump(&a, back, bytes);

    CL_CHECK(clReleaseKernel(kf));
    CL_CHECK(clReleaseKernel(ki));
    CL_CHECK(clReleaseMemObject(din));
    CL_CHECK(clReleaseMemObject(dcoef));
    CL_CHECK(clReleaseMemObject(dback));
    CL_CHECK(clReleaseMemObject(dD));
    ex_release(&cl);
    free(img);
    free(coef);
    free(back);

    ex_print_kernels();
    if (bad) {
        printf("FAIL dct8x8 w=%zu mismatches=%ld\n", w, bad);
        return 1;
    }
    printf("PASS dct8x8 w=%zu reps=%lu max_err_fwd=%.2e max_err_roundtrip=%.2e "
           "time_ms=%.1f\n",
           w, reps, maxf, maxr, (t1 - t0) * 1e3);
    return 0;
}
