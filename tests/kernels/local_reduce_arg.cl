// @kernel local_reduce_arg
// @global 2048
// @local 256
// @group 6
// @arg buf:8192:fill=randf
// @arg local:1024
// @arg buf:32
kernel void local_reduce_arg(global const float* a, local float* tmp, global float* o) {
  int l = get_local_id(0);
  tmp[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) tmp[l] = fmax(tmp[l], tmp[l + s]) + 0.0f * tmp[l];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) o[get_group_id(0)] = tmp[0];
}
