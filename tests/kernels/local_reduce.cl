// @kernel local_reduce
// @global 1024
// @local 128
// @group 5
// @arg buf:4096:fill=iota
// @arg buf:32
kernel void local_reduce(global const int* a, global int* o) {
  local int tmp[128];
  int l = get_local_id(0);
  tmp[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] += tmp[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) o[get_group_id(0)] = tmp[0];
}
