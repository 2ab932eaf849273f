kernel void lreduce(global int* o, int n) {
  local int t[256];
  int l = get_local_id(0);
  int acc = 0;
  for (int r = 0; r < n; r++) {
    t[l] = l + r;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = 128; s > 0; s >>= 1) {
      if (l < s) t[l] += t[l + s];
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc += t[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  o[get_global_id(0)] = acc;
}
