/* Project mode must emulate with the buffer contents as they were before the launch: the
 * kernel reads a per-work-item loop count from `data` and then overwrites it with 0, so the
 * emulated instruction count depends on whether the emulator saw the pre-launch contents.
 * The input is written with a non-blocking write just before the launch.
 * `inplace_loop --print-source` prints the kernel source (for the test's reference run).
 * Self-checking; prints "kernels: 1". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static const char *src =
    "__kernel void spin(__global uint *data, __global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint n = data[i];\n"
    "  uint acc = (uint)i;\n"
    "  for (uint j = 0; j < n; j++) acc = acc * 3u + (j ^ 5u);\n"
    "  out[i] = acc;\n"
    "  data[i] = 0u;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 256, L = 64 };
/* pre-launch loop count of work-item i */
static cl_uint count(int i) { return 20u + (cl_uint)((i * 7) % 50); }
int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "--print-source") == 0) {
        fputs(src, stdout);
        return 0;
    }
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "spin", &e); OK(e);
    static cl_uint data[N], zero[N], out[N], back[N];
    for (int i = 0; i < N; i++) data[i] = count(i);
    cl_mem bd = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &e); OK(e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof out, NULL, &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof bd, &bd));
    OK(clSetKernelArg(k, 1, sizeof bo, &bo));
    OK(clEnqueueWriteBuffer(q, bd, CL_FALSE, 0, sizeof data, data, 0, NULL, NULL));
    size_t g = N, l = L;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bd, CL_TRUE, 0, sizeof back, back, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        cl_uint acc = (cl_uint)i;
        for (cl_uint j = 0; j < count(i); j++) acc = acc * 3u + (j ^ 5u);
        bad += out[i] != acc || back[i] != 0;
    }
    printf("kernels: 1\n%s inplace_loop\n", bad ? "FAIL" : "PASS");
    clReleaseMemObject(bd); clReleaseMemObject(bo); clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    return bad ? 1 : 0;
}
