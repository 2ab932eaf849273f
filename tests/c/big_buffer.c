/* A kernel reading from one large buffer (argv[1] MiB, default 1024): work-item i reads
 * in[i] and in[n - 1 - i], so the first work-group touches two pages at the two ends of the
 * buffer. Project mode reads back only those pages of the snapshot (issue 19 item 1).
 * The buffer is filled on the device (clEnqueueFillBuffer): the app holds no host copy.
 * Self-checking; prints "kernels: 1". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void ends(__global const float *in, __global float *out, ulong n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] + 2.0f * in[n - 1 - i];\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { G = 4096, L = 64 };
int main(int argc, char **argv) {
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 1024;
    size_t bytes = mib << 20;
    cl_ulong n = bytes / sizeof(float);
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "ends", &e); OK(e);
    cl_mem bin = clCreateBuffer(c, CL_MEM_READ_ONLY, bytes, NULL, &e); OK(e);
    cl_mem bout = clCreateBuffer(c, CL_MEM_WRITE_ONLY, G * sizeof(float), NULL, &e); OK(e);
    float v = 1.5f;
    OK(clEnqueueFillBuffer(q, bin, &v, sizeof v, 0, bytes, 0, NULL, NULL));
    OK(clSetKernelArg(k, 0, sizeof bin, &bin));
    OK(clSetKernelArg(k, 1, sizeof bout, &bout));
    OK(clSetKernelArg(k, 2, sizeof n, &n));
    size_t g = G, l = L;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    static float out[G];
    OK(clEnqueueReadBuffer(q, bout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    for (int i = 0; i < G; i++)
        if (out[i] != 4.5f) { fprintf(stderr, "out[%d] = %f\n", i, out[i]); return 1; }
    printf("kernels: 1\n");
    return 0;
}
