/* One program of two kernels: `scale` reads no NDRange extent, `wrap` reads get_global_size
 * (as clpeak's one program holds compute kernels that read none and bandwidth kernels that
 * do). `scale` is launched over two global sizes in turn (argv[1] rounds, default 4), then
 * `wrap` once over a third. Self-checking; argv[2], when given, receives the output array's
 * bytes. In balance mode `scale`'s launches of both shapes share one build of the program on
 * the balance devices; only `wrap` needs a variant with its global size baked in. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void scale(__global float *y, __global const float *x, float a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = y[i] * 0.5f + a * x[i];\n"
    "}\n"
    "__kernel void wrap(__global float *y, __global const float *x, float a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] += a * x[(i + 7) % get_global_size(0)];\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 8192, L = 64 };
int main(int argc, char **argv) {
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel ks = clCreateKernel(pg, "scale", &e); OK(e);
    cl_kernel kw = clCreateKernel(pg, "wrap", &e); OK(e);
    static float x[N], y[N];
    for (int i = 0; i < N; i++) { x[i] = (float)(i % 13) * 0.25f; y[i] = 1.0f; }
    cl_mem bx = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e); OK(e);
    cl_mem by = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &e); OK(e);
    float a = 0.125f;
    cl_kernel both[2] = {ks, kw};
    for (int k = 0; k < 2; k++) {
        OK(clSetKernelArg(both[k], 0, sizeof by, &by));
        OK(clSetKernelArg(both[k], 1, sizeof bx, &bx));
        OK(clSetKernelArg(both[k], 2, sizeof a, &a));
    }
    size_t l = L, shapes[2] = {N, N / 2}, gw = N / 4;
    for (int r = 0; r < rounds; r++)
        for (int s = 0; s < 2; s++)
            OK(clEnqueueNDRangeKernel(q, ks, 1, NULL, &shapes[s], &l, 0, NULL, NULL));
    OK(clEnqueueNDRangeKernel(q, kw, 1, NULL, &gw, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (!(y[i] == y[i]) || y[i] < 0.0f || y[i] > 100.0f) { fprintf(stderr, "bad y[%d] = %f\n", i, y[i]); return 1; }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(y, sizeof y, 1, f) != 1) { perror(argv[2]); return 1; }
        fclose(f);
    }
    printf("rounds: %d\n", rounds);
    return 0;
}
