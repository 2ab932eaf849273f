/*
 * transpose - tiled matrix transpose through __local memory (AMD APP SDK
 * MatrixTranspose, Panwar et al. Table II).
 *
 * usage: transpose [W=1024] [reps=4] [--dump FILE]
 *   Input is (W/2) rows x W columns (non-square on purpose), W a multiple of
 *   32 (work-group 16x16). The kernel is launched `reps` times; each time the
 *   input is re-uploaded non-blocking and the output read back blocking.
 *   Pure data movement: the result must equal the reference bit for bit.
 */
#include "common.h"
#include "transpose_cl.h"

#include <string.h>

#define TILE 16
static const char *USAGE =
    "transpose [W=1024, multiple of 32; matrix is W/2 x W] [reps=4] [--dump FILE]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const size_t w = ex_arg_ulong(&a, 0, 1024, 2 * TILE, USAGE);
    const unsigned long reps = ex_arg_ulong(&a, 1, 4, 1, USAGE);
    if (w % (2 * TILE))
        ex_usage(USAGE, "W must be a multiple of 32");
    const size_t h = w / 2, elems = w * h, bytes = elems * sizeof(float);

    float *in = ex_malloc(bytes), *out = ex_malloc(bytes);
    ex_lcg g = {4242u};
    for (size_t i = 0; i < elems; i++)
        in[i] = ex_lcg_float(&g, -100.0f, 100.0f);

    ex_cl cl;
    ex_init(&cl, "transpose", kernel_source, "-DTILE=16", 0);
    cl_mem din = ex_buffer(cl.context, CL_MEM_READ_ONLY, bytes);
    cl_mem dout = ex_buffer(cl.context, CL_MEM_WRITE_ONLY, bytes);
    cl_kernel k = ex_kernel(cl.program, "transpose");
    cl_uint wu = (cl_uint)w, hu = (cl_uint)h;
    CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &dout));
    CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &din));
    CL_CHECK(clSetKernelArg(k, 2, TILE * (TILE + 1) * sizeof(float), NULL));
    CL_CHECK(clSetKernelArg(k, 3, sizeof(cl_uint), &wu));
    CL_CHECK(clSetKernelArg(k, 4, sizeof(cl_uint), &hu));

    double t0 = ex_now();
    const size_t gws[2] = {w, h}, lws[2] = {TILE, TILE};
    long bad = 0;
    for (unsigned long r = 0; r < reps; r++) {
        memset(out, 0, bytes);
        CL_CHECK(clEnqueueWriteBuffer(cl.queue, din, CL_FALSE, 0, bytes, in, 0,
                                      NULL, NULL));
        ex_launch(cl.queue, k, 2, gws, lws, 0, NULL, NULL);
        CL_CHECK(clEnqueueReadBuffer(cl.queue, dout, CL_TRUE, 0, bytes, out, 0,
                                     NULL, NULL));
        /* Exact check (tolerance 0: no arithmetic on the values). */
        for (size_t y = 0; y < h; y++)
            for (size_t x = 0; x < w; x++)
                if (memcmp(&out[x * h + y], &in[y * w + x], sizeof(float))) {
                    if (bad < 10)
                        printf("mismatch rep %lu out[%zu][%zu] = %.9g, ref "
                               "%.9g\n",
                               r, x, y, out[x * h + y], in[y * w + x]);
                    bad++;
                }
    }
    double t1 = ex_now();
    ex_dump(&a, out, bytes);

    CL_CHECK(clReleaseKernel(k));
    CL_CHECK(clReleaseMemObject(din));
    CL_CHECK(clReleaseMemObject(dout));
    ex_release(&cl);
    free(in);
    free(out);

    ex_print_kernels();
    if (bad) {
        printf("FAIL transpose w=%zu h=%zu mismatches=%ld\n", w, h, bad);
        return 1;
    }
    printf("PASS transpose w=%zu h=%zu reps=%lu time_ms=%.1f\n", w, h, reps,
           (t1 - t0) * 1e3);
    return 0;
}
