/* A histogram with global atomics: balance mode must run it unsplit and say why.
 * Self-checking; prints "kernels: N". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void hist(__global const uint *in, __global uint *bins) {\n"
    "  atomic_inc(&bins[in[get_global_id(0)] % 16]);\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
int main(void) {
    enum { N = 4096 };
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "hist", &e); OK(e);
    static cl_uint in[N], bins[16], ref[16];
    unsigned s = 1;
    for (int i = 0; i < N; i++) { s = s * 1103515245u + 12345u; in[i] = s >> 8; ref[in[i] % 16]++; }
    cl_mem bi = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof bins, bins, &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof bi, &bi));
    OK(clSetKernelArg(k, 1, sizeof bb, &bb));
    size_t g = N, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, sizeof bins, bins, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < 16; i++) bad += bins[i] != ref[i];
    printf("kernels: 1\n%s atomic_hist\n", bad ? "FAIL" : "PASS");
    clReleaseMemObject(bi); clReleaseMemObject(bb); clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    return bad ? 1 : 0;
}
