// @kernel alc
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:64
kernel void alc(global const uint* a, global uint* o) {
  local uint mx, cnt;
  int l = get_local_id(0);
  if (l == 0) { mx = 0; cnt = 0; }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint v = a[get_global_id(0)] >> 4;
  atomic_max(&mx, v);
  uint old = atomic_add(&cnt, 1u);
  uint x = atomic_xchg(&cnt, old + 1u);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l == 0) { o[get_group_id(0) * 2] = mx; o[get_group_id(0) * 2 + 1] = x > 1000u; }
}
