/* common.c - see common.h. */
#define _POSIX_C_SOURCE 200809L
#include "common.h"

#include <string.h>
#include <time.h>

unsigned long ex_kernel_launches = 0;

void ex_cl_fail(const char *call, cl_int err, const char *file, int line)
{
    fprintf(stderr, "OpenCL error: %s returned %d (%s:%d)\n", call, (int)err,
            file, line);
    exit(2);
}

void ex_select_device(cl_platform_id *platform, cl_device_id *device)
{
    unsigned pi = 0, di = 0;
    const char *sel = getenv("CLPRISM_EXAMPLE_DEVICE");
    if (sel && *sel) {
        char tail;
        if (sscanf(sel, "%u:%u%c", &pi, &di, &tail) != 2) {
            fprintf(stderr,
                    "CLPRISM_EXAMPLE_DEVICE=\"%s\": expected \"P:D\"\n", sel);
            exit(2);
        }
    }
    cl_uint np = 0;
    CL_CHECK(clGetPlatformIDs(0, NULL, &np));
    if (pi >= np) {
        fprintf(stderr, "platform %u requested, %u available\n", pi, np);
        exit(2);
    }
    cl_platform_id *ps = ex_malloc(np * sizeof *ps);
    CL_CHECK(clGetPlatformIDs(np, ps, NULL));
    *platform = ps[pi];
    free(ps);
    cl_uint nd = 0;
    CL_CHECK(clGetDeviceIDs(*platform, CL_DEVICE_TYPE_ALL, 0, NULL, &nd));
    if (di >= nd) {
        fprintf(stderr, "device %u requested on platform %u, %u available\n",
                di, pi, nd);
        exit(2);
    }
    cl_device_id *ds = ex_malloc(nd * sizeof *ds);
    CL_CHECK(clGetDeviceIDs(*platform, CL_DEVICE_TYPE_ALL, nd, ds, NULL));
    *device = ds[di];
    free(ds);
    char name[256] = {0};
    CL_CHECK(clGetDeviceInfo(*device, CL_DEVICE_NAME, sizeof name - 1, name,
                             NULL));
    fprintf(stderr, "device %u:%u: %s\n", pi, di, name);
}

cl_program ex_build(cl_context context, cl_device_id device,
                    const char *source, const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(context, 1, &source, NULL, &err);
    CL_CHECK_ERR(err, "clCreateProgramWithSource");
    err = clBuildProgram(p, 1, &device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        size_t n = 0;
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, 0, NULL, &n);
        char *log = ex_malloc(n + 1);
        log[0] = 0;
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, n, log, NULL);
        log[n] = 0;
        fprintf(stderr, "build log:\n%s\n", log);
        free(log);
        clReleaseProgram(p);
        ex_cl_fail("clBuildProgram", err, __FILE__, __LINE__);
    }
    return p;
}

void ex_init(ex_cl *cl, const char *name, const char *source,
             const char *options, cl_command_queue_properties queue_props)
{
    (void)name;
    cl_int err;
    ex_select_device(&cl->platform, &cl->device);
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                     (cl_context_properties)cl->platform, 0};
    cl->context = clCreateContext(props, 1, &cl->device, NULL, NULL, &err);
    CL_CHECK_ERR(err, "clCreateContext");
    cl->queue = clCreateCommandQueue(cl->context, cl->device, queue_props, &err);
    CL_CHECK_ERR(err, "clCreateCommandQueue");
    cl->program = ex_build(cl->context, cl->device, source, options);
}

void ex_release(ex_cl *cl)
{
    CL_CHECK(clReleaseProgram(cl->program));
    CL_CHECK(clReleaseCommandQueue(cl->queue));
    CL_CHECK(clReleaseContext(cl->context));
}

cl_kernel ex_kernel(cl_program program, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(program, name, &err);
    CL_CHECK_ERR(err, "clCreateKernel");
    return k;
}

cl_mem ex_buffer(cl_context context, cl_mem_flags flags, size_t bytes)
{
    cl_int err;
    cl_mem m = clCreateBuffer(context, flags, bytes, NULL, &err);
    CL_CHECK_ERR(err, "clCreateBuffer");
    return m;
}

void ex_launch(cl_command_queue q, cl_kernel k, cl_uint dim,
               const size_t *global, const size_t *local,
               cl_uint n_wait, const cl_event *wait, cl_event *event)
{
    CL_CHECK(clEnqueueNDRangeKernel(q, k, dim, NULL, global, local, n_wait,
                                    wait, event));
    ex_kernel_launches++;
}

void ex_usage(const char *usage, const char *why)
{
    if (why)
        fprintf(stderr, "error: %s\n", why);
    fprintf(stderr, "usage: %s\n", usage);
    exit(1);
}

void ex_parse_args(ex_args *a, int argc, char **argv, const char *usage)
{
    memset(a, 0, sizeof *a);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--dump") == 0) {
            if (i + 1 >= argc)
                ex_usage(usage, "--dump needs a file name");
            a->dump = argv[++i];
        } else if (strcmp(argv[i], "-h") == 0 ||
                   strcmp(argv[i], "--help") == 0) {
            printf("usage: %s\n", usage);
            exit(0);
        } else {
            if (a->npos >= 8)
                ex_usage(usage, "too many arguments");
            a->pos[a->npos++] = argv[i];
        }
    }
}

unsigned long ex_arg_ulong(const ex_args *a, int i, unsigned long def,
                           unsigned long min, const char *usage)
{
    if (i >= a->npos)
        return def;
    char *end = NULL;
    unsigned long v = strtoul(a->pos[i], &end, 0);
    if (!end || *end || a->pos[i][0] == '-' || end == a->pos[i])
        ex_usage(usage, "malformed number");
    if (v < min)
        ex_usage(usage, "argument too small");
    return v;
}

void ex_dump(const ex_args *a, const void *data, size_t bytes)
{
    static int opened = 0;
    if (!a->dump)
        return;
    FILE *f = fopen(a->dump, opened ? "ab" : "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes || fclose(f) != 0) {
        perror(a->dump);
        exit(1);
    }
    opened = 1;
}

uint32_t ex_lcg_next(ex_lcg *g)
{
    g->s = g->s * 1664525u + 1013904223u;
    return g->s;
}

float ex_lcg_float(ex_lcg *g, float lo, float hi)
{
    float u = (float)(ex_lcg_next(g) >> 8) * (1.0f / 16777216.0f);
    return lo + (hi - lo) * u;
}

uint32_t ex_lcg_below(ex_lcg *g, uint32_t n)
{
    return (uint32_t)(((uint64_t)ex_lcg_next(g) * n) >> 32);
}

double ex_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void ex_print_kernels(void)
{
    printf("kernels: %lu\n", ex_kernel_launches);
}

void *ex_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

size_t ex_check_stride(void)
{
    const char *s = getenv("EX_CHECK_STRIDE");
    long v = s ? strtol(s, NULL, 10) : 1;
    return v > 1 ? (size_t)v : 1;
}
