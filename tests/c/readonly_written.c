/* readonly_written - a kernel that writes a buffer the app created CL_MEM_READ_ONLY, through a
 * non-const pointer (undefined by the spec, but drivers run it and apps rely on it: hashcat's
 * r_markov fills its READ_ONLY candidate buffer). One launch, result checked.
 *
 * usage: readonly_written [N=8192]
 * Prints "kernels: 1" and exits 0 when every word of the result is right (1 when not, 2 on
 * an OpenCL error). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void fill(__global uint *out, uint c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = (uint)i * 3u + c;\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 8192;
    if (n == 0 || n % 64) { fprintf(stderr, "N must be a positive multiple of 64\n"); return 2; }
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_uint *out = calloc(n, sizeof *out);
    cl_mem b = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *out, out, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "fill", &e); OK(e);
    cl_uint add = 11;
    OK(clSetKernelArg(k, 0, sizeof b, &b));
    OK(clSetKernelArg(k, 1, sizeof add, &add));
    size_t g = n, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof *out, out, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        if (out[i] != (cl_uint)i * 3u + add) { printf("mismatch at %zu: %u\n", i, out[i]); return 1; }
    printf("kernels: 1\n");
    return 0;
}
