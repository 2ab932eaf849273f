/* Launches kernels with known shapes and prints one line per clEnqueueNDRangeKernel /
 * clEnqueueTask call, so a test can compare clprism's log with what the app really did:
 *   launch kernel=NAME dim=D global=a,b,c local=a,b,c|null offset=a,b,c|null ret=CODE
 * Also checks queue-property transparency (CL_QUEUE_PROPERTIES, CL_QUEUE_PROPERTIES_ARRAY and
 * profiling queries on a queue that did not ask for profiling). Exit 0 when every check holds. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void fill1(__global int *o) { o[get_global_id(0)] = (int)get_global_id(0); }\n"
    "__kernel void fill3(__global int *o) { size_t i = get_global_id(0) + get_global_size(0) *"
    " (get_global_id(1) + get_global_size(1) * get_global_id(2)); o[i % 4096] = 1; }\n"
    "__kernel void task(__global int *o) { o[0] = 7; }\n";

static int failures = 0;
#define CHECK(c, msg) do { if (!(c)) { fprintf(stderr, "FAIL: %s\n", msg); failures++; } } while (0)
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); exit(2); } } while (0)

static void show(const char *tag, int dim, const size_t *v) {
    printf(" %s=", tag);
    if (!v) { printf("null"); return; }
    for (int i = 0; i < dim; i++) printf(i ? ",%zu" : "%zu", v[i]);
}

static cl_int launch(cl_command_queue q, cl_kernel k, const char *name, int dim,
                     const size_t *off, const size_t *g, const size_t *l) {
    cl_int r = clEnqueueNDRangeKernel(q, k, dim, off, g, l, 0, NULL, NULL);
    printf("launch kernel=%s dim=%d", name, dim);
    show("global", dim, g); show("local", dim, l); show("offset", dim, off);
    printf(" ret=%d\n", r);
    return r;
}

int main(void) {
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);

    /* queue 1: OpenCL 1.x API, out-of-order, no profiling */
    cl_command_queue q1 = clCreateCommandQueue(c, d, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &e);
    if (e != CL_SUCCESS) q1 = clCreateCommandQueue(c, d, 0, &e);
    OK(e);
    cl_command_queue_properties want1 = 0, got = 99;
    OK(clGetCommandQueueInfo(q1, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL));
    size_t sz = 0;
    OK(clGetCommandQueueInfo(q1, CL_QUEUE_PROPERTIES, 0, NULL, &sz));
    CHECK(sz == sizeof(cl_command_queue_properties), "CL_QUEUE_PROPERTIES size");
    want1 = got; /* whatever was accepted */
    CHECK((got & CL_QUEUE_PROFILING_ENABLE) == 0, "queue 1 must not report profiling");

    /* queue 2: OpenCL 2.0 API with a property list, no profiling */
    cl_queue_properties plist[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_command_queue q2 = clCreateCommandQueueWithProperties(c, d, plist, &e); OK(e);
    got = 99;
    OK(clGetCommandQueueInfo(q2, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL));
    CHECK(got == 0, "queue 2 reports the properties asked for");
    cl_queue_properties arr[8]; memset(arr, 0xff, sizeof arr);
    e = clGetCommandQueueInfo(q2, CL_QUEUE_PROPERTIES_ARRAY, sizeof arr, arr, &sz);
    if (e == CL_SUCCESS) {
        CHECK(sz == sizeof plist && arr[0] == CL_QUEUE_PROPERTIES && arr[1] == 0 && arr[2] == 0,
              "CL_QUEUE_PROPERTIES_ARRAY is the list the app passed");
    }
    /* queue 3: asks for profiling itself */
    cl_command_queue q3 = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e); OK(e);
    OK(clGetCommandQueueInfo(q3, CL_QUEUE_PROPERTIES, sizeof got, &got, NULL));
    CHECK(got == CL_QUEUE_PROFILING_ENABLE, "queue 3 reports profiling");

    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "-DUNUSED=1", NULL, NULL));
    cl_kernel k1 = clCreateKernel(pg, "fill1", &e); OK(e);
    cl_kernel k3 = clCreateKernel(pg, "fill3", &e); OK(e);
    cl_kernel kt = clCreateKernel(pg, "task", &e); OK(e);
    cl_mem buf = clCreateBuffer(c, CL_MEM_READ_WRITE, 4096 * sizeof(int), NULL, &e); OK(e);
    OK(clSetKernelArg(k1, 0, sizeof buf, &buf));
    OK(clSetKernelArg(k3, 0, sizeof buf, &buf));
    OK(clSetKernelArg(kt, 0, sizeof buf, &buf));

    size_t g1[] = {256}, l1[] = {64}, o1[] = {128};
    size_t g2[] = {16, 8}, l2[] = {4, 4}, o2[] = {0, 8};
    size_t g3[] = {8, 4, 2}, l3[] = {2, 2, 2};
    size_t bad_g[] = {100}, bad_l[] = {64};
    launch(q1, k1, "fill1", 1, NULL, g1, l1);
    launch(q1, k1, "fill1", 1, o1, g1, NULL);
    launch(q2, k3, "fill3", 2, o2, g2, l2);
    launch(q2, k3, "fill3", 3, NULL, g3, l3);
    launch(q3, k3, "fill3", 3, NULL, g3, NULL);
    cl_int bad = launch(q2, k1, "fill1", 1, NULL, bad_g, bad_l); /* 100 % 64 != 0 */
    CHECK(bad != CL_SUCCESS, "non-uniform work-group must fail on OpenCL 1.2 semantics or be accepted");
    cl_event ev;
    OK(clEnqueueTask(q1, kt, 0, NULL, &ev));
    printf("launch kernel=task dim=1 global=1 local=1 offset=null ret=0\n");
    OK(clFinish(q1)); OK(clFinish(q2)); OK(clFinish(q3));

    cl_ulong t;
    e = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL);
    CHECK(e == CL_PROFILING_INFO_NOT_AVAILABLE, "profiling info hidden on a queue without profiling");
    cl_event ev3;
    OK(clEnqueueNDRangeKernel(q3, k1, 1, NULL, g1, l1, 0, NULL, &ev3));
    printf("launch kernel=fill1 dim=1 global=256 local=64 offset=null ret=0\n");
    OK(clWaitForEvents(1, &ev3));
    OK(clGetEventProfilingInfo(ev3, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL));

    OK(clReleaseEvent(ev)); OK(clReleaseEvent(ev3));
    OK(clReleaseMemObject(buf));
    OK(clReleaseKernel(k1)); OK(clReleaseKernel(k3)); OK(clReleaseKernel(kt));
    OK(clReleaseProgram(pg));
    OK(clReleaseCommandQueue(q1)); OK(clReleaseCommandQueue(q2)); OK(clReleaseCommandQueue(q3));
    OK(clReleaseContext(c));
    (void)want1;
    printf("%s\n", failures ? "FAIL" : "PASS launch_shapes");
    return failures ? 1 : 0;
}
