/* An app that returns from main with balanced launches still in flight (no clFinish, no
 * read): under clprism's launch thread (exec::pipeline) the process must still exit at once,
 * with status 0 and nothing on stderr.
 *
 *   exit_in_flight ITERS */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src = "__kernel void k(__global uint *a, uint n) { uint i = get_global_id(0); uint x = a[i]; for (int j = 0; j < 2000; j++) x = x * 1664525u + 1013904223u; a[i] = x; }\n";
int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 30;
  cl_platform_id p; cl_device_id d; cl_int e;
  clGetPlatformIDs(1, &p, NULL); clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(pg, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(pg, "k", &e);
  cl_uint n = 1 << 16;
  cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, n * 4, NULL, &e);
  clSetKernelArg(k, 0, sizeof b, &b); clSetKernelArg(k, 1, sizeof n, &n);
  size_t g = n, l = 64;
  for (int i = 0; i < iters; i++) clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL);
  clFlush(q);
  printf("exiting with launches in flight\n");
  return 0;
}
