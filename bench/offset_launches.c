// Launches one kernel N times with a nonzero global work offset (as balance chunks do) on
// device D of platform 0, natively: does the driver alone abort?
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src = "kernel void k(global int* x){ x[get_global_id(0)] += 1; }\n"
                         "kernel void g(global int* x){ x[get_global_id(0)] += (int)get_group_id(0); }\n";
int main(int argc, char **argv) {
  int dev = argc > 1 ? atoi(argv[1]) : 0, n = argc > 2 ? atoi(argv[2]) : 200;
  cl_platform_id p; cl_device_id d[8]; cl_uint nd; cl_int e;
  clGetPlatformIDs(1, &p, NULL); clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 8, d, &nd);
  cl_context c = clCreateContext(NULL, 1, &d[dev], NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d[dev], 0, &e);
  cl_program pr = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  if (clBuildProgram(pr, 1, &d[dev], "", NULL, NULL)) { printf("build failed\n"); return 2; }
  cl_kernel k[2] = {clCreateKernel(pr, "k", &e), clCreateKernel(pr, "g", &e)};
  size_t sz = 1 << 20; cl_mem b = clCreateBuffer(c, CL_MEM_READ_WRITE, sz * 4, NULL, &e);
  int zero = 0; clEnqueueFillBuffer(q, b, &zero, 4, 0, sz * 4, 0, NULL, NULL);
  for (int i = 0; i < n; i++) {
    cl_kernel kk = k[i % 2]; clSetKernelArg(kk, 0, sizeof b, &b);
    size_t off = (size_t)(i % 7) * 256 * 16, gl = 256 * (64 + i % 5), lo = 256;
    if ((e = clEnqueueNDRangeKernel(q, kk, 1, &off, &gl, (i % 3) ? &lo : NULL, 0, NULL, NULL))) { printf("enqueue %d\n", e); return 3; }
  }
  clFinish(q); printf("ok %d launches with offsets on device %d\n", n, dev); return 0;
}
