// @kernel bitonic
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void bitonic(global const int* a, global int* o) {
  local int s[64];
  int l = get_local_id(0);
  s[l] = a[get_global_id(0)];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int k = 2; k <= 64; k <<= 1)
    for (int j = k >> 1; j > 0; j >>= 1) {
      int p = l ^ j;
      if (p > l) {
        int x = s[l], y = s[p];
        bool up = (l & k) == 0;
        if ((x > y) == up) { s[l] = y; s[p] = x; }
      }
      barrier(CLK_LOCAL_MEM_FENCE);
    }
  o[get_global_id(0)] = s[l];
}
