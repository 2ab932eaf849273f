// @kernel axo
// @global 256
// @local 64
// @group 1
// @arg buf:64
// @arg buf:1024
kernel void axo(global uint* cnt, global uint* o) {
  int g = get_group_id(0);
  uint old = atomic_inc(&cnt[g]);
  barrier(CLK_GLOBAL_MEM_FENCE);
  o[get_global_id(0)] = (old < 64u) + cnt[g];
}
