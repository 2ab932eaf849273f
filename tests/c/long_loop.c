/* long_loop - one launch of a kernel whose work-items each run N (argv[1], default 40e6)
 * iterations of integer arithmetic: quick on a device, far beyond the emulator's
 * instruction budget. Prints "kernels: 1" and the result words; exits 0 when they equal a
 * host computation (1 when not, 2 on an OpenCL error). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void spin(__global uint *o, uint n) {\n"
    "  uint x = (uint)get_global_id(0) + 1u;\n"
    "  for (uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;\n"
    "  o[get_global_id(0)] = x;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)
#define G 4

int main(int argc, char **argv) {
    cl_uint n = argc > 1 ? (cl_uint)strtoul(argv[1], NULL, 10) : 40000000u;
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, NULL, NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "spin", &e); OK(e);
    cl_mem b = clCreateBuffer(c, CL_MEM_WRITE_ONLY, G * 4, NULL, &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof b, &b));
    OK(clSetKernelArg(k, 1, sizeof n, &n));
    size_t g = G, l = G;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    cl_uint h[G];
    OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL));
    int bad = 0;
    printf("kernels: 1\n");
    for (cl_uint t = 0; t < G; t++) {
        cl_uint x = t + 1;
        for (cl_uint i = 0; i < n; i++) x = x * 1664525u + 1013904223u;
        bad += x != h[t];
        printf("%u\n", h[t]);
    }
    clReleaseMemObject(b); clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    return bad ? 1 : 0;
}
