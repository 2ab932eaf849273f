// @kernel transpose
// @global 64,64
// @local 16,16
// @group 2,1
// @arg buf:16384:fill=iota
// @arg buf:16384
#define T 16
kernel void transpose(global const float* in, global float* out) {
  local float tile[T][T + 1];
  int gx = get_global_id(0), gy = get_global_id(1);
  int lx = get_local_id(0), ly = get_local_id(1);
  int w = get_global_size(0), h = get_global_size(1);
  tile[ly][lx] = in[gy * w + gx];
  barrier(CLK_LOCAL_MEM_FENCE);
  int ox = get_group_id(1) * T + lx, oy = get_group_id(0) * T + ly;
  out[oy * h + ox] = tile[lx][ly];
}
