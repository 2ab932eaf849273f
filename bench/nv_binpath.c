/* Issue 31 item 1: what building the app's program on the balance devices costs, by path.
 * The "app" builds SOURCE for GPU 0 in its own context (as an application does); then one
 * context per GPU (GPU 0 included, as clprism opens them) builds the same program, on one
 * thread per device, at once:
 *   (B) from the app's program binary (CL_PROGRAM_BINARIES of GPU 0's build), with
 *       "-cl-kernel-arg-info -cl-nv-verbose", and the kernel's argument info read back (is it
 *       there?) and whether the build log has ptxas's "Used N registers";
 *   (A) from source with the app's options only (the driver's cache holds the app's build);
 *   (S) from source with "-cl-kernel-arg-info -cl-nv-verbose" (what clprism builds today);
 *   (S2) (S) again in fresh programs (the driver's caches warm).
 * Prints each device's build time, the slowest, and per argument of KERNEL the address
 * qualifier, type qualifier and type name with the query's error code.
 * NVIDIA keeps compiled programs in CUDA_CACHE_PATH (default ~/.nv/ComputeCache): point it at
 * an empty folder for a first run on the machine.
 * usage: nv_binpath FILE.cl KERNEL ["BUILD OPTIONS"] [platform=0]
 * build: gcc -O2 -o nv_binpath bench/nv_binpath.c -lOpenCL -lpthread */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)
#define MAXD 16

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static const char *src;
static const char *opts;
static unsigned char *bin;
static size_t bin_len;
static cl_device_id dev[MAXD];
static cl_context ctx[MAXD];
static cl_program prog[MAXD];
static double took[MAXD];
static cl_int rc[MAXD];
static int mode; /* 0 binary, 1 source */

static void *build_one(void *arg) {
  int i = (int)(size_t)arg;
  char o[1024];
  double t = now();
  cl_int e;
  if (mode == 0) {
    const unsigned char *b = bin;
    cl_int st;
    snprintf(o, sizeof o, "%s -cl-kernel-arg-info -cl-nv-verbose", opts);
    prog[i] = clCreateProgramWithBinary(ctx[i], 1, &dev[i], &bin_len, &b, &st, &e);
  } else if (mode == 2) {
    snprintf(o, sizeof o, "%s", opts);
    prog[i] = clCreateProgramWithSource(ctx[i], 1, &src, NULL, &e);
  } else {
    snprintf(o, sizeof o, "%s -cl-kernel-arg-info -cl-nv-verbose", opts);
    prog[i] = clCreateProgramWithSource(ctx[i], 1, &src, NULL, &e);
  }
  if (e == CL_SUCCESS) e = clBuildProgram(prog[i], 1, &dev[i], o, NULL, NULL);
  rc[i] = e;
  took[i] = now() - t;
  return NULL;
}

static void all(int n, const char *what) {
  pthread_t th[MAXD];
  double t = now();
  for (int i = 0; i < n; i++) pthread_create(&th[i], NULL, build_one, (void *)(size_t)i);
  for (int i = 0; i < n; i++) pthread_join(th[i], NULL);
  printf("%-44s all %d devices %8.1f ms:", what, n, (now() - t) * 1e3);
  for (int i = 0; i < n; i++) printf(" %7.1f%s", took[i] * 1e3, rc[i] ? "(fail)" : "");
  printf("\n");
  fflush(stdout);
}

static void arg_info(cl_program p, const char *kernel, const char *what) {
  cl_int e;
  cl_kernel k = clCreateKernel(p, kernel, &e);
  if (e) { printf("%s: clCreateKernel = %d\n", what, e); return; }
  cl_uint n = 0;
  CK(clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof n, &n, NULL));
  for (cl_uint a = 0; a < n; a++) {
    cl_kernel_arg_address_qualifier aq = 0;
    cl_kernel_arg_type_qualifier tq = 0;
    char name[256] = "";
    cl_int e1 = clGetKernelArgInfo(k, a, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof aq, &aq, NULL);
    cl_int e2 = clGetKernelArgInfo(k, a, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof tq, &tq, NULL);
    cl_int e3 = clGetKernelArgInfo(k, a, CL_KERNEL_ARG_TYPE_NAME, sizeof name, name, NULL);
    printf("%s arg %u: address 0x%x (%d) type-qualifier 0x%lx (%d) type '%s' (%d)\n", what, a,
           (unsigned)aq, e1, (unsigned long)tq, e2, name, e3);
  }
  clReleaseKernel(k);
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: nv_binpath FILE.cl KERNEL [OPTIONS] [platform]\n"); return 2; }
  FILE *f = fopen(argv[1], "rb");
  if (!f) { perror(argv[1]); return 1; }
  static char text[1 << 20];
  text[fread(text, 1, sizeof text - 1, f)] = 0;
  fclose(f);
  src = text;
  opts = argc > 3 ? argv[3] : "";
  int pi = argc > 4 ? atoi(argv[4]) : 0;
  cl_platform_id plats[8];
  cl_uint np = 0;
  CK(clGetPlatformIDs(8, plats, &np));
  if ((cl_uint)pi >= np) { fprintf(stderr, "no platform %d\n", pi); return 1; }
  cl_uint n = 0;
  /* GPUs; on a machine without one (PoCL), every device, so the program can be tried here */
  if (clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_GPU, MAXD, dev, &n) != CL_SUCCESS)
    CK(clGetDeviceIDs(plats[pi], CL_DEVICE_TYPE_ALL, MAXD, dev, &n));
  double t = now();
  cl_int e;
  cl_context app = clCreateContext(NULL, 1, &dev[0], NULL, NULL, &e);
  CK(e);
  printf("app context on GPU 0 %8.1f ms\n", (now() - t) * 1e3);
  t = now();
  cl_program ap = clCreateProgramWithSource(app, 1, &src, NULL, &e);
  CK(e);
  CK(clBuildProgram(ap, 1, &dev[0], opts, NULL, NULL));
  printf("app build from source on GPU 0 %8.1f ms\n", (now() - t) * 1e3);
  t = now();
  CK(clGetProgramInfo(ap, CL_PROGRAM_BINARY_SIZES, sizeof bin_len, &bin_len, NULL));
  bin = malloc(bin_len);
  CK(clGetProgramInfo(ap, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL));
  printf("app binary read back: %zu bytes in %.2f ms\n", bin_len, (now() - t) * 1e3);
  arg_info(ap, argv[2], "app program (no -cl-kernel-arg-info)");
  t = now();
  for (cl_uint i = 0; i < n; i++) {
    ctx[i] = clCreateContext(NULL, 1, &dev[i], NULL, NULL, &e);
    CK(e);
  }
  printf("%u contexts (one after the other) %8.1f ms\n", n, (now() - t) * 1e3);
  mode = 0;
  all((int)n, "(B) from the app's binary");
  if (rc[n - 1] == CL_SUCCESS) {
    arg_info(prog[n - 1], argv[2], "(B)");
    static char log[1 << 16];
    log[0] = 0;
    clGetProgramBuildInfo(prog[n - 1], dev[n - 1], CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
    printf("(B) build log has \"Used\": %s\n", strstr(log, "Used") ? "yes" : "no");
  }
  mode = 2;
  all((int)n, "(A) from source, the app's options");
  if (rc[n - 1] == CL_SUCCESS) arg_info(prog[n - 1], argv[2], "(A)");
  mode = 1;
  all((int)n, "(S) from source");
  if (rc[n - 1] == CL_SUCCESS) arg_info(prog[n - 1], argv[2], "(S)");
  /* fresh programs: the ones above stay alive, as clprism's do */
  all((int)n, "(S2) from source again");
  return 0;
}
