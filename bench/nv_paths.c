/* Issue 31 item 3: the ways to move a buffer from the app's GPU to another GPU of the same
 * platform, timed (wall clock, each transfer waited for). Sizes in MiB; GB/s = 1e9 bytes/s.
 *   (a) read GPU0 -> fresh pinned area of GPU0's context (CL_MEM_ALLOC_HOST_PTR, mapped):
 *       allocation + mapping, then the read, then a second read into the same area;
 *   (b) read GPU0 -> malloc'd (pageable) memory;
 *   (c) write pageable memory -> GPU1 (its own context);
 *   (d) write GPU0-context pinned memory -> GPU1 (its own context);
 *   (e) write GPU1-context pinned memory -> GPU1;
 *   (f) writes of pageable memory to GPUs 1..N-1 from one thread each, at once;
 *   (g) one context over GPU0 and GPU1: clEnqueueCopyBuffer on GPU1's queue from a buffer
 *       last written on GPU0's queue (the driver moves it; peer-to-peer where it can);
 *   (h) (g) with clEnqueueMigrateMemObjects to GPU1 instead of a copy.
 * usage: nv_paths [MiB=1024] [platform=0]
 * build: gcc -O2 -o nv_paths bench/nv_paths.c -lOpenCL -lpthread */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(x) do { cl_int e_ = (x); if (e_ != CL_SUCCESS) { fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); exit(1); } } while (0)

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static size_t bytes;
static void report(const char *what, double s) { printf("%-62s %8.1f ms %7.2f GB/s\n", what, s * 1e3, bytes / s / 1e9); fflush(stdout); }

struct one { cl_context ctx; cl_command_queue q; cl_mem buf; };
static struct one open1(cl_device_id d) {
    struct one o; cl_int e;
    o.ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &e); CK(e);
    o.q = clCreateCommandQueue(o.ctx, d, 0, &e); CK(e);
    o.buf = clCreateBuffer(o.ctx, CL_MEM_READ_WRITE, bytes, NULL, &e); CK(e);
    return o;
}
static void *pinned(struct one *o, cl_mem *m) {
    cl_int e;
    *m = clCreateBuffer(o->ctx, CL_MEM_ALLOC_HOST_PTR, bytes, NULL, &e); CK(e);
    void *p = clEnqueueMapBuffer(o->q, *m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, NULL, NULL, &e); CK(e);
    return p;
}
struct job { struct one *o; void *src; };
static void *writer(void *a) {
    struct job *j = a;
    CK(clEnqueueWriteBuffer(j->o->q, j->o->buf, CL_TRUE, 0, bytes, j->src, 0, NULL, NULL));
    return NULL;
}

int main(int argc, char **argv) {
    size_t mib = argc > 1 ? strtoul(argv[1], 0, 10) : 1024;
    unsigned pi = argc > 2 ? atoi(argv[2]) : 0;
    bytes = mib << 20;
    cl_platform_id ps[8]; cl_uint np; CK(clGetPlatformIDs(8, ps, &np));
    cl_device_id ds[16]; cl_uint nd; CK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 16, ds, &nd));
    printf("%u devices, %zu MiB\n", nd, mib);
    if (nd < 2) return 1;
    struct one o[16];
    for (cl_uint i = 0; i < nd; i++) o[i] = open1(ds[i]);
    char *page = malloc(bytes); memset(page, 1, bytes);
    CK(clEnqueueWriteBuffer(o[0].q, o[0].buf, CL_TRUE, 0, bytes, page, 0, NULL, NULL));
    double t = now(); cl_mem pm0; void *p0 = pinned(&o[0], &pm0); report("(a) pinned area of GPU0's context: allocate + map", now() - t);
    t = now(); CK(clEnqueueReadBuffer(o[0].q, o[0].buf, CL_TRUE, 0, bytes, p0, 0, NULL, NULL)); report("(a) read GPU0 -> that pinned area, first use", now() - t);
    t = now(); CK(clEnqueueReadBuffer(o[0].q, o[0].buf, CL_TRUE, 0, bytes, p0, 0, NULL, NULL)); report("(a) the same read again", now() - t);
    char *heap = malloc(bytes);
    t = now(); CK(clEnqueueReadBuffer(o[0].q, o[0].buf, CL_TRUE, 0, bytes, heap, 0, NULL, NULL)); report("(b) read GPU0 -> fresh malloc'd memory", now() - t);
    t = now(); CK(clEnqueueReadBuffer(o[0].q, o[0].buf, CL_TRUE, 0, bytes, heap, 0, NULL, NULL)); report("(b) the same read again", now() - t);
    t = now(); CK(clEnqueueWriteBuffer(o[1].q, o[1].buf, CL_TRUE, 0, bytes, heap, 0, NULL, NULL)); report("(c) write pageable -> GPU1", now() - t);
    t = now(); CK(clEnqueueWriteBuffer(o[1].q, o[1].buf, CL_TRUE, 0, bytes, p0, 0, NULL, NULL)); report("(d) write GPU0-context pinned -> GPU1", now() - t);
    cl_mem pm1; void *p1 = pinned(&o[1], &pm1); memcpy(p1, heap, bytes);
    t = now(); CK(clEnqueueWriteBuffer(o[1].q, o[1].buf, CL_TRUE, 0, bytes, p1, 0, NULL, NULL)); report("(e) write GPU1-context pinned -> GPU1", now() - t);
    t = now(); memcpy(p1, p0, bytes); report("    (memcpy GPU0-pinned -> GPU1-pinned, one thread)", now() - t);
    pthread_t th[16]; struct job jb[16];
    t = now();
    for (cl_uint i = 1; i < nd; i++) { jb[i].o = &o[i]; jb[i].src = heap; pthread_create(&th[i], NULL, writer, &jb[i]); }
    for (cl_uint i = 1; i < nd; i++) pthread_join(th[i], NULL);
    { char w[96]; snprintf(w, sizeof w, "(f) pageable -> GPUs 1..%u, a thread each (bytes per GPU)", nd - 1); report(w, now() - t); }
    t = now();
    for (cl_uint i = 1; i < nd; i++) CK(clEnqueueWriteBuffer(o[i].q, o[i].buf, CL_FALSE, 0, bytes, heap, 0, NULL, NULL));
    for (cl_uint i = 1; i < nd; i++) CK(clFinish(o[i].q));
    { char w[96]; snprintf(w, sizeof w, "(f') pageable -> GPUs 1..%u, non-blocking from one thread", nd - 1); report(w, now() - t); }
    /* one context over GPU0 and GPU1 */
    cl_int e; cl_context shared = clCreateContext(NULL, 2, ds, NULL, NULL, &e); CK(e);
    cl_command_queue q0 = clCreateCommandQueue(shared, ds[0], 0, &e); CK(e);
    cl_command_queue q1 = clCreateCommandQueue(shared, ds[1], 0, &e); CK(e);
    cl_mem a = clCreateBuffer(shared, CL_MEM_READ_WRITE, bytes, NULL, &e); CK(e);
    cl_mem b = clCreateBuffer(shared, CL_MEM_READ_WRITE, bytes, NULL, &e); CK(e);
    CK(clEnqueueWriteBuffer(q0, a, CL_TRUE, 0, bytes, heap, 0, NULL, NULL));
    CK(clEnqueueWriteBuffer(q1, b, CL_TRUE, 0, bytes, heap, 0, NULL, NULL));
    for (int rep = 0; rep < 2; rep++) {
        CK(clEnqueueWriteBuffer(q0, a, CL_TRUE, 0, 4096, heap, 0, NULL, NULL)); /* a lives on GPU0 */
        t = now(); CK(clEnqueueCopyBuffer(q1, a, b, 0, 0, bytes, 0, NULL, NULL)); CK(clFinish(q1));
        report(rep ? "(g) again" : "(g) one context: copy on GPU1's queue of a buffer GPU0 wrote", now() - t);
    }
    for (int rep = 0; rep < 2; rep++) {
        CK(clEnqueueWriteBuffer(q0, a, CL_TRUE, 0, 4096, heap, 0, NULL, NULL));
        t = now(); CK(clEnqueueMigrateMemObjects(q1, 1, &a, 0, 0, NULL, NULL)); CK(clFinish(q1));
        report(rep ? "(h) again" : "(h) one context: migrate to GPU1 a buffer GPU0 wrote", now() - t);
    }
    return 0;
}
