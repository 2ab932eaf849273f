// Two PoCL CPU devices run the same kernel at the same time, one with a zero and one with a
// nonzero global work offset, each from its own context and thread: what balance mode's
// chunks do on several PoCL devices. PoCL 5.0's work-group function cache finds the item to
// release by hash and local size only, while it looked it up by offset class and grid width
// too; run concurrently, a release can decrement the other item
// (pocl_release_dlhandle_cache: Assertion `found->ref_count > 0' failed).
//   usage: pocl_concurrent_offsets [LAUNCHES]   (POCL_DEVICES="pthread pthread basic")
//   exit 0: no abort
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static const char *src = "kernel void k(global int* x){ x[get_global_id(0)] += 1; }\n";
static int launches = 500;

struct job { cl_device_id dev; size_t offset; };

static void *run(void *arg) {
  struct job *j = arg;
  cl_int e;
  cl_context c = clCreateContext(NULL, 1, &j->dev, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, j->dev, 0, &e);
  cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if (clBuildProgram(p, 1, &j->dev, "", NULL, NULL) != CL_SUCCESS) { fprintf(stderr, "build failed\n"); exit(2); }
  cl_kernel k = clCreateKernel(p, "k", &e);
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, 1 << 22, NULL, &e);
  clSetKernelArg(k, 0, sizeof b, &b);
  size_t lo = 256;
  for (int i = 0; i < launches; i++) {
    size_t gl = 256 * (16 + i % 8), off = j->offset;
    if (clEnqueueNDRangeKernel(q, k, 1, &off, &gl, &lo, 0, NULL, NULL) != CL_SUCCESS) { fprintf(stderr, "enqueue failed\n"); exit(3); }
    if (i % 4 == 3) clFinish(q);
  }
  clFinish(q);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1) launches = atoi(argv[1]);
  cl_platform_id pl; cl_device_id d[8]; cl_uint n;
  clGetPlatformIDs(1, &pl, NULL);
  clGetDeviceIDs(pl, CL_DEVICE_TYPE_ALL, 8, d, &n);
  if (n < 2) { fprintf(stderr, "needs two devices\n"); return 2; }
  struct job a = {d[0], 0}, b = {d[1], 4096};
  pthread_t ta, tb;
  pthread_create(&ta, NULL, run, &a);
  pthread_create(&tb, NULL, run, &b);
  pthread_join(ta, NULL);
  pthread_join(tb, NULL);
  printf("ok: %d launches on each of two devices, offsets 0 and 4096\n", launches);
  return 0;
}
