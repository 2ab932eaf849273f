/* overwrite_after - project mode's deferred (copy-on-write) snapshots (issue 19 item 1).
 *
 * usage: overwrite_after MODE [MiB=16]
 * A kernel reads a buffer of MiB MiB in which every int is 5 and loops in[i] times per
 * work-item (the emulated statistics depend on the data). The launch waits for a user
 * event that the app sets last, so every command below is enqueued before the kernel runs
 * (and before the emulation can read anything).
 *   keep:      nothing else;
 *   overwrite: right after the launch, clEnqueueWriteBuffer overwrites the buffer with 50s
 *              (the kernel, and the emulation, must still see the 5s);
 *   now:       the launch waits for nothing, and a blocking clEnqueueWriteBuffer overwrites
 *              the buffer with 50s right after it (the kernel and the emulation must still
 *              see the 5s);
 *   now_ooo:   as now, on an out-of-order queue (the write waits for the kernel's event);
 *   queue2:    the launch waits for the user event; a blocking clEnqueueWriteBuffer on a
 *              second queue overwrites the buffer with 50s before the app sets the event, so
 *              the kernel sees the 50s (natively too); under project mode the write, held
 *              back for the emulation, which waits for the launch, is let go at the bound;
 *   pre:       the buffer is overwritten with 50s before the launch (the statistics of a
 *              loop of 50);
 *   inplace:   an in-place kernel (reads and writes the same buffer) on the 5s.
 * Self-checking (the kernel's results); prints "kernels: 1". */
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
    "}\n"
    "__kernel void count_inplace(__global int *a) {\n"
    "  size_t i = get_global_id(0);\n"
    "  int s = 0;\n"
    "  for (int k = 0; k < a[i]; k++) s += k;\n"
    "  a[i] = s;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); return 2; } } while (0)
enum { G = 4096, L = 64 };
int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "keep";
    size_t mib = argc > 2 ? (size_t)atol(argv[2]) : 16;
    size_t bytes = mib << 20, n = bytes / sizeof(int);
    int inplace = !strcmp(mode, "inplace");
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    int ooo = !strcmp(mode, "now_ooo");
    cl_command_queue_properties props = ooo ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0;
    cl_command_queue q = clCreateCommandQueue(c, d, props, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, inplace ? "count_inplace" : "count", &e); OK(e);
    cl_mem bin = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e); OK(e);
    cl_mem bout = clCreateBuffer(c, CL_MEM_WRITE_ONLY, G * sizeof(int), NULL, &e); OK(e);
    int five = 5;
    OK(clEnqueueFillBuffer(q, bin, &five, sizeof five, 0, bytes, 0, NULL, NULL));
    int *fifty = malloc(bytes);
    if (!fifty) return 2;
    for (size_t i = 0; i < n; i++) fifty[i] = 50;
    if (!strcmp(mode, "pre"))
        OK(clEnqueueWriteBuffer(q, bin, CL_TRUE, 0, bytes, fifty, 0, NULL, NULL));
    OK(clFinish(q));
    OK(clSetKernelArg(k, 0, sizeof bin, &bin));
    if (!inplace) OK(clSetKernelArg(k, 1, sizeof bout, &bout));
    cl_event go = clCreateUserEvent(c, &e); OK(e);
    size_t g = G, l = L;
    int now = !strcmp(mode, "now") || ooo;
    cl_event kev;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, now ? 0 : 1, now ? NULL : &go, &kev));
    if (!strcmp(mode, "overwrite"))
        OK(clEnqueueWriteBuffer(q, bin, CL_FALSE, 0, bytes, fifty, 0, NULL, NULL));
    if (now)
        OK(clEnqueueWriteBuffer(q, bin, CL_TRUE, 0, bytes, fifty, 1, &kev, NULL));
    int queue2 = !strcmp(mode, "queue2");
    if (queue2) {
        cl_command_queue q2 = clCreateCommandQueue(c, d, 0, &e); OK(e);
        OK(clEnqueueWriteBuffer(q2, bin, CL_TRUE, 0, bytes, fifty, 0, NULL, NULL));
        clReleaseCommandQueue(q2);
    }
    OK(clSetUserEventStatus(go, CL_COMPLETE));
    static int out[G];
    OK(clEnqueueReadBuffer(q, inplace ? bin : bout, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    int v = !strcmp(mode, "pre") || queue2 ? 50 : 5, want = v * (v - 1) / 2;
    for (int i = 0; i < G; i++)
        if (out[i] != want) { fprintf(stderr, "out[%d] = %d, not %d\n", i, out[i], want); return 1; }
    if (!strcmp(mode, "overwrite") || now || queue2) {
        int back;
        OK(clEnqueueReadBuffer(q, bin, CL_TRUE, bytes - sizeof back, sizeof back, &back, 0, NULL, NULL));
        if (back != 50) { fprintf(stderr, "the overwrite did not land: %d\n", back); return 1; }
    }
    free(fifty);
    clReleaseEvent(go);
    clReleaseEvent(kev);
    clReleaseMemObject(bin); clReleaseMemObject(bout);
    clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    printf("kernels: 1\n");
    return 0;
}
