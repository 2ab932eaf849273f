/* Asynchronous balanced launches (issue 31 item 4): what an app sees of launches that return
 * before they ran. A three-point stencil ping-pongs two buffers of N uints for ITERS
 * launches, each with its own event, nothing waited for between them, except:
 *
 *   launch 3: a completion callback on its event (must run once, with CL_COMPLETE);
 *   launch 5: clWaitForEvents on its event, then its status must be CL_COMPLETE;
 *   launch 7: a non-blocking read of its output (waited for later) must hold the state
 *             after 8 launches;
 *   launch 9: a blocking read of its output on the same queue, right after the enqueue;
 *   the end:  clFinish, then every event CL_COMPLETE with profiling times END > START > 0,
 *             and a blocking read of the result.
 *
 *   async_launches N ITERS OUT
 *
 * Writes the three reads to OUT (compared with a native run); prints "PASS async_launches"
 * when the app's own integer reference agrees and every check holds. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
static const char *src =
    "__kernel void smooth(__global const uint *in, __global uint *out, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  uint l = i > 0 ? in[i - 1] : in[i];\n"
    "  uint r = i + 1 < n ? in[i + 1] : in[i];\n"
    "  out[i] = (l + 2u * in[i] + r) / 4u + (i & 7u);\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
#define CHECK(c, ...) do { if (!(c)) { fprintf(stderr, __VA_ARGS__); fprintf(stderr, "\n"); failed = 1; } } while (0)

static volatile int callbacks, callback_status = 1;
static void CL_CALLBACK on_done(cl_event e, cl_int status, void *user) {
    (void)e; (void)user;
    callback_status = status;
    __sync_fetch_and_add(&callbacks, 1);
}

static void smooth_host(const cl_uint *in, cl_uint *out, cl_uint n) {
    for (size_t i = 0; i < n; i++) {
        cl_uint l = i > 0 ? in[i - 1] : in[i];
        cl_uint r = i + 1 < n ? in[i + 1] : in[i];
        out[i] = (l + 2u * in[i] + r) / 4u + (cl_uint)(i & 7u);
    }
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: async_launches N ITERS OUT\n");
        return 2;
    }
    cl_uint n = (cl_uint)atoi(argv[1]);
    int iters = atoi(argv[2]);
    FILE *out = fopen(argv[3], "wb");
    if (!out || iters < 12) return 2;
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "smooth", &e); OK(e);
    size_t bytes = (size_t)n * sizeof(cl_uint);
    cl_uint *h = malloc(bytes), *ref = malloc(bytes), *tmp = malloc(bytes);
    cl_uint *at7 = malloc(bytes), *at9 = malloc(bytes), *ref7 = malloc(bytes), *ref9 = malloc(bytes);
    cl_event *ev = calloc((size_t)iters, sizeof(cl_event));
    for (cl_uint i = 0; i < n; i++) h[i] = (i * 2654435761u) >> 7;
    memcpy(ref, h, bytes);
    cl_mem b[2];
    b[0] = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &e); OK(e);
    b[1] = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e); OK(e);
    int failed = 0;
    cl_event read7 = NULL;
    for (int it = 0; it < iters; it++) {
        OK(clSetKernelArg(k, 0, sizeof(cl_mem), &b[it & 1]));
        OK(clSetKernelArg(k, 1, sizeof(cl_mem), &b[(it + 1) & 1]));
        OK(clSetKernelArg(k, 2, sizeof(cl_uint), &n));
        size_t g = n, l = 64;
        OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, &ev[it]));
        smooth_host(ref, tmp, n);
        memcpy(ref, tmp, bytes);
        if (it == 3) OK(clSetEventCallback(ev[it], CL_COMPLETE, on_done, NULL));
        if (it == 5) {
            OK(clWaitForEvents(1, &ev[it]));
            cl_int s = 1;
            OK(clGetEventInfo(ev[it], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
            CHECK(s == CL_COMPLETE, "launch 5 waited for but its status is %d", s);
        }
        if (it == 7) {
            OK(clEnqueueReadBuffer(q, b[(it + 1) & 1], CL_FALSE, 0, bytes, at7, 0, NULL, &read7));
            memcpy(ref7, ref, bytes);
        }
        if (it == 9) {
            OK(clEnqueueReadBuffer(q, b[(it + 1) & 1], CL_TRUE, 0, bytes, at9, 0, NULL, NULL));
            memcpy(ref9, ref, bytes);
        }
    }
    OK(clFinish(q));
    OK(clWaitForEvents(1, &read7));
    for (int it = 0; it < iters; it++) {
        cl_int s = 1;
        OK(clGetEventInfo(ev[it], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
        CHECK(s == CL_COMPLETE, "launch %d: status %d after clFinish", it, s);
        cl_ulong t0 = 0, t1 = 0;
        OK(clGetEventProfilingInfo(ev[it], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
        OK(clGetEventProfilingInfo(ev[it], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
        /* the launch's event spans the launch, as a kernel's event does */
        CHECK(t0 > 0 && t1 > t0, "launch %d: profiling start %llu end %llu", it,
              (unsigned long long)t0, (unsigned long long)t1);
        clReleaseEvent(ev[it]);
    }
    clReleaseEvent(read7);
    OK(clEnqueueReadBuffer(q, b[iters & 1], CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    for (int w = 0; w < 1000 && callbacks == 0; w++) usleep(1000);
    CHECK(callbacks == 1 && callback_status == CL_COMPLETE, "callback ran %d times, status %d",
          callbacks, callback_status);
    CHECK(!memcmp(at7, ref7, bytes), "the non-blocking read after launch 7 differs");
    CHECK(!memcmp(at9, ref9, bytes), "the blocking read after launch 9 differs");
    CHECK(!memcmp(h, ref, bytes), "the result differs from the host reference");
    fwrite(at7, 1, bytes, out);
    fwrite(at9, 1, bytes, out);
    fwrite(h, 1, bytes, out);
    fclose(out);
    if (failed) return 1;
    printf("PASS async_launches\n");
    return 0;
}
