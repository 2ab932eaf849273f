/* group_order - two kernels over N work-items in work-groups of 64: "racy" reads flag[0] in
 * every work-group while work-item 0 writes it (its output depends on the order in which the
 * work-groups run, as Rodinia particlefilter's normalize_weights_kernel), "plain" only reads
 * flag[0]. Balance mode must keep "racy" whole and may split "plain".
 *
 * usage: group_order [N=65536]
 * Prints "kernels: 2" and exits 0 when "plain"'s output is right (1 when not, 2 on an OpenCL
 * error); "racy"'s output is not checked (any order of the work-groups is legal). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void racy(__global const uint *in, __global uint *out, __global uint *flag) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] + flag[0];\n"
    "  if (i == 0) flag[0] = 7u;\n"
    "}\n"
    "__kernel void plain(__global const uint *in, __global uint *out, __global const uint *flag) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 2u + flag[0];\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

int main(int argc, char **argv) {
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;
    if (n == 0 || n % 64) { fprintf(stderr, "N must be a positive multiple of 64\n"); return 2; }
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_uint *host = malloc(n * sizeof *host);
    for (size_t i = 0; i < n; i++) host[i] = (cl_uint)i;
    cl_uint one = 1;
    cl_mem in = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *host, host, &e); OK(e);
    cl_mem out = clCreateBuffer(c, CL_MEM_WRITE_ONLY, n * sizeof *host, NULL, &e); OK(e);
    cl_mem flag = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof one, &one, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    const char *names[2] = {"racy", "plain"};
    size_t g = n, l = 64;
    for (int k = 0; k < 2; k++) {
        cl_kernel kr = clCreateKernel(pg, names[k], &e); OK(e);
        OK(clSetKernelArg(kr, 0, sizeof in, &in));
        OK(clSetKernelArg(kr, 1, sizeof out, &out));
        OK(clSetKernelArg(kr, 2, sizeof flag, &flag));
        OK(clEnqueueNDRangeKernel(q, kr, 1, NULL, &g, &l, 0, NULL, NULL));
        OK(clFinish(q));
        clReleaseKernel(kr);
    }
    cl_uint f;
    OK(clEnqueueReadBuffer(q, out, CL_TRUE, 0, n * sizeof *host, host, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, flag, CL_TRUE, 0, sizeof f, &f, 0, NULL, NULL));
    if (f != 7u) { printf("flag is %u, not 7\n", f); return 1; }
    for (size_t i = 0; i < n; i++)
        if (host[i] != (cl_uint)i * 2u + 7u) { printf("mismatch at %zu: %u\n", i, host[i]); return 1; }
    printf("kernels: 2\n");
    return 0;
}
