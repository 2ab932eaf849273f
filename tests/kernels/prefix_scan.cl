// @kernel scan
// @global 512
// @local 128
// @group 2
// @arg buf:2048:fill=random
// @arg buf:2048
kernel void scan(global const uint* a, global uint* o) {
  local uint t[2][128];
  int l = get_local_id(0), n = get_local_size(0);
  int p = 0;
  t[0][l] = a[get_global_id(0)] & 0xff;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int off = 1; off < n; off <<= 1) {
    t[1 - p][l] = t[p][l] + (l >= off ? t[p][l - off] : 0);
    p = 1 - p;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  o[get_global_id(0)] = t[p][l];
}
