// @kernel math_trans
// @global 256
// @local 64
// @group 1
// @ulp 4
// @arg buf:1024:fill=randf
// @arg buf:6144
kernel void math_trans(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i] * 6.0f - 3.0f;
  global float* r = o + 6 * i;
  r[0] = sin(x); r[1] = cos(x); r[2] = exp(x); r[3] = log(fabs(x) + 0.1f);
  r[4] = pow(fabs(x), 1.7f); r[5] = tan(x * 0.4f);
}
