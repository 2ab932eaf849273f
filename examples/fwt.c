/*
 * fwt - fast Walsh transform by log2(N) dependent launches of one butterfly
 * kernel (AMD APP SDK FastWalshTransform, Panwar et al. Table II).
 *
 * usage: fwt [N=1048576] [reps=2] [--dump FILE]
 *   N a power of two, 512 <= N <= 2^21 (work-group 256 over N/2 work-items).
 *   Each repetition re-uploads the input (non-blocking), runs log2(N)
 *   stages, and reads the result back (blocking).
 *   Inputs are integers in [-8, 8] stored as float: every partial result is
 *   an integer of magnitude <= 8 * N <= 2^24, exactly representable, so the
 *   float result is exact and compared with tolerance 0.
 */
#include "common.h"
#include "fwt_cl.h"

#include <string.h>

#define WG 256
static const char *USAGE =
    "fwt [N=1048576, power of two in [512, 2^21]] [reps=2] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t n = ex_arg_ulong(&a, 0, 1048576, 2 * WG, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 2, 1, USAGE);
    if ((n & (n - 1)) || n > (1u << 21))
        ex_usage(USAGE, "N must be a power of two <= 2^21");
    const size_t bytes = n * sizeof(float);

    float *in = ex_malloc(bytes), *out = ex_malloc(bytes), *ref = ex_malloc(bytes);
    ex_lcg g = {31337u};
    for (size_t i = 0; i < n; i++)
        in[i] = (float)((int)ex_lcg_below(&g, 17) - 8);

    /* Reference: the same butterflies on the host (exact in float). */
    memcpy(ref, in, bytes);
    for (size_t step = 1; step < n; step <<= 1)
        for (size_t t = 0; t < n / 2; t++) {
            size_t pair = 2 * step * (t / step) + t % step, match = pair + step;
            float x = ref[pair], y = ref[match];
            ref[pair] = x + y;
            ref[match] = x - y;
        }

    ex_cl cl;
    ex_init(&cl, "fwt", kernel_source, NULL, 0);
    cl_mem d = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    cl_kernel k = ex_kernel(cl.program, "fwt_stage");
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &d));

    long bad = 0;
    double t0 = ex_now();
    const size_t gws = n / 2, lws = WG;
    for (unsigned long r = 0; r < reps; r++) {
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, d, CL_FALSE, 0, bytes, in, 0,
                                      NULL, NULL));
        for (cl_uint step = 1; step < n; step <<= 1) {
            CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_uint), &step));
            ex_launch(cl.queue, k, 1, &gws, &lws, 0, NULL, NULL);
        }
        CL_CHECK(clEnqueueReadBuffer(cl.queue, d, CL_TRUE, 0, bytes, out, 0,
                                     NULL, NULL));
        for (size_t i = 0; i < n; i++)
            if (out[i] != ref[i]) {
                if (bad < 10)
                    printf("mismatch rep %lu out[%zu] = %.9g, ref %.9g\n", r, i,
                           out[i], ref[i]);
                bad++;
            }
    }
    double t1 = ex_now();
    ex_dump(&a, out, bytes);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(d));
    ex_release(&cl);
    free(in);
    free(out);
    free(ref);

    ex_print_kernels();
    if (bad) {
        printf("FAIL fwt n=%zu mismatches=%ld\n", n, bad);
        return 1;
    }
    printf("PASS fwt n=%zu reps=%lu stages=%lu time_ms=%.1f\n", n, reps,
           ex_kernel_launches / reps, (t1 - t0) * 1e3);
    return 0;
}
