/* Loads OpenCL with dlopen("libOpenCL.so.1") (as pyopencl-style plugins and ctypes do) instead
 * of linking it, then launches one kernel ("twice", 3 times, global 256). Prints
 * "clprism: yes" when the library it got exports clprism_identity, "kernels: 3", and checks
 * the result. Build without -lOpenCL: cc dlopen_app.c -ldl. Exit 0 ok, 1 wrong result,
 * 2 OpenCL or loader error. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#define SYM(name) name##_t name##_p = (name##_t)dlsym(h, #name); \
    if (!name##_p) { fprintf(stderr, "missing %s\n", #name); return 2; }
#define OK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s -> %d\n", #e, _e); return 2; } } while (0)

typedef cl_int (*clGetPlatformIDs_t)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*clGetDeviceIDs_t)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
typedef cl_context (*clCreateContext_t)(const cl_context_properties *, cl_uint, const cl_device_id *,
                                        void (*)(const char *, const void *, size_t, void *), void *, cl_int *);
typedef cl_command_queue (*clCreateCommandQueue_t)(cl_context, cl_device_id, cl_command_queue_properties, cl_int *);
typedef cl_program (*clCreateProgramWithSource_t)(cl_context, cl_uint, const char **, const size_t *, cl_int *);
typedef cl_int (*clBuildProgram_t)(cl_program, cl_uint, const cl_device_id *, const char *,
                                   void (*)(cl_program, void *), void *);
typedef cl_kernel (*clCreateKernel_t)(cl_program, const char *, cl_int *);
typedef cl_mem (*clCreateBuffer_t)(cl_context, cl_mem_flags, size_t, void *, cl_int *);
typedef cl_int (*clSetKernelArg_t)(cl_kernel, cl_uint, size_t, const void *);
typedef cl_int (*clEnqueueNDRangeKernel_t)(cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *,
                                           const size_t *, cl_uint, const cl_event *, cl_event *);
typedef cl_int (*clEnqueueReadBuffer_t)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint,
                                        const cl_event *, cl_event *);
typedef cl_int (*clFinish_t)(cl_command_queue);

static const char *src =
    "__kernel void twice(__global int *x) { size_t i = get_global_id(0); x[i] = 2 * x[i]; }\n";

int main(void) {
    void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
    printf("clprism: %s\n", dlsym(h, "clprism_identity") ? "yes" : "no");
    SYM(clGetPlatformIDs) SYM(clGetDeviceIDs) SYM(clCreateContext) SYM(clCreateCommandQueue)
    SYM(clCreateProgramWithSource) SYM(clBuildProgram) SYM(clCreateKernel) SYM(clCreateBuffer)
    SYM(clSetKernelArg) SYM(clEnqueueNDRangeKernel) SYM(clEnqueueReadBuffer) SYM(clFinish)
    cl_platform_id p; cl_device_id d; cl_int e;
    OK(clGetPlatformIDs_p(1, &p, NULL));
    OK(clGetDeviceIDs_p(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
    cl_context c = clCreateContext_p(NULL, 1, &d, NULL, NULL, &e); OK(e);
    cl_command_queue q = clCreateCommandQueue_p(c, d, 0, &e); OK(e);
    cl_program prog = clCreateProgramWithSource_p(c, 1, &src, NULL, &e); OK(e);
    OK(clBuildProgram_p(prog, 1, &d, "", NULL, NULL));
    cl_kernel k = clCreateKernel_p(prog, "twice", &e); OK(e);
    enum { N = 256 };
    int x[N];
    for (int i = 0; i < N; i++) x[i] = i;
    cl_mem b = clCreateBuffer_p(c, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof x, x, &e); OK(e);
    OK(clSetKernelArg_p(k, 0, sizeof b, &b));
    size_t g = N;
    for (int i = 0; i < 3; i++) OK(clEnqueueNDRangeKernel_p(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    OK(clFinish_p(q));
    OK(clEnqueueReadBuffer_p(q, b, CL_TRUE, 0, sizeof x, x, 0, NULL, NULL));
    for (int i = 0; i < N; i++)
        if (x[i] != 8 * i) { fprintf(stderr, "wrong result at %d\n", i); return 1; }
    printf("kernels: 3\n");
    return 0;
}
