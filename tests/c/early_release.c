/* early_release - the app releases objects while commands on them are still queued, and
 * its kernel source and buffer contents carry marker strings (for the log-secrecy test).
 *
 * Enqueues b[i] = a[i] + 1 over N work-items, then at once releases the kernel, the program
 * and buffer a; enqueues a non-blocking read of b with an event, releases b, flushes and
 * releases the queue, and only then waits for the read's event. Prints "kernels: 1" and
 * exits 0 when every word of b is right (1 when not, 2 on an OpenCL error). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 4096
static const char *src =
    "/* SECRET_SOURCE_MARKER_7f3a */\n"
    "__kernel void add1(__global const uint *a, __global uint *b) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = a[i] + 1u;\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    static cl_uint a[N], b[N];
    const char marker[] = "SECRET_BUFFER_MARKER_9c1e";
    for (size_t i = 0; i < sizeof a; i++) ((char *)a)[i] = marker[i % (sizeof marker - 1)];
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof a, a, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_WRITE_ONLY, sizeof b, NULL, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "-DSECRET_OPTION_MARKER_51b2=1", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "add1", &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof ba, &ba));
    OK(clSetKernelArg(k, 1, sizeof bb, &bb));
    size_t g = N, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clReleaseKernel(k));
    OK(clReleaseProgram(pg));
    OK(clReleaseMemObject(ba));
    cl_event ev;
    OK(clEnqueueReadBuffer(q, bb, CL_FALSE, 0, sizeof b, b, 0, NULL, &ev));
    OK(clReleaseMemObject(bb));
    OK(clFlush(q));
    OK(clReleaseCommandQueue(q));
    OK(clWaitForEvents(1, &ev));
    cl_int st = 0;
    OK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    OK(clReleaseEvent(ev));
    OK(clReleaseContext(c));
    int bad = 0;
    for (size_t i = 0; i < N; i++) bad += b[i] != a[i] + 1u;
    printf("kernels: 1\nstatus: %d\nwrong: %d\n", st, bad);
    return bad ? 1 : 0;
}
