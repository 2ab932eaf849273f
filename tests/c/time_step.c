/* An iterative kernel whose time step is a by-value argument that only indexes a read-only
 * table (PolyBench fdtd-2d's kernel 1: ey[0][j] = fict[t]): ITERS launches of
 *   advance(fict, ey, hz, t, n): row 0 of ey takes fict[t], the other rows relax towards hz,
 * then one of
 *   relax(ey, hz, n): hz takes the average of ey's neighbours,
 * and the app reads both at the end.
 *
 *   time_step N ITERS OUT      (an N x N grid of uints; N a multiple of 16)
 *
 * Writes ey and hz to OUT (compared with a native run). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
static const char *src =
    "__kernel void advance(__global const uint *fict, __global uint *ey, __global const uint *hz,\n"
    "                      int t, int n) {\n"
    "  int j = get_global_id(0), i = get_global_id(1);\n"
    "  if (i == 0) ey[j] = fict[t];\n"
    "  else ey[i * n + j] = ey[i * n + j] + ((hz[i * n + j] - hz[(i - 1) * n + j]) >> 1);\n"
    "}\n"
    "__kernel void relax(__global const uint *ey, __global uint *hz, int n) {\n"
    "  int j = get_global_id(0), i = get_global_id(1);\n"
    "  uint up = i + 1 < n ? ey[(i + 1) * n + j] : ey[i * n + j];\n"
    "  hz[i * n + j] = (ey[i * n + j] + up) >> 1;\n"
    "}\n";
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)
int main(int argc, char **argv) {
    if (argc < 4) { fprintf(stderr, "usage: time_step N ITERS OUT\n"); return 2; }
    int n = atoi(argv[1]), iters = atoi(argv[2]);
    FILE *out = fopen(argv[3], "wb");
    if (!out || n % 16) return 2;
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs(1, &p, NULL));
    OK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue(c, d, 0, &e); OK(e);
    cl_program pg = clCreateProgramWithSource(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram(pg, 1, &d, "", NULL, NULL));
    cl_kernel ks = clCreateKernel(pg, "advance", &e); OK(e);
    cl_kernel kr = clCreateKernel(pg, "relax", &e); OK(e);
    size_t cells = (size_t)n * n, bytes = cells * sizeof(cl_uint);
    cl_uint *fict = malloc((size_t)iters * sizeof(cl_uint)), *h = malloc(bytes);
    for (int t = 0; t < iters; t++) fict[t] = (cl_uint)t * 2654435761u;
    for (size_t i = 0; i < cells; i++) h[i] = (cl_uint)(i * 40503u);
    cl_mem bf = clCreateBuffer(c, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, (size_t)iters * sizeof(cl_uint), fict, &e); OK(e);
    cl_mem bey = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &e); OK(e);
    cl_mem bhz = clCreateBuffer(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, bytes, h, &e); OK(e);
    size_t g[2] = {(size_t)n, (size_t)n}, l[2] = {16, 4};
    for (int t = 0; t < iters; t++) {
        OK(clSetKernelArg(ks, 0, sizeof bf, &bf)); OK(clSetKernelArg(ks, 1, sizeof bey, &bey));
        OK(clSetKernelArg(ks, 2, sizeof bhz, &bhz)); OK(clSetKernelArg(ks, 3, sizeof t, &t));
        OK(clSetKernelArg(ks, 4, sizeof n, &n));
        OK(clEnqueueNDRangeKernel(q, ks, 2, NULL, g, l, 0, NULL, NULL));
        OK(clSetKernelArg(kr, 0, sizeof bey, &bey)); OK(clSetKernelArg(kr, 1, sizeof bhz, &bhz));
        OK(clSetKernelArg(kr, 2, sizeof n, &n));
        OK(clEnqueueNDRangeKernel(q, kr, 2, NULL, g, l, 0, NULL, NULL));
    }
    OK(clEnqueueReadBuffer(q, bey, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    fwrite(h, 1, bytes, out);
    OK(clEnqueueReadBuffer(q, bhz, CL_TRUE, 0, bytes, h, 0, NULL, NULL));
    fwrite(h, 1, bytes, out);
    fclose(out);
    printf("PASS time_step\n");
    return 0;
}
