/* One source built three times with build options that define REPS, the number of steps of
 * the kernel's loop: "-DREPS=1", "-DREPS=64", and " -DREPS=1  " (the first options again,
 * spaced otherwise). The first and third builds are one program, the second another, though
 * all three share the source and the kernel name "steps". Each build's kernel is launched
 * LAUNCHES times on the first device, every result checked on the host. Prints, per build,
 * "build B: reps R launches N", then "kernels: 3*LAUNCHES" and PASS/FAIL. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char *src =
    "__kernel void steps(__global const uint *in, __global uint *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  uint x = in[i];\n"
    "  for (int r = 0; r < REPS; r++) x = x * 3u + (uint)r;\n"
    "  out[i] = x;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
enum { N = 16384, L = 64, BUILDS = 3, LAUNCHES = 3 };
static const char *options[BUILDS] = {"-DREPS=1", "-DREPS=64", " -DREPS=1  "};
static const int reps[BUILDS] = {1, 64, 1};
static cl_uint expect(int r, cl_uint x) {
    for (int k = 0; k < r; k++) x = x * 3u + (cl_uint)k;
    return x;
}
int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    static cl_uint in[N], out[N];
    for (int i = 0; i < N; i++) in[i] = (cl_uint)(i * 2654435761u);
    cl_mem bi = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e); OK(e);
    cl_mem bo = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof out, NULL, &e); OK(e);
    cl_program pg[BUILDS];
    cl_kernel k[BUILDS];
    int bad = 0;
    for (int b = 0; b < BUILDS; b++) {
        pg[b] = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
        OK(clBuildProgram(pg[b], 1, &d, options[b], NULL, NULL));
        k[b] = clCreateKernel(pg[b], "steps", &e); OK(e);
        OK(clSetKernelArg(k[b], 0, sizeof bi, &bi));
        OK(clSetKernelArg(k[b], 1, sizeof bo, &bo));
    }
    for (int b = 0; b < BUILDS; b++) {
        for (int n = 0; n < LAUNCHES; n++) {
            size_t g = N, l = L;
            OK(clEnqueueNDRangeKernel(q, k[b], 1, NULL, &g, &l, 0, NULL, NULL));
            OK(clEnqueueReadBuffer(q, bo, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
            for (int i = 0; i < N; i++) bad += out[i] != expect(reps[b], in[i]);
        }
        printf("build %d: reps %d launches %d\n", b, reps[b], LAUNCHES);
    }
    printf("kernels: %d\n%s build_variants\n", BUILDS * LAUNCHES, bad ? "FAIL" : "PASS");
    for (int b = 0; b < BUILDS; b++) { clReleaseKernel(k[b]); clReleaseProgram(pg[b]); }
    clReleaseMemObject(bi); clReleaseMemObject(bo);
    clReleaseCommandQueue(q); clReleaseContext(c);
    return bad ? 1 : 0;
}
