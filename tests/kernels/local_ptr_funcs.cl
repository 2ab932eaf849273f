// @kernel lpf
// @global 256
// @local 128
// @group 1
// @arg buf:1024:fill=random
// @arg buf:1024
__attribute__((noinline)) void add_neighbor(local int* t, int l, int n) {
  t[l] += t[(l + 1) % n];
}
__attribute__((noinline)) int sum_range(local const int* t, int from, int to) {
  int s = 0;
  for (int k = from; k < to; k++) s += t[k];
  return s;
}
kernel void lpf(global const int* a, global int* o) {
  local int t[128];
  int l = get_local_id(0);
  t[l] = a[get_global_id(0)] & 0xffff;
  barrier(CLK_LOCAL_MEM_FENCE);
  int v = t[(l + 1) % 128];
  barrier(CLK_LOCAL_MEM_FENCE);
  t[l] += v;
  barrier(CLK_LOCAL_MEM_FENCE);
  o[get_global_id(0)] = sum_range(t, l & ~7, (l & ~7) + 8) + (l & 1);
}
