/* reread - project mode's shared later copies and the bounded wait for room (issue 19
 * item 1).
 *
 * usage: reread MODE [MiB=16]
 * One kernel reads a buffer of MiB MiB in which every int is 5 and loops in[i] times per
 * work-item (the emulated statistics depend on the data); it is launched three times on
 * three global sizes (4096, 4032, 3968: three emulation keys, each emulated), reading the
 * buffer only. Every launch must see 5s.
 *   keep:   the three launches, nothing written;
 *   shared: the launches wait for a user event; then clEnqueueWriteBuffer overwrites the
 *           buffer with 50s and the event is set: one copy of the buffer serves all three
 *           emulations;
 *   twice:  after each launch the app writes the buffer (5s, 5s, then 50s): three writes,
 *           each needing a copy (the launch waits for a user event of its own, set right
 *           after its write, so its emulation cannot have read the buffer before) while the
 *           emulation before may still hold its copy;
 *   stall:  as twice, but every launch waits for a user event the app sets only after the
 *           last write, so no emulation can end before the writes: a copy that does not fit
 *           can never get room while the app is in the write, and the wait must end by
 *           itself (bounded) rather than deadlock.
 * Self-checking (the kernel's results); prints "kernels: 3". */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void count(__global const int *in, __global int *out) {\n"
    "  size_t i = get_global_id(0);\n"
    "  int s = 0;\n"
    "  for (int k = 0; k < in[i]; k++) s += k;\n"
    "  out[i] = s;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); return 2; } } while (0)
enum { G = 4096, L = 64, N = 3 };
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "keep";
    size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 16;
    size_t bytes = mib << 20, n = bytes / sizeof(int);
    int shared = !strcmp(mode, "shared"), stall = !strcmp(mode, "stall");
    int twice = stall || !strcmp(mode, "twice");
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "count", &e); OK(e);
    cl_mem bin = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e); OK(e);
    cl_mem bout[N];
    for (int j = 0; j < N; j++) {
        bout[j] = clCreateBuffer(c, CL_MEM_WRITE_ONLY, G * sizeof(int), NULL, &e); OK(e);
    }
    int five = 5;
    OK(clEnqueueFillBuffer(q, bin, &five, sizeof five, 0, bytes, 0, NULL, NULL));
    int *fives = malloc(bytes), *fifty = malloc(bytes);
    if (!fives || !fifty) return 2;
    for (size_t i = 0; i < n; i++) { fives[i] = 5; fifty[i] = 50; }
    OK(clFinish(q));
    cl_event go = clCreateUserEvent(c, &e); OK(e);
    int gated = shared || twice;
    for (int j = 0; j < N; j++) {
        size_t g = G - (size_t)j * L, l = L;
        /* twice: this launch's own gate; shared, stall: one gate set at the end */
        cl_event own = go;
        if (twice && !stall) { own = clCreateUserEvent(c, &e); OK(e); }
        OK(clSetKernelArg(k, 0, sizeof bin, &bin));
        OK(clSetKernelArg(k, 1, sizeof bout[j], &bout[j]));
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, gated, gated ? &own : NULL, NULL));
        if (twice)
            OK(clEnqueueWriteBuffer(q, bin, CL_FALSE, 0, bytes, j == N - 1 ? fifty : fives, 0, NULL, NULL));
        if (own != go) { OK(clSetUserEventStatus(own, CL_COMPLETE)); clReleaseEvent(own); }
    }
    if (shared)
        OK(clEnqueueWriteBuffer(q, bin, CL_FALSE, 0, bytes, fifty, 0, NULL, NULL));
    OK(clSetUserEventStatus(go, CL_COMPLETE));
    static int out[G];
    for (int j = 0; j < N; j++) {
        size_t g = G - (size_t)j * L;
        OK(clEnqueueReadBuffer(q, bout[j], CL_TRUE, 0, g * sizeof(int), out, 0, NULL, NULL));
        for (size_t i = 0; i < g; i++)
            if (out[i] != 10) { fprintf(stderr, "launch %d: out[%zu] = %d, not 10\n", j, i, out[i]); return 1; }
    }
    if (shared || twice) {
        int back;
        OK(clEnqueueReadBuffer(q, bin, CL_TRUE, bytes - sizeof back, sizeof back, &back, 0, NULL, NULL));
        if (back != 50) { fprintf(stderr, "the overwrite did not land: %d\n", back); return 1; }
    }
    free(fives); free(fifty);
    clReleaseEvent(go);
    clReleaseMemObject(bin);
    for (int j = 0; j < N; j++) clReleaseMemObject(bout[j]);
    clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    printf("kernels: %d\n", N);
    return 0;
}
