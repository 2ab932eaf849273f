/* Two programs built from different sources, each with a kernel named "twin" that computes
 * something different. Launches alternate A, B, A, B on the same buffers, with a blocking
 * read-back after each; every result is checked on the host. Balance mode keys what it
 * learns about a kernel by program, build options and name (exec Job::kernel_id), so the
 * first launch of B is a first launch too. Prints "kernels: 4" and PASS/FAIL. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char *src_a =
    "__kernel void twin(__global const uint *in, __global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = in[i] * 3u + 1u;\n"
    "}\n";
static const char *src_b =
    "__kernel void twin(__global const uint *in, __global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  out[i] = (in[i] ^ 0x5a5au) + (uint)i;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 16384, L = 64 };
static cl_uint expect(int which, cl_uint x, cl_uint i) { return which ? (x ^ 0x5a5au) + i : x * 3u + 1u; }
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    const char *srcs[2] = {src_a, src_b};
    cl_program pg[2];
    cl_kernel k[2];
    static cl_uint in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (cl_uint)(i * 2654435761u);
    cl_mem bi = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e); OK(e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof out, NULL, &e); OK(e);
    for (int w = 0; w < 2; w++) {
        pg[w] = clCreateProgramWithSource(c, 1, &srcs[w], NULL, &e); OK(e);
        OK(clBuildProgram(pg[w], 1, &d, "", NULL, NULL));
        k[w] = clCreateKernel(pg[w], "twin", &e); OK(e);
        OK(clSetKernelArg(k[w], 0, sizeof bi, &bi));
        OK(clSetKernelArg(k[w], 1, sizeof bo, &bo));
    }
    int bad = 0;
    for (int launch = 0; launch < 4; launch++) {
        int w = launch % 2;
        size_t g = N, l = L;
        OK(clEnqueueNDRangeKernel(q, k[w], 1, NULL, &g, &l, 0, NULL, NULL));
        OK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
        for (int i = 0; i < N; i++) bad += out[i] != expect(w, in[i], (cl_uint)i);
    }
    printf("kernels: 4\n%s twin_kernels\n", bad ? "FAIL" : "PASS");
    for (int w = 0; w < 2; w++) { clReleaseKernel(k[w]); clReleaseProgram(pg[w]); }
    clReleaseMemObject(bi); clReleaseMemObject(bo);
    clReleaseCommandQueue(q); clReleaseContext(c);
    return bad ? 1 : 0;
}
