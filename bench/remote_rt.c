// Round trips to one OpenCL device, for bench/remote.sh (issue 33: what a PoCL-Remote device
// costs per launch and per byte against a local one):
//   launch  N times: clEnqueueNDRangeKernel of a tiny kernel (GLOBAL work-items in groups of
//           64, each adds 1 to its own uint) + clFinish, each timed on the host; then N
//           launches queued back to back and one clFinish (time / N). Checked at the end:
//           every uint must equal the number of launches.
//   write / read  for each size: a blocking clEnqueueWriteBuffer / clEnqueueReadBuffer of
//           that many bytes from / into host memory (malloc), REPS times, each timed.
// Medians over the repetitions (after WARM untimed launches and one untimed transfer per
// size, which leave the program build and first-touch costs out).
// usage: remote_rt [P:D [LAUNCHES=2000 [SIZES_KIB=4,1024,65536 [GLOBAL=4096 [WARM=20]]]]]
//   P:D defaults to CLPRISM_EXAMPLE_DEVICE, else 0:0; SIZES_KIB=0: no transfers (a run under
//   clprism, whose transfers would only be forwarded to the app's device).
// Output (stdout), one line each:
//   device P:D "NAME" version="CL_DEVICE_VERSION"
//   launch n=N global=G rt_median_us=.. rt_p10_us=.. rt_p90_us=.. queued_us_per_launch=.. check=ok
//   write bytes=B reps=R median_us=.. MBps=..       (and `read ...`; MB = 10^6 bytes)
#define _POSIX_C_SOURCE 199309L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *src =
    "__kernel void tick(__global uint *p) { p[get_global_id(0)] += 1u; }\n";

#define CHECK(e) do { cl_int _e = (e); if (_e != CL_SUCCESS) { fprintf(stderr, "%s:%d: error %d\n", __FILE__, __LINE__, _e); exit(1); } } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

// the q-quantile of v[0..n) (sorts v)
static double quantile(double *v, size_t n, double q) {
  qsort(v, n, sizeof *v, cmp);
  return v[(size_t)(q * (double)(n - 1) + 0.5)];
}

int main(int argc, char **argv) {
  const char *pd = argc > 1 ? argv[1] : getenv("CLPRISM_EXAMPLE_DEVICE");
  int pi = 0, di = 0;
  if (pd && sscanf(pd, "%d:%d", &pi, &di) != 2) { fprintf(stderr, "usage: remote_rt [P:D [LAUNCHES [SIZES_KIB [GLOBAL [WARM]]]]]\n"); return 2; }
  size_t n = argc > 2 ? (size_t)atol(argv[2]) : 2000;
  const char *sizes = argc > 3 ? argv[3] : "4,1024,65536";
  size_t global = argc > 4 ? (size_t)atol(argv[4]) : 4096, local = 64;
  size_t warm = argc > 5 ? (size_t)atol(argv[5]) : 20;
  if (n < 1 || global < local || global % local) { fprintf(stderr, "remote_rt: LAUNCHES >= 1, GLOBAL a multiple of 64\n"); return 2; }

  cl_platform_id ps[8]; cl_uint np; CHECK(clGetPlatformIDs(8, ps, &np));
  if (pi >= (int)np) { fprintf(stderr, "no platform %d\n", pi); return 1; }
  cl_device_id ds[16]; cl_uint nd; CHECK(clGetDeviceIDs(ps[pi], CL_DEVICE_TYPE_ALL, 16, ds, &nd));
  if (di >= (int)nd) { fprintf(stderr, "no device %d on platform %d\n", di, pi); return 1; }
  cl_device_id d = ds[di];
  char name[256], version[256];
  CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof name, name, NULL));
  CHECK(clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof version, version, NULL));
  printf("device %d:%d \"%s\" version=\"%s\"\n", pi, di, name, version);
  fflush(stdout);

  cl_int err;
  cl_context ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err); CHECK(err);
  cl_command_queue q = clCreateCommandQueue(ctx, d, 0, &err); CHECK(err);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err); CHECK(err);
  CHECK(clBuildProgram(prog, 1, &d, "", NULL, NULL));
  cl_kernel k = clCreateKernel(prog, "tick", &err); CHECK(err);
  cl_uint *h = calloc(global, sizeof *h);
  cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, global * sizeof *h, h, &err); CHECK(err);
  CHECK(clSetKernelArg(k, 0, sizeof b, &b));

  // launch round trips
  for (size_t i = 0; i < warm; i++) {
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(q));
  }
  double *t = malloc(n * sizeof *t);
  for (size_t i = 0; i < n; i++) {
    double t0 = now_us();
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
    CHECK(clFinish(q));
    t[i] = now_us() - t0;
  }
  double t0 = now_us();
  for (size_t i = 0; i < n; i++)
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
  CHECK(clFinish(q));
  double queued = (now_us() - t0) / (double)n;
  CHECK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, global * sizeof *h, h, 0, NULL, NULL));
  size_t bad = 0;
  for (size_t i = 0; i < global; i++) bad += h[i] != (cl_uint)(warm + 2 * n);
  double p10 = quantile(t, n, 0.1), med = quantile(t, n, 0.5), p90 = quantile(t, n, 0.9);
  printf("launch n=%zu global=%zu rt_median_us=%.1f rt_p10_us=%.1f rt_p90_us=%.1f queued_us_per_launch=%.1f check=%s\n",
         n, global, med, p10, p90, queued, bad ? "FAIL" : "ok");
  fflush(stdout);
  if (bad) { fprintf(stderr, "remote_rt: %zu of %zu results wrong\n", bad, global); return 1; }

  // transfers
  for (const char *s = sizes; *s;) {
    size_t kib = strtoul(s, NULL, 10);
    const char *c = strchr(s, ',');
    s = c ? c + 1 : s + strlen(s);
    if (!kib) continue;
    size_t bytes = kib << 10;
    // about 256 MiB moved per direction, 3..200 repetitions
    size_t reps = (256u << 20) / bytes;
    reps = reps < 3 ? 3 : reps > 200 ? 200 : reps;
    char *host = malloc(bytes);
    memset(host, 0x5a, bytes);
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err); CHECK(err);
    double *w = malloc(reps * sizeof *w), *r = malloc(reps * sizeof *r);
    CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
    for (size_t i = 0; i < reps; i++) {
      double a = now_us();
      CHECK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
      w[i] = now_us() - a;
    }
    for (size_t i = 0; i < reps; i++) {
      double a = now_us();
      CHECK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, bytes, host, 0, NULL, NULL));
      r[i] = now_us() - a;
    }
    double wm = quantile(w, reps, 0.5), rm = quantile(r, reps, 0.5);
    printf("write bytes=%zu reps=%zu median_us=%.1f MBps=%.0f\n", bytes, reps, wm, bytes / wm);
    printf("read bytes=%zu reps=%zu median_us=%.1f MBps=%.0f\n", bytes, reps, rm, bytes / rm);
    fflush(stdout);
    CHECK(clReleaseMemObject(m));
    free(host); free(w); free(r);
  }
  CHECK(clReleaseMemObject(b));
  CHECK(clReleaseKernel(k));
  CHECK(clReleaseProgram(prog));
  CHECK(clReleaseCommandQueue(q));
  CHECK(clReleaseContext(ctx));
  free(t); free(h);
  return 0;
}
