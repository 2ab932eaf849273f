/* saturate - two kernels whose clang -O2 output llvm-spirv 15 rejects (issue 32 item 2):
 * `sat` (z = x + y; z < x ? UINT_MAX : z, which InstCombine turns into llvm.uadd.sat:
 * InvalidFunctionCall) and `cond` (PolyBench-ACC 3DConvolution's bounds test, which the SLP
 * vectorizer turns into a freeze <4 x i1>: InvalidInstruction). Each is launched once on
 * 4096 work-items in work-groups of 64; results are checked on the host.
 * Prints "kernels: 2" and PASS, or FAIL with the first wrong value. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char *src =
    "__kernel void sat(__global const uint *a, __global uint *o) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint x = a[i], y = a[i + 4096];\n"
    "  uint z = x + y;\n"
    "  o[i] = z < x ? 0xffffffffu : z;\n"
    "}\n"
    "__kernel void cond(__global const uint *a, __global uint *o, int ni, int nj, int c) {\n"
    "  int k = get_global_id(0), j = a[k];\n"
    "  if (c < ni - 1 && j < nj - 1 && k < ni - 1 && c > 0 && j > 0 && k > 0)\n"
    "    o[k] = a[k + 1] + a[k - 1];\n"
    "  else\n"
    "    o[k] = 2;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 4096, L = 64 };
static cl_uint a[2 * N], o[N];
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    for (int i = 0; i < N; i++) { a[i] = i; a[N + i] = 0xfffff000u + i; }
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &e); OK(e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_WRITE_ONLY, sizeof o, NULL, &e); OK(e);
    size_t g = N, l = L;
    int ni = 1000, nj = 1000, cc = 5;
    const char *names[2] = {"sat", "cond"};
    for (int kk = 0; kk < 2; kk++) {
        cl_kernel k = clCreateKernel(pg, names[kk], &e); OK(e);
        OK(clSetKernelArg(k, 0, sizeof ba, &ba));
        OK(clSetKernelArg(k, 1, sizeof bo, &bo));
        if (kk == 1) {
            OK(clSetKernelArg(k, 2, sizeof ni, &ni));
            OK(clSetKernelArg(k, 3, sizeof nj, &nj));
            OK(clSetKernelArg(k, 4, sizeof cc, &cc));
        }
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
        OK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof o, o, 0, NULL, NULL));
        for (int i = 0; i < N; i++) {
            cl_uint want = kk == 0 ? (a[i] + a[N + i] < a[i] ? 0xffffffffu : a[i] + a[N + i])
                                   : (i > 0 && i < ni - 1 && i < nj - 1 ? 2u * i : 2u);
            if (o[i] != want) { printf("FAIL: %s[%d] = %u, not %u\n", names[kk], i, o[i], want); return 1; }
        }
        clReleaseKernel(k);
    }
    clReleaseMemObject(ba); clReleaseMemObject(bo);
    clReleaseProgram(pg); clReleaseCommandQueue(q); clReleaseContext(c);
    printf("kernels: 2\nPASS\n");
    return 0;
}
