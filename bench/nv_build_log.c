/* Prints the build log that NVIDIA's OpenCL compiler writes with -cl-nv-verbose (ptxas's
 * report of registers, shared memory and spills per kernel) for each OpenCL C file given.
 * clprism reads the same report to know each kernel's registers (exec::program::
 * ptxas_registers); this tool records the raw log next to the results.
 * Usage: nv_build_log PLATFORM FILE.cl...   (bench/gpu_bundle.sh builds it into .gpu/) */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
  if (s) s[n] = 0;
  fclose(f);
  return s;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s PLATFORM FILE.cl...\n", argv[0]); return 2; }
  cl_platform_id ps[8];
  cl_uint np = 0;
  clGetPlatformIDs(8, ps, &np);
  unsigned pi = (unsigned)atoi(argv[1]);
  if (pi >= np) { fprintf(stderr, "no platform %u\n", pi); return 1; }
  cl_device_id dev;
  if (clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) return 1;
  char name[256] = {0};
  clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name - 1, name, NULL);
  char ext[8192] = {0};
  clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL);
  printf("== %s extensions: %s\n", name, ext);
  cl_int e;
  cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  if (e != CL_SUCCESS) return 1;
  int rc = 0;
  for (int i = 2; i < argc; i++) {
    char *src = slurp(argv[i]);
    if (!src) { fprintf(stderr, "cannot read %s\n", argv[i]); rc = 1; continue; }
    const char *s = src;
    cl_program p = clCreateProgramWithSource(ctx, 1, &s, NULL, &e);
    cl_int b = clBuildProgram(p, 1, &dev, "-cl-nv-verbose", NULL, NULL);
    size_t n = 0;
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
    char *log = calloc(n + 1, 1);
    clGetProgramBuildInfo(p, dev, CL_PROGRAM_BUILD_LOG, n, log, NULL);
    printf("== %s on %s (clBuildProgram %d)\n%s\n", argv[i], name, b, log);
    if (b != CL_SUCCESS) rc = 1;
    free(log);
    clReleaseProgram(p);
    free(src);
  }
  clReleaseContext(ctx);
  return rc;
}
