// @kernel wr
// @global 256
// @local 256
// @group 0
// @arg buf:1024:fill=iota
// @arg buf:1024
kernel void wr(global const int* a, global int* o) {
  local int s[256];
  int l = get_local_id(0);
  s[l] = a[l] * 2;
  barrier(CLK_LOCAL_MEM_FENCE);
  int stride = 1;
  while (stride < 256) {
    int idx = 2 * stride * l;
    if (idx + stride < 256) s[idx] += s[idx + stride];
    stride *= 2;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  o[l] = s[0] + l;
}
