// @kernel fax
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=randf
// @arg buf:1024
// @arg buf:64
kernel void fax(global const float* a, global float* o, global float* slot) {
  int i = get_global_id(0), g = get_group_id(0);
  float old = atomic_xchg(&o[i], a[i] * 2.0f);
  o[i] += old;
  if (get_local_id(0) == 0) atomic_xchg(&slot[g], (float)g + 0.5f);
}
