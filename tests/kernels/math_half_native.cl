// @kernel mhn
// @global 128
// @local 32
// @group 2
// @ulp 8192
// (native_ and half_ functions have implementation-defined accuracy; the check here is
// that they are computed, not their last bits)
// @arg buf:512:fill=randf
// @arg buf:2048
kernel void mhn(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i] + 0.5f;
  o[4*i+0] = native_sqrt(x);
  o[4*i+1] = half_exp(x);
  o[4*i+2] = native_recip(x);
  o[4*i+3] = native_divide(1.0f, x) + half_log(x);
}
