// @kernel l2d
// @global 16,16
// @local 8,8
// @group 1,1
// @arg buf:1024:fill=iota
// @arg local:256
// @arg buf:1024
kernel void l2d(global const int* in, local int* t, global int* out) {
  int lx = get_local_id(0), ly = get_local_id(1);
  int gx = get_global_id(0), gy = get_global_id(1);
  t[ly * 8 + lx] = in[gy * 16 + gx];
  barrier(CLK_LOCAL_MEM_FENCE);
  out[gy * 16 + gx] = t[(7 - ly) * 8 + (7 - lx)] + t[lx * 8 + ly];
}
