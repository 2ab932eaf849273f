/* binary_cache - an app with its own kernel cache, like hashcat or pyopencl: builds a program
 * from source once, saves its binary, and loads the binary with clCreateProgramWithBinary in
 * later runs. Each run makes one launch and checks its result.
 *
 * usage: binary_cache save FILE [N=8192]   build from source (options -DADD=7), launch,
 *                                          write the binary to FILE
 *        binary_cache load FILE [N=8192]   create the program from FILE's binary, build it
 *                                          with no options (the driver does not recompile;
 *                                          ADD comes from the first build), launch
 *        binary_cache save-linked FILE [N] as save, but with clCompileProgram (-DADD=7) and
 *                                          clLinkProgram of that one program, as hashcat does
 *        binary_cache roundtrip [N=8192]   both in one process: build from source, read the
 *                                          binary back, launch only the binary's program
 * Prints "kernels: 1" and exits 0 when every word of the result is right (1 when not, 2 on
 * an OpenCL or file error). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "__kernel void scaled_plus(__global const uint *a, __global uint *b, uint c) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = 3u * a[i] + c + ADD;\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

/* Builds from source (clBuildProgram, or clCompileProgram + clLinkProgram when `link`) and
 * returns the program; its binary for `d` in *bin, *len. */
static cl_program from_source(cl_context c, cl_device_id d, int link, unsigned char **bin,
                              size_t *len) {
    cl_int e;
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    if (link) {
        OK(clCompileProgram(pg, 1, &d, "-DADD=7", 0, NULL, NULL, NULL, NULL));
        cl_program linked = clLinkProgram(c, 1, &d, "", 1, &pg, NULL, NULL, &e); OK(e);
        OK(clReleaseProgram(pg));
        pg = linked;
    } else {
        OK(clBuildProgram(pg, 1, &d, "-DADD=7", NULL, NULL));
    }
    OK(clGetProgramInfo(pg, CL_PROGRAM_BINARY_SIZES, sizeof *len, len, NULL));
    *bin = malloc(*len);
    OK(clGetProgramInfo(pg, CL_PROGRAM_BINARIES, sizeof *bin, bin, NULL));
    return pg;
}

static cl_program from_binary(cl_context c, cl_device_id d, const unsigned char *bin, size_t len) {
    cl_int e, st;
    cl_program pg = clCreateProgramWithBinary(c, 1, &d, &len, &bin, &st, &e); OK(e); OK(st);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    return pg;
}

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: binary_cache save|save-linked|load FILE [N] | roundtrip [N]\n"); return 2; }
    const char *mode = argv[1];
    int roundtrip = strcmp(mode, "roundtrip") == 0;
    int linked = strcmp(mode, "save-linked") == 0;
    const char *file = roundtrip ? NULL : argc > 2 ? argv[2] : NULL;
    if (!roundtrip && (!file || (strcmp(mode, "save") && strcmp(mode, "load") && !linked))) {
        fprintf(stderr, "usage: binary_cache save|save-linked|load FILE [N] | roundtrip [N]\n"); return 2;
    }
    const char *n_arg = roundtrip ? (argc > 2 ? argv[2] : NULL) : (argc > 3 ? argv[3] : NULL);
    size_t n = n_arg ? strtoul(n_arg, NULL, 0) : 8192;
    if (n == 0 || n % 64) { fprintf(stderr, "N must be a positive multiple of 64\n"); return 2; }
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);

    cl_program pg;
    unsigned char *bin = NULL;
    size_t len = 0;
    if (strcmp(mode, "load") == 0) {
        FILE *f = fopen(file, "rb");
        if (!f) { perror(file); return 2; }
        fseek(f, 0, SEEK_END);
        len = (size_t)ftell(f);
        rewind(f);
        bin = malloc(len);
        if (fread(bin, 1, len, f) != len) { perror(file); return 2; }
        fclose(f);
        pg = from_binary(c, d, bin, len);
    } else {
        pg = from_source(c, d, linked, &bin, &len);
        if (roundtrip) {
            OK(clReleaseProgram(pg));
            pg = from_binary(c, d, bin, len);
        } else {
            FILE *f = fopen(file, "wb");
            if (!f || fwrite(bin, 1, len, f) != len || fclose(f)) { perror(file); return 2; }
        }
    }

    cl_uint *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    for (size_t i = 0; i < n; i++) a[i] = (cl_uint)(i * 2654435761u);
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_WRITE_ONLY, n * sizeof *b, NULL, &e); OK(e);
    cl_kernel k = clCreateKernel(pg, "scaled_plus", &e); OK(e);
    cl_uint add = 5;
    OK(clSetKernelArg(k, 0, sizeof ba, &ba));
    OK(clSetKernelArg(k, 1, sizeof bb, &bb));
    OK(clSetKernelArg(k, 2, sizeof add, &add));
    size_t g = n, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, n * sizeof *b, b, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        if (b[i] != 3u * a[i] + add + 7u) { printf("mismatch at %zu\n", i); return 1; }
    printf("kernels: 1\n");
    clReleaseKernel(k);
    clReleaseProgram(pg);
    clReleaseMemObject(ba);
    clReleaseMemObject(bb);
    clReleaseCommandQueue(q);
    clReleaseContext(c);
    free(a); free(b); free(bin);
    return 0;
}
