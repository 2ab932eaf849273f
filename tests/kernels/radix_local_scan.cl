// @kernel rscan
// @global 512
// @local 128
// @group 3
// @arg buf:2048:fill=random
// @arg buf:2048
// @arg buf:64
kernel void rscan(global const uint* keys, global uint* rank, global uint* counts) {
  local uint flags[128];
  local uint ones;
  int l = get_local_id(0);
  uint k = keys[get_global_id(0)];
  uint bit = (k >> 5) & 1u;
  flags[l] = bit;
  if (l == 0) ones = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (bit) atomic_inc(&ones);
  // exclusive scan (Blelloch up-sweep/down-sweep)
  for (int d = 1; d < 128; d <<= 1) {
    int idx = (l + 1) * d * 2 - 1;
    if (idx < 128) flags[idx] += flags[idx - d];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) flags[127] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int d = 64; d >= 1; d >>= 1) {
    int idx = (l + 1) * d * 2 - 1;
    if (idx < 128) { uint t = flags[idx - d]; flags[idx - d] = flags[idx]; flags[idx] += t; }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  rank[get_global_id(0)] = bit ? flags[l] + (128u - ones) : (uint)l - flags[l];
  if (l == 0) counts[get_group_id(0)] = ones;
}
