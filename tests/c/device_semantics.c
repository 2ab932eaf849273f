/* device_semantics - kernels whose written bytes depend on OpenCL C semantics that the
 * mini-emulator must reproduce for balance mode's write footprints (piglit's vstorea_half
 * and predefined-macros tests in small).
 *
 *   device_semantics vstorea   vstorea_half3 of float3 and double3 at offset i (work-item
 *                              i): the aligned form addresses p + 4*i halves; the 4th
 *                              half of each 8-byte slot is left alone by the specification
 *                              (and Oclgrind) but written by PoCL;
 *   device_semantics macros    stores made only under #ifdef __OPENCL_VERSION__ (defined
 *                              by the device compiler, not by clang for SPIR) and
 *                              #ifdef __FAST_RELAXED_MATH__ (built with
 *                              -cl-fast-relaxed-math).
 *
 * Every output buffer starts filled with 0xAB bytes. Prints each output buffer in hex (one
 * line per buffer) and "kernels: N"; exits 0, 1 when a self-check fails (macros: the
 * stored __OPENCL_VERSION__ must match CL_DEVICE_VERSION, as piglit checks), 2 on an
 * OpenCL error. A test compares the printed bytes with a native run. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 256
#define L 16

static const char *vstorea_src =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "kernel void st3f(global half *out, global const float *in) {\n"
    "  size_t i = get_global_id(0);\n"
    "  float3 v = (float3)(in[3 * i], in[3 * i + 1], in[3 * i + 2]);\n"
    "  vstorea_half3(v, i, out);\n"
    "}\n"
    "kernel void st3d(global half *out, global const float *in) {\n"
    "  size_t i = get_global_id(0);\n"
    "  double3 v = (double3)(in[3 * i], in[3 * i + 1], in[3 * i + 2]);\n"
    "  vstorea_half3(v, i, out);\n"
    "}\n";

static const char *macros_src =
    "kernel void ver(global int *always, global int *version, global int *relaxed) {\n"
    "  size_t i = get_global_id(0);\n"
    "  always[i] = (int)i;\n"
    "#ifdef __OPENCL_VERSION__\n"
    "  version[i] = __OPENCL_VERSION__;\n"
    "#endif\n"
    "#ifdef __FAST_RELAXED_MATH__\n"
    "  relaxed[i] = __FAST_RELAXED_MATH__;\n"
    "#endif\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

static cl_context ctx;
static cl_command_queue q;
static cl_device_id dev;
static int launches = 0;

static cl_mem marked(size_t bytes) {
    cl_int e;
    unsigned char *h = malloc(bytes);
    memset(h, 0xAB, bytes);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &e); OK(e);
    free(h);
    return m;
}

static void dump(const char *name, cl_mem m, size_t bytes, unsigned char *h) {
    OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    printf("%s:", name);
    for (size_t i = 0; i < bytes; i++) printf("%02x", h[i]);
    printf("\n");
}

static cl_program build(const char *src, const char *options) {
    cl_int e;
    cl_program pg = clCreateProgramWithSource(ctx, 1, &src, NULL, &e); OK(e);
    if (clBuildProgram(pg, 1, &dev, options, NULL, NULL) != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(pg, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        exit(2);
    }
    return pg;
}

static void launch(cl_kernel k) {
    size_t g = N, l = L;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    launches++;
}

static int vstorea(void) {
    cl_int e;
    static float in[3 * N];
    for (int i = 0; i < 3 * N; i++) in[i] = (float)(i % 97) * 0.5f + 1.0f;
    cl_mem bin = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, sizeof in, in, &e);
    OK(e);
    cl_program pg = build(vstorea_src, "");
    const char *names[] = {"st3f", "st3d"};
    static unsigned char h[4 * N * 2];
    for (int j = 0; j < 2; j++) {
        cl_mem out = marked(sizeof h);
        cl_kernel k = clCreateKernel(pg, names[j], &e); OK(e);
        OK(clSetKernelArg(k, 0, sizeof out, &out));
        OK(clSetKernelArg(k, 1, sizeof bin, &bin));
        launch(k);
        dump(names[j], out, sizeof h, h);
        OK(clReleaseKernel(k));
        OK(clReleaseMemObject(out));
    }
    OK(clReleaseProgram(pg));
    OK(clReleaseMemObject(bin));
    return 0;
}

static int macros(void) {
    cl_int e;
    char ver[256] = "";
    OK(clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof ver, ver, NULL));
    int major = 0, minor = 0;
    if (sscanf(ver, "OpenCL %d.%d", &major, &minor) != 2) {
        fprintf(stderr, "cannot parse CL_DEVICE_VERSION '%s'\n", ver);
        return 2;
    }
    cl_program pg = build(macros_src, "-cl-fast-relaxed-math");
    cl_kernel k = clCreateKernel(pg, "ver", &e); OK(e);
    cl_mem b[3];
    for (int j = 0; j < 3; j++) {
        b[j] = marked(N * sizeof(cl_int));
        OK(clSetKernelArg(k, j, sizeof b[j], &b[j]));
    }
    launch(k);
    static cl_int h[3][N];
    const char *names[] = {"always", "version", "relaxed"};
    for (int j = 0; j < 3; j++) dump(names[j], b[j], sizeof h[j], (unsigned char *)h[j]);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[0][i] != i || h[1][i] != 100 * major + 10 * minor || h[2][i] != 1;
    if (bad) fprintf(stderr, "%d work-items stored other values than the device defines\n", bad);
    for (int j = 0; j < 3; j++) OK(clReleaseMemObject(b[j]));
    OK(clReleaseKernel(k));
    OK(clReleaseProgram(pg));
    return bad ? 1 : 0;
}

int main(int argc, char **argv) {
    if (argc != 2 || (strcmp(argv[1], "vstorea") && strcmp(argv[1], "macros"))) {
        fprintf(stderr, "usage: %s vstorea|macros\n", argv[0]);
        return 2;
    }
    cl_platform_id p; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e); OK(e);
    q = clCreateCommandQueue(ctx, dev, 0, &e); OK(e);
    int rc = strcmp(argv[1], "vstorea") == 0 ? vstorea() : macros();
    printf("kernels: %d\n", launches);
    OK(clReleaseCommandQueue(q));
    OK(clReleaseContext(ctx));
    return rc;
}
