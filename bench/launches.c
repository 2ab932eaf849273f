/*
 * launches - a launch-heavy app: STEPS launches of one small kernel (a periodic 1-D
 * three-point stencil on ELEMS floats, ping-pong between two buffers, the arguments set
 * before every launch, no events, one clFinish at the end), the shape of app whose cost under
 * an interposer that times every launch is the driver's price of a profiled event per launch
 * (issue 21: 20000 launches of ~6 us on an H200 took +30 % in log mode).
 *
 * usage: launches [STEPS=20000] [ELEMS=65536]
 * Output (stdout), machine readable:
 *   launches steps=S elems=E time_ms=T us_per_launch=U checksum=C
 *   kernels: S
 *   PASS launches ...     (result checked against the host when STEPS*ELEMS <= 2e8)
 * Device: CLPRISM_EXAMPLE_DEVICE="P:D" (default 0:0).
 * Built by `make -C bench` into examples/build/launches.
 */
#include "common.h"
#include "launches_cl.h"

#include <math.h>
#include <string.h>

static const char *USAGE = "launches [STEPS=20000] [ELEMS=65536]";

int main(int argc, char **argv)
{
    ex_args a;
    ex_parse_args(&a, argc, argv, USAGE);
    const unsigned long steps = ex_arg_ulong(&a, 0, 20000, 1, USAGE);
    const unsigned long elems = ex_arg_ulong(&a, 1, 65536, 1, USAGE);
    const size_t bytes = elems * sizeof(float);
    float *x = ex_malloc(bytes), *y = ex_malloc(bytes);
    ex_lcg g = {31415u};
    for (unsigned long i = 0; i < elems; i++)
        x[i] = ex_lcg_float(&g, 0.0f, 1.0f);

    ex_cl cl;
    ex_init(&cl, "launches", kernel_source, NULL, 0);
    cl_mem b[2];
    for (int i = 0; i < 2; i++)
        b[i] = ex_buffer(cl.context, CL_MEM_READ_WRITE, bytes);
    CL_CHECK(clEnqueueWriteBuffer(cl.queue, b[0], CL_TRUE, 0, bytes, x, 0, NULL, NULL));
    cl_kernel k = ex_kernel(cl.program, "stencil");
    const cl_uint n = (cl_uint)elems;
    CL_CHECK(clSetKernelArg(k, 2, sizeof n, &n));
    const size_t local = 64, global = (elems + local - 1) / local * local;
    CL_CHECK(clFinish(cl.queue));

    double t0 = ex_now();
    for (unsigned long s = 0; s < steps; s++) {
        CL_CHECK(clSetKernelArg(k, 0, sizeof(cl_mem), &b[s % 2]));
        CL_CHECK(clSetKernelArg(k, 1, sizeof(cl_mem), &b[(s + 1) % 2]));
        ex_launch(cl.queue, k, 1, &global, &local, 0, NULL, NULL);
    }
    CL_CHECK(clFinish(cl.queue));
    double t1 = ex_now();

    CL_CHECK(clEnqueueReadBuffer(cl.queue, b[steps % 2], CL_TRUE, 0, bytes, y, 0, NULL, NULL));
    double sum = 0;
    for (unsigned long i = 0; i < elems; i++)
        sum += y[i];
    long bad = 0;
    int checked = (double)steps * (double)elems <= 2e8;
    if (checked) {
        float *t = ex_malloc(bytes);
        for (unsigned long s = 0; s < steps; s++) {
            for (unsigned long i = 0; i < elems; i++) {
                float l = x[i == 0 ? elems - 1 : i - 1], r = x[i + 1 == elems ? 0 : i + 1];
                t[i] = 0.25f * l + 0.5f * x[i] + 0.25f * r;
            }
            memcpy(x, t, bytes);
        }
        for (unsigned long i = 0; i < elems; i++)
            bad += !(fabsf(x[i] - y[i]) <= 1e-4f);
        free(t);
    }
    for (int i = 0; i < 2; i++)
        CL_CHECK(clReleaseMemObject(b[i]));
    CL_CHECK(clReleaseKernel(k));
    ex_release(&cl);
    printf("launches steps=%lu elems=%lu time_ms=%.3f us_per_launch=%.3f checksum=%.6e\n",
           steps, elems, (t1 - t0) * 1e3, (t1 - t0) * 1e6 / (double)steps, sum);
    ex_print_kernels();
    free(x);
    free(y);
    if (bad) {
        printf("FAIL launches mismatches=%ld\n", bad);
        return 1;
    }
    printf("PASS launches steps=%lu elems=%lu%s time_ms=%.1f\n", steps, elems,
           checked ? "" : " (unchecked)", (t1 - t0) * 1e3);
    return 0;
}
