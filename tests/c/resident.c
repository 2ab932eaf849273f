/* The buffer directory's cases (issue 31 item 3): an iterative three-point stencil that
 * ping-pongs two buffers of N uints, ITERS launches, and what the app does in between.
 *
 *   resident MODE N ITERS OUT
 *
 * MODE:
 *   end     the app reads the result only at the end;
 *   read    also a blocking read of the current buffer half-way;
 *   map     also a map for reading half-way;
 *   copy    also copies the current buffer into a third one half-way (read at the end too);
 *   write   overwrites the first quarter of the current buffer half-way (the devices' copies
 *           of it become stale);
 *   shift   odd launches cover only the second half (a global offset): each device's ranges
 *           move between launches;
 *   mixed   after each launch, a kernel that reads its result and cannot stay on the devices
 *           the same way: a global-atomic tally (run whole) and a scatter through a modulo
 *           (no affine footprint), alternately; both outputs are read at the end;
 *   barrier a barrier after each launch (clEnqueueBarrier, clEnqueueBarrierWithWaitList
 *           without a wait list, alternately), as PolyBench-ACC enqueues between kernels;
 *   release a temporary buffer written by a split launch is released while the devices hold
 *           it, then a new one is made;
 *   finish  clFinish after each launch (as jacobi-2d does), so nothing is queued behind a
 *           running launch; finish-write and finish-shift add write's or shift's pattern.
 *
 * Writes every buffer the app reads, in order, to OUT (compared with a native run); prints
 * "PASS resident" when the app's own integer reference agrees. Integer arithmetic only. */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int has(const char *mode, const char *part) { return strstr(mode, part) != NULL; }
static const char *src =
    "__kernel void smooth(__global const uint *in, __global uint *out, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  uint l = i > 0 ? in[i - 1] : in[i];\n"
    "  uint r = i + 1 < n ? in[i + 1] : in[i];\n"
    "  out[i] = (l + 2u * in[i] + r) / 4u + (i & 7u);\n"
    "}\n"
    "__kernel void tally(__global const uint *x, __global uint *acc) {\n"
    "  atomic_add(&acc[0], x[get_global_id(0)] & 1u);\n"
    "}\n"
    "__kernel void scatter(__global const uint *x, __global uint *y, uint n) {\n"
    "  uint i = get_global_id(0);\n"
    "  y[(i * 7u) % n] = x[i] ^ i;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)

static void smooth_host(const cl_uint *in, cl_uint *out, cl_uint n, size_t lo, size_t hi) {
    for (size_t i = lo; i < hi; i++) {
        cl_uint l = i > 0 ? in[i - 1] : in[i];
        cl_uint r = i + 1 < n ? in[i + 1] : in[i];
        out[i] = (l + 2u * in[i] + r) / 4u + (cl_uint)(i & 7u);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: resident MODE N ITERS OUT\n");
        return 2;
    }
    const char *mode = argv[1];
    cl_uint n = (cl_uint)atoi(argv[2]);
    int iters = atoi(argv[3]);
    FILE *out = fopen(argv[4], "wb");
    if (!out) return 2;
    cl_platform_id p; cl_device_id d; cl_int e;
    /* CLPRISM_EXAMPLE_DEVICE=P:D picks the device (as the examples do), else 0:0 */
    unsigned pi = 0, di = 0;
    const char *sel = getenv("CLPRISM_EXAMPLE_DEVICE");
    if (sel && sscanf(sel, "%u:%u", &pi, &di) != 2) return 2;
    cl_platform_id ps[8]; cl_device_id ds[8]; cl_uint np = 0, nd = 0;
    OK(clGetPlatformIDs(8, ps, &np));
    if (pi >= np || pi >= 8) return 2;
    p = ps[pi];
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 8, ds, &nd));
    if (di >= nd || di >= 8) return 2;
    d = ds[di];
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, CL_QUEUE_PROFILING_ENABLE, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel(pg, "smooth", &e); OK(e);
    size_t bytes = (size_t)n * sizeof(cl_uint);
    cl_uint *h[2] = {malloc(bytes), malloc(bytes)}, *back = malloc(bytes);
    for (cl_uint i = 0; i < n; i++) h[0][i] = h[1][i] = (i * 2654435761u) >> 8;
    cl_mem b[2];
    for (int j = 0; j < 2; j++) {
        b[j] = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h[j], &e); OK(e);
    }
    cl_mem third = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e); OK(e);
    cl_uint zero[1] = {0};
    cl_mem acc = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, zero, &e); OK(e);
    cl_kernel kt = clCreateKernel(pg, "tally", &e); OK(e);
    cl_kernel ks = clCreateKernel(pg, "scatter", &e); OK(e);
    size_t local = 64;
    int cur = 0;
    for (int it = 0; it < iters; it++) {
        int nxt = 1 - cur;
        size_t off = 0, g = n;
        if (has(mode, "shift") && (it & 1)) { off = n / 2; g = n - off; }
        OK(clSetKernelArg(k, 0, sizeof(cl_mem), &b[cur]));
        OK(clSetKernelArg(k, 1, sizeof(cl_mem), &b[nxt]));
        OK(clSetKernelArg(k, 2, sizeof n, &n));
        OK(clEnqueueNDRangeKernel(q, k, 1, &off, &g, &local, 0, NULL, NULL));
        if (has(mode, "finish")) OK(clFinish(q));
        /* as PolyBench-ACC between the kernels of a time step */
        if (!strcmp(mode, "barrier")) {
            if (it & 1) OK(clEnqueueBarrierWithWaitList(q, 0, NULL, NULL));
            else OK(clEnqueueBarrier(q));
        }
        smooth_host(h[cur], h[nxt], n, off, off + g);
        if (!strcmp(mode, "mixed")) {
            size_t all = n;
            cl_kernel km = (it & 1) ? ks : kt;
            OK(clSetKernelArg(km, 0, sizeof(cl_mem), &b[nxt]));
            OK(clSetKernelArg(km, 1, sizeof(cl_mem), (it & 1) ? &third : &acc));
            if (it & 1) OK(clSetKernelArg(km, 2, sizeof n, &n));
            OK(clEnqueueNDRangeKernel(q, km, 1, NULL, &all, &local, 0, NULL, NULL));
        }
        cur = nxt;
        if (it == iters / 2) {
            if (!strcmp(mode, "read")) {
                OK(clEnqueueReadBuffer(q, b[cur], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
                fwrite(back, 1, bytes, out);
            } else if (!strcmp(mode, "map")) {
                void *m = clEnqueueMapBuffer(q, b[cur], CL_TRUE, CL_MAP_READ, 0, bytes, 0, NULL, NULL, &e); OK(e);
                fwrite(m, 1, bytes, out);
                OK(clEnqueueUnmapMemObject(q, b[cur], m, 0, NULL, NULL));
            } else if (!strcmp(mode, "copy")) {
                OK(clEnqueueCopyBuffer(q, b[cur], third, 0, 0, bytes, 0, NULL, NULL));
            } else if (has(mode, "write")) {
                for (cl_uint i = 0; i < n / 4; i++) h[cur][i] = i * 3u;
                OK(clEnqueueWriteBuffer(q, b[cur], CL_TRUE, 0, bytes / 4, h[cur], 0, NULL, NULL));
            } else if (!strcmp(mode, "release")) {
                cl_mem tmp = clCreateBuffer(c, CL_MEM_READ_WRITE, bytes, NULL, &e); OK(e);
                OK(clSetKernelArg(k, 0, sizeof(cl_mem), &b[cur]));
                OK(clSetKernelArg(k, 1, sizeof(cl_mem), &tmp));
                size_t g2 = n;
                OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g2, &local, 0, NULL, NULL));
                OK(clReleaseMemObject(tmp));
                cl_mem tmp2 = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h[cur], &e); OK(e);
                OK(clEnqueueReadBuffer(q, tmp2, CL_TRUE, 0, bytes, back, 0, NULL, NULL));
                fwrite(back, 1, bytes, out);
                OK(clReleaseMemObject(tmp2));
            }
        }
    }
    OK(clEnqueueReadBuffer(q, b[cur], CL_TRUE, 0, bytes, back, 0, NULL, NULL));
    fwrite(back, 1, bytes, out);
    int bad = memcmp(back, h[cur], bytes) != 0;
    if (!strcmp(mode, "copy") || !strcmp(mode, "mixed")) {
        OK(clEnqueueReadBuffer(q, third, CL_TRUE, 0, bytes, back, 0, NULL, NULL));
        fwrite(back, 1, bytes, out);
    }
    if (!strcmp(mode, "mixed")) {
        cl_uint tally[1];
        OK(clEnqueueReadBuffer(q, acc, CL_TRUE, 0, sizeof tally, tally, 0, NULL, NULL));
        fwrite(tally, 1, sizeof tally, out);
    }
    fclose(out);
    printf("%s resident %s\n", bad ? "FAIL" : "PASS", mode);
    for (int j = 0; j < 2; j++) clReleaseMemObject(b[j]);
    clReleaseMemObject(third); clReleaseMemObject(acc);
    clReleaseKernel(kt); clReleaseKernel(ks); clReleaseKernel(k); clReleaseProgram(pg);
    clReleaseCommandQueue(q); clReleaseContext(c);
    free(h[0]); free(h[1]); free(back);
    return bad ? 1 : 0;
}
