// @kernel math_misc
// @global 256
// @local 64
// @group 3
// @ulp 4
// @arg buf:1024:fill=randf
// @arg buf:8192
kernel void math_misc(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i] * 4.0f - 2.0f;
  global float* r = o + 8 * i;
  r[0] = exp2(x); r[1] = log2(x + 2.5f); r[2] = tanh(x); r[3] = atan2(x, 0.7f);
  r[4] = hypot(x, 1.5f); r[5] = cbrt(x); r[6] = rsqrt(x + 2.5f); r[7] = asin(x * 0.45f);
}
