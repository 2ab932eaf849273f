/* A small OpenCL app with known launches, for `clprism report` and `clprism run` tests.
 * Uses every device of the first platform (PoCL: POCL_DEVICES="pthread pthread" gives two).
 * Launches: "add" 5 times (1D, global 1024, local 64) on device 0, "scale" 3 times
 * (1D, global 4096, driver-chosen local size) on the last device, "fill2d" 2 times
 * (2D, global 64x32, local 8x8, offset 0x0) on device 0, and one "add" enqueue with an
 * impossible work-group size that the driver rejects.
 * Prints "count KERNEL N" per kernel name (enqueue calls, the rejected one included) and
 * "kernels: N" (all enqueue calls). Checks the results of "add". Exits with argv[1] (default 0),
 * or 1 if a result is wrong, 2 on an OpenCL error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); exit(2); } } while (0)

static const char *src =
    "__kernel void add(__global const float *a, __global const float *b, __global float *c)\n"
    "{ size_t i = get_global_id(0); c[i] = a[i] + b[i]; }\n"
    "__kernel void scale(__global float *x, float s) { size_t i = get_global_id(0); x[i] *= s; }\n"
    "__kernel void fill2d(__global int *o) {\n"
    "  o[get_global_id(1) * get_global_size(0) + get_global_id(0)] = (int)get_global_id(0); }\n";

int main(int argc, char **argv) {
    int code = argc > 1 ? atoi(argv[1]) : 0;
    cl_platform_id p; cl_device_id d[8]; cl_uint nd = 0; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 8, d, &nd));
    cl_context c = clCreateContext(NULL, nd, d, NULL, NULL, &e); OK(e);
    cl_command_queue q0 = clCreateCommandQueue(c, d[0], 0, &e); OK(e);
    cl_command_queue q1 = clCreateCommandQueue(c, d[nd - 1], 0, &e); OK(e);
    cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(prog, nd, d, "", NULL, NULL));
    cl_kernel kadd = clCreateKernel(prog, "add", &e); OK(e);
    cl_kernel kscale = clCreateKernel(prog, "scale", &e); OK(e);
    cl_kernel kfill = clCreateKernel(prog, "fill2d", &e); OK(e);

    enum { N = 4096 };
    static float a[N], b[N], out[N];
    for (int i = 0; i < N; i++) { a[i] = (float)i; b[i] = 2.0f * i; }
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof b, b, &e); OK(e);
    cl_mem bc = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof out, NULL, &e); OK(e);
    cl_mem bx = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof a, a, &e); OK(e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_READ_WRITE, 64 * 32 * sizeof(int), NULL, &e); OK(e);
    OK(clSetKernelArg(kadd, 0, sizeof ba, &ba));
    OK(clSetKernelArg(kadd, 1, sizeof bb, &bb));
    OK(clSetKernelArg(kadd, 2, sizeof bc, &bc));
    float s = 1.5f;
    OK(clSetKernelArg(kscale, 0, sizeof bx, &bx));
    OK(clSetKernelArg(kscale, 1, sizeof s, &s));
    OK(clSetKernelArg(kfill, 0, sizeof bo, &bo));

    int n_add = 0, n_scale = 0, n_fill = 0;
    size_t g1 = 1024, l1 = 64;
    for (int i = 0; i < 5; i++, n_add++) OK(clEnqueueNDRangeKernel(q0, kadd, 1, NULL, &g1, &l1, 0, NULL, NULL));
    size_t g2 = 4096;
    for (int i = 0; i < 3; i++, n_scale++) OK(clEnqueueNDRangeKernel(q1, kscale, 1, NULL, &g2, NULL, 0, NULL, NULL));
    size_t g3[2] = {64, 32}, l3[2] = {8, 8}, o3[2] = {0, 0};
    for (int i = 0; i < 2; i++, n_fill++) OK(clEnqueueNDRangeKernel(q0, kfill, 2, o3, g3, l3, 0, NULL, NULL));
    size_t gbad = 1 << 20, lbad = 1 << 20;  /* larger than any CL_DEVICE_MAX_WORK_GROUP_SIZE */
    cl_int r = clEnqueueNDRangeKernel(q0, kadd, 1, NULL, &gbad, &lbad, 0, NULL, NULL);
    n_add++;
    if (r == CL_SUCCESS) { fprintf(stderr, "the impossible launch was accepted\n"); exit(2); }
    OK(clFinish(q0));
    OK(clFinish(q1));
    OK(clEnqueueReadBuffer(q0, bc, CL_TRUE, 0, g1 * sizeof(float), out, 0, NULL, NULL));
    for (size_t i = 0; i < g1; i++)
        if (out[i] != 3.0f * i) { fprintf(stderr, "add: wrong result at %zu\n", i); return 1; }
    printf("count add %d\ncount scale %d\ncount fill2d %d\n", n_add, n_scale, n_fill);
    printf("kernels: %d\n", n_add + n_scale + n_fill);
    clReleaseMemObject(ba); clReleaseMemObject(bb); clReleaseMemObject(bc);
    clReleaseMemObject(bx); clReleaseMemObject(bo);
    clReleaseKernel(kadd); clReleaseKernel(kscale); clReleaseKernel(kfill);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q0); clReleaseCommandQueue(q1);
    clReleaseContext(c);
    return code;
}
