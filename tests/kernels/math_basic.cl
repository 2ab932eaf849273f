// @kernel math_basic
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=randf
// @arg buf:1024:fill=randf
// @arg buf:8192
kernel void math_basic(global const float* a, global const float* b, global float* o) {
  int i = get_global_id(0);
  float x = a[i] * 10.0f - 5.0f, y = b[i] * 4.0f;
  global float* r = o + 8 * i;
  r[0] = sqrt(y); r[1] = fabs(x); r[2] = floor(x); r[3] = ceil(x);
  r[4] = fmin(x, y); r[5] = fmax(x, y); r[6] = fma(x, y, 1.5f); r[7] = x / (y + 1.0f);
}
