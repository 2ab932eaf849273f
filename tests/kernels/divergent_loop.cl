// @kernel dloop
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void dloop(global const uint* a, global uint* o) {
  uint i = get_global_id(0);
  uint n = a[i] % 37u;
  uint acc = 1;
  for (uint k = 0; k < n; k++) {
    acc = acc * 3u + k;
    if (acc % 7u == 3u) continue;
    acc ^= k << 3;
  }
  o[i] = acc;
}
