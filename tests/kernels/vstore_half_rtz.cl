// @kernel vsrtz
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=randf
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void vsrtz(global const float* a, global const half* h, global half* o) {
  int i = get_global_id(0);
  float x = vload_half(i, h);
  if (isnan(x) || isinf(x)) x = 1.0f;
  vstore_half_rtz((a[i] - x) * 3.3f, i, o);
}
