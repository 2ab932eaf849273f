/* quick_exit - builds a program, makes one launch, checks it and exits at once, releasing
 * nothing: the app ends while clprism may still be opening its balance devices or building
 * the program on them in the background (the exit path of balance mode).
 *
 * usage: quick_exit [N=4096] [--release-program]
 * --release-program releases the program right after clCreateKernel (legal: the kernel
 * keeps it alive; Rodinia's lud, backprop, kmeans and nw do this).
 * Prints "kernels: 1" and exits 0 when every word of the result is right (1 when not, 2 on
 * an OpenCL error). With QUICK_EXIT_STAMPS set, prints "stamp PHASE MS" on stderr at main's
 * start and after each phase (MS: CLOCK_REALTIME in ms, comparable with `date +%s%3N`), so a
 * caller can split the run into loading, the phases and the exit. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int stamps;
static void stamp(const char *phase) {
  if (!stamps) return;
  struct timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  fprintf(stderr, "stamp %s %.3f\n", phase, t.tv_sec * 1e3 + t.tv_nsec / 1e6);
}

static const char *src =
    "__kernel void twice_plus(__global const uint *a, __global uint *b, uint c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = 2u * a[i] + c;\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

int main(int argc, char **argv) {
    stamps = getenv("QUICK_EXIT_STAMPS") != NULL;
    stamp("main");
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
    int release_program = argc > 2 && strcmp(argv[2], "--release-program") == 0;
    if (n == 0 || n % 64) { fprintf(stderr, "N must be a positive multiple of 64\n"); return 2; }
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    stamp("context");
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_uint *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) a[i] = (cl_uint)(i * 2654435761u);
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_WRITE_ONLY, n * sizeof *b, NULL, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    stamp("built");
    cl_kernel k = clCreateKernel(pg, "twice_plus", &e); OK(e);
    if (release_program) OK(clReleaseProgram(pg));
    cl_uint add = 7;
    OK(clSetKernelArg(k, 0, sizeof ba, &ba));
    OK(clSetKernelArg(k, 1, sizeof bb, &bb));
    OK(clSetKernelArg(k, 2, sizeof add, &add));
    size_t g = n, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, n * sizeof *b, b, 0, NULL, NULL));
    stamp("launched");
    for (size_t i = 0; i < n; i++)
        if (b[i] != 2u * a[i] + add) { printf("mismatch at %zu\n", i); return 1; }
    printf("kernels: 1\n");
    stamp("exit");
    return 0; /* exit with everything still alive */
}
