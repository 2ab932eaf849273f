/* One kernel launched many times (argv[1], default 1000) on one NDRange: the compact
 * project-mode log (issue 19 item 4) writes its emulation once and a small reference per
 * launch. Self-checking; prints "launches: N"; argv[2], when given, is a file that receives
 * the output array's bytes. The kernel reads get_global_size, so balance mode builds a
 * variant of the program for the launch shape. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void axpy(__global float *y, __global const float *x, float a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float acc = y[i];\n"
    "  for (int j = 0; j < 8; j++) acc = acc * 0.5f + a * x[(i + j) % get_global_size(0)];\n"
    "  y[i] = acc;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 4096, L = 64 };
int main(int argc, char **argv) {
    int launches = argc > 1 ? atoi(argv[1]) : 1000;
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "axpy", &e); OK(e);
    static float x[N], y[N];
    for (int i = 0; i < N; i++) { x[i] = (float)(i % 17) * 0.25f; y[i] = 1.0f; }
    cl_mem bx = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e); OK(e);
    cl_mem by = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof y, y, &e); OK(e);
    float a = 0.125f;
    OK(clSetKernelArg(k, 0, sizeof by, &by));
    OK(clSetKernelArg(k, 1, sizeof bx, &bx));
    OK(clSetKernelArg(k, 2, sizeof a, &a));
    size_t g = N, l = L;
    for (int i = 0; i < launches; i++)
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, sizeof y, y, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (!(y[i] == y[i]) || y[i] < 0.0f || y[i] > 100.0f) { fprintf(stderr, "bad y[%d] = %f\n", i, y[i]); return 1; }
    if (argc > 2) {
        FILE *f = fopen(argv[2], "wb");
        if (!f || fwrite(y, sizeof y, 1, f) != 1) { perror(argv[2]); return 1; }
        fclose(f);
    }
    printf("launches: %d\n", launches);
    return 0;
}
