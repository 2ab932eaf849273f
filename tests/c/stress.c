/* stress - T threads x L launches over shared and private queues, for the robustness tests.
 *
 * usage: stress [T=8] [L=200]
 * Every thread owns a kernel and a buffer of S = 2*min(L,128) slices of G uints (so memory
 * does not grow with L). It makes L launches on its own (private) queue and L launches on
 * one queue shared by all threads (each shared launch with its clSetKernelArg calls under a
 * mutex), alternating; launch i writes slice i mod S (even slices only ever from the
 * private queue, odd ones only from the shared one, each in order), then reads the buffer
 * back and checks every word exactly against the last launch that wrote it. Prints
 *   kernels: N          launches made (2*T*L)
 *   maxrss_kb: K        ru_maxrss of getrusage, KiB (Linux carries the parent's peak over
 *                       fork+exec, so tests/stress.rs reads VmHWM from /proc instead)
 * and exits 0 when every output word is right, 1 otherwise, 2 on an OpenCL error. */
#define CL_TARGET_OPENCL_VERSION 120
#define _POSIX_C_SOURCE 200809L
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define G 64
#define WG 16
static const char *src =
    "__kernel void tag(__global uint *o, uint tid, uint i, uint base) {\n"
    "  size_t g = get_global_id(0);\n"
    "  o[base + g] = (tid << 24) ^ (i << 8) ^ (uint)g;\n"
    "}\n";

#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { \
    fprintf(stderr, "%s:%d %s -> %d\n", __FILE__, __LINE__, #e, _e); exit(2); } } while (0)

static cl_context ctx;
static cl_device_id dev;
static cl_program prog;
static cl_command_queue shared_q;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned L;

typedef struct { unsigned tid; int bad; } worker;

static void *run(void *p) {
    worker *w = p;
    cl_int e;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e); OK(e);
    cl_kernel k = clCreateKernel(prog, "tag", &e); OK(e);
    cl_uint S = 2 * (L < 128 ? L : 128);
    size_t words = (size_t)S * G;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, words * 4, NULL, &e); OK(e);
    cl_uint tid = w->tid;
    OK(clSetKernelArg(k, 0, sizeof buf, &buf));
    OK(clSetKernelArg(k, 1, sizeof tid, &tid));
    size_t g = G, l = WG;
    for (cl_uint i = 0; i < 2 * L; i++) {
        int shared = i & 1;
        cl_uint base = (i % S) * G;
        cl_command_queue qq = shared ? shared_q : q;
        if (shared) pthread_mutex_lock(&lock);
        OK(clSetKernelArg(k, 2, sizeof i, &i));
        OK(clSetKernelArg(k, 3, sizeof base, &base));
        OK(clEnqueueNDRangeKernel(qq, k, 1, NULL, &g, &l, 0, NULL, NULL));
        if (shared) {
            /* the shared queue is in order: flush so other threads' launches interleave */
            OK(clFlush(qq));
            pthread_mutex_unlock(&lock);
        }
        if (i % 64 == 63) OK(clFinish(q));
    }
    OK(clFinish(q));
    pthread_mutex_lock(&lock);
    OK(clFinish(shared_q));
    pthread_mutex_unlock(&lock);
    cl_uint *h = malloc(words * 4);
    OK(clEnqueueReadBuffer(q, buf, CL_TRUE, 0, words * 4, h, 0, NULL, NULL));
    for (cl_uint s = 0; s < S; s++) {
        cl_uint i = s + ((2 * L - 1 - s) / S) * S; /* last launch that wrote slice s */
        for (cl_uint x = 0; x < G; x++)
            if (h[s * G + x] != ((tid << 24) ^ (i << 8) ^ x)) w->bad++;
    }
    free(h);
    OK(clReleaseMemObject(buf));
    OK(clReleaseKernel(k));
    OK(clReleaseCommandQueue(q));
    return NULL;
}

int main(int argc, char **argv) {
    unsigned T = argc > 1 ? (unsigned)atoi(argv[1]) : 8;
    L = argc > 2 ? (unsigned)atoi(argv[2]) : 200;
    if (T < 1 || T > 255 || L < 1 || L > 65535) { fprintf(stderr, "usage: stress [T] [L]\n"); return 2; }
    cl_platform_id p; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
    ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e); OK(e);
    prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(prog, 1, &dev, NULL, NULL, NULL));
    shared_q = clCreateCommandQueue(ctx, dev, 0, &e); OK(e);
    pthread_t th[255];
    worker w[255];
    for (unsigned t = 0; t < T; t++) {
        w[t].tid = t; w[t].bad = 0;
        if (pthread_create(&th[t], NULL, run, &w[t])) return 2;
    }
    int bad = 0;
    for (unsigned t = 0; t < T; t++) { pthread_join(th[t], NULL); bad += w[t].bad; }
    OK(clReleaseCommandQueue(shared_q));
    OK(clReleaseProgram(prog));
    OK(clReleaseContext(ctx));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("kernels: %u\n", 2 * T * L);
    printf("maxrss_kb: %ld\n", ru.ru_maxrss);
    if (bad) { fprintf(stderr, "stress: %d wrong words\n", bad); return 1; }
    return 0;
}
