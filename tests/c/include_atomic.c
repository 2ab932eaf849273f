/* include_atomic - a kernel whose atomic update of a global counter sits in an included
 * header (as in hashcat, whose kernels keep their atomics and helpers in inc_*.cl files):
 * writes DIR/tally.h, builds the source with -I DIR, makes one launch and checks it.
 *
 * usage: include_atomic DIR atomic|plain [N=8192]
 * atomic: the header's helper does atomic_inc on a global counter (must not be split);
 * plain:  the header's helper is pure arithmetic (may be split).
 * Prints "kernels: 1" and exits 0 when the output and the counter are right (1 when not, 2
 * on an OpenCL or file error). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *src =
    "#include \"tally.h\"\n"
    "__kernel void tally(__global const uint *a, __global uint *b, __global uint *n) {\n"
    "  size_t i = get_global_id(0);\n"
    "  b[i] = step(a[i], n);\n"
    "}\n";

static const char *atomic_header =
    "uint step(uint x, volatile __global uint *n) { atomic_inc(n); return x + 1u; }\n";
static const char *plain_header =
    "uint step(uint x, volatile __global uint *n) { return x + 1u; }\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[2], "atomic") && strcmp(argv[2], "plain"))) {
        fprintf(stderr, "usage: include_atomic DIR atomic|plain [N]\n"); return 2;
    }
    int atomic = strcmp(argv[2], "atomic") == 0;
    size_t n = argc > 3 ? strtoul(argv[3], NULL, 0) : 8192;
    if (n == 0 || n % 64) { fprintf(stderr, "N must be a positive multiple of 64\n"); return 2; }
    char path[4096], options[4200];
    snprintf(path, sizeof path, "%s/tally.h", argv[1]);
    FILE *f = fopen(path, "w");
    if (!f || fputs(atomic ? atomic_header : plain_header, f) < 0 || fclose(f)) { perror(path); return 2; }
    snprintf(options, sizeof options, "-I %s", argv[1]);

    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, options, NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "tally", &e); OK(e);

    cl_uint *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), count = 0;
    for (size_t i = 0; i < n; i++) a[i] = (cl_uint)(i * 2654435761u);
    cl_mem ba = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, n * sizeof *a, a, &e); OK(e);
    cl_mem bb = clCreateBuffer(c, CL_MEM_WRITE_ONLY, n * sizeof *b, NULL, &e); OK(e);
    cl_mem bn = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof count, &count, &e); OK(e);
    OK(clSetKernelArg(k, 0, sizeof ba, &ba));
    OK(clSetKernelArg(k, 1, sizeof bb, &bb));
    OK(clSetKernelArg(k, 2, sizeof bn, &bn));
    size_t g = n, l = 64;
    OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &l, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bb, CL_TRUE, 0, n * sizeof *b, b, 0, NULL, NULL));
    OK(clEnqueueReadBuffer(q, bn, CL_TRUE, 0, sizeof count, &count, 0, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        if (b[i] != a[i] + 1u) { printf("mismatch at %zu\n", i); return 1; }
    if (count != (atomic ? (cl_uint)n : 0u)) { printf("counter %u, expected %zu\n", count, atomic ? n : 0); return 1; }
    printf("kernels: 1\n");
    return 0;
}
