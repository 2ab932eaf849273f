// @kernel vlh
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=randf
// @arg buf:1024:fill=random
// @arg buf:2048
kernel void vlh(global const float* a, global const half* h, global half* o) {
  int i = get_global_id(0);
  float x = vload_half(i, h);
  if (isnan(x) || isinf(x)) x = 1.0f;
  vstore_half((a[i] + x) * 0.5f, 2 * i, o);
  vstore_half_rtz(a[i] * -3.3f, 2 * i + 1, o);
}
