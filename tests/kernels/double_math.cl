// @kernel dm
// @global 128
// @local 32
// @group 2
// @arg buf:1024:fill=random
// @arg buf:4096
kernel void dm(global const uint* a, global double* o) {
  int i = get_global_id(0);
  double x = (double)a[2*i] / 4294967296.0 * 10.0 - 5.0;
  double y = (double)a[2*i+1] / 4294967296.0;
  o[4*i+0] = x * y + x / (y + 1.0);
  o[4*i+1] = sqrt(fabs(x)) + floor(x);
  o[4*i+2] = fma(x, y, -x);
  o[4*i+3] = fmin(x, y) - fmax(x, -y);
}
