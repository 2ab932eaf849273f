/* A context made with clCreateContextFromType (as cl.hpp's typed constructor makes clpeak's),
 * one small kernel launched argv[1] times (default 20). Self-checking; argv[2], when given,
 * receives the output array's bytes. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void advance(__global float *y) {\n"
    "  size_t i = get_global_id(0);\n"
    "  y[i] = y[i] * 0.5f + (float)(i % 7);\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 16384, L = 64 };
int main(int argc, char **argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 20;
    cl_platform_id p; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)p, 0};
    cl_context c = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &e); OK(e);
    cl_device_id ds[16];
    size_t bytes = 0;
    OK(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof ds, ds, &bytes));
    if (bytes < sizeof ds[0]) { fprintf(stderr, "no device in the context\n"); return 2; }
    cl_device_id d = ds[0];
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "advance", &e); OK(e);
    static float y[N];
    for (int i = 0; i < N; i++) y[i] = 1.0f;
    cl_mem by = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof by, &by));
    size_t g = N, l = L;
    for (int i = 0; i < launches; i++)
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (!(y[i] == y[i]) || y[i] < 0.0f || y[i] > 20.0f) { fprintf(stderr, "bad y[%d] = %f\n", i, y[i]); return 1; }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(y, sizeof y, 1, f) != 1) { perror(argv[2]); return 1; }
        fclose(f);
    }
    printf("launches: %d\n", launches);
    return 0;
}
