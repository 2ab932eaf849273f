// @kernel hist
// @global 1024
// @local 256
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void hist(global const uchar* data, global uint* out) {
  local uint h[64];
  int l = get_local_id(0);
  if (l < 64) h[l] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  atomic_inc(&h[data[get_global_id(0)] & 63]);
  atom_add(&h[(data[get_global_id(0)] >> 2) & 63], 2u);
  barrier(CLK_LOCAL_MEM_FENCE);
  if (l < 64) out[get_group_id(0) * 64 + l] = h[l];
}
