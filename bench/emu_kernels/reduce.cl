// Two-stage sum reduction: each work-group reduces its chunk in local memory.
kernel void reduce(global const float* in, global float* partial, local float* t, uint n) {
  uint l = get_local_id(0), g = get_global_id(0), gs = get_global_size(0);
  float acc = 0.0f;
  for (uint i = g; i < n; i += gs) acc += in[i];
  t[l] = acc;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {
    if (l < s) t[l] += t[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (l == 0) partial[get_group_id(0)] = t[0];
}
