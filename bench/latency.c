// Measures two device figures the projection model needs (issue 19 item 2) on one device:
//   kernel_floor_ns     median END-START (event profiling) of an empty one-work-group kernel
//   global_latency_ns   a dependent pointer chase by one work-item over a buffer far larger
//                       than the caches: device time / steps
// usage: latency [PLATFORM DEVICE [BUFFER_MIB [STEPS]]]   (defaults 0 0 512 200000)
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src =
    "__kernel void empty(__global uint *p) { }\n"
    "__kernel void chase(__global const uint *next, __global uint *out, uint steps) {\n"
    "  uint p = 0;\n"
    "  for (uint i = 0; i < steps; i++) p = next[p];\n"
    "  out[0] = p;\n"
    "}\n";

#define CHECK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s:%d: error %d\n", __FILE__, __LINE__, _e); exit(1); } } while (0)

static double event_ns(cl_event e) {
  cl_ulong a, b;
  CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof a, &a, NULL));
  CHECK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof b, &b, NULL));
  return (double)(b - a);
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int pi = argc > 1 ? atoi(argv[1]) : 0, di = argc > 2 ? atoi(argv[2]) : 0;
  size_t mib = argc > 3 ? (size_t)atol(argv[3]) : 512;
  cl_uint steps = argc > 4 ? (cl_uint)atol(argv[4]) : 200000;
  cl_platform_id ps[8]; cl_uint np; CHECK(clGetPlatformIDs(8, ps, &np));
  if (pi >= (int)np) { fprintf(stderr, "no platform %d\n", pi); return 1; }
  cl_device_id ds[8]; cl_uint nd; CHECK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 8, ds, &nd));
  if (di >= (int)nd) { fprintf(stderr, "no device %d\n", di); return 1; }
  cl_device_id d = ds[di];
  char name[256]; CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL));
  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, d, CL_QUEUE_PROFILING_ENABLE, &err); CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err); CHECK(err);
  CHECK(clBuildProgram(prog, 1, &d, "", NULL, NULL));
  cl_kernel empty = clCreateKernel(prog, "empty", &err); CHECK(err);
  cl_kernel chase = clCreateKernel(prog, "chase", &err); CHECK(err);
  // a random cycle over 128-byte lines: each step lands on a line no cache holds
  size_t words = mib << 18, lines = words / 32;
  cl_uint *next = malloc(words * sizeof *next), *perm = malloc(lines * sizeof *perm);
  for (size_t i = 0; i < lines; i++) perm[i] = (cl_uint)i;
  srand(12345);
  for (size_t i = lines - 1; i > 0; i--) {
    size_t j = ((size_t)rand() * RAND_MAX + rand()) % (i + 1);
    cl_uint t = perm[i]; perm[i] = perm[j]; perm[j] = t;
  }
  for (size_t i = 0; i < words; i++) next[i] = 0;
  for (size_t i = 0; i < lines; i++) next[(size_t)perm[i] * 32] = perm[(i + 1) % lines] * 32;
  cl_mem nb = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, words * 4, next, &err); CHECK(err);
  cl_mem ob = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err); CHECK(err);
  CHECK(clSetKernelArg(empty, 0, sizeof ob, &ob));
  size_t one = 1, wg = 1;
  double t[101];
  for (int i = 0; i < 101; i++) {
    cl_event e;
    CHECK(clEnqueueNDRangeKernel(q, empty, 1, NULL, &one, &wg, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e)); t[i] = event_ns(e); clReleaseEvent(e);
  }
  qsort(t + 1, 100, sizeof *t, cmp);
  printf("device: %s\nkernel_floor_ns: %.0f (median of 100 empty one-work-item launches, min %.0f)\n", name, t[51], t[1]);
  CHECK(clSetKernelArg(chase, 0, sizeof nb, &nb));
  CHECK(clSetKernelArg(chase, 1, sizeof ob, &ob));
  double best = 1e30;
  for (int r = 0; r < 3; r++) {
    cl_uint s = r == 0 ? 1000 : steps;  // first: warm-up
    CHECK(clSetKernelArg(chase, 2, sizeof s, &s));
    cl_event e;
    CHECK(clEnqueueNDRangeKernel(q, chase, 1, NULL, &one, &wg, 0, NULL, &e));
    CHECK(clWaitForEvents(1, &e));
    if (r > 0 && event_ns(e) < best) best = event_ns(e);
    clReleaseEvent(e);
  }
  printf("global_latency_ns: %.1f (one work-item, %u dependent loads over %zu MiB, best of 2)\n", best / steps, steps, mib);
  return 0;
}
