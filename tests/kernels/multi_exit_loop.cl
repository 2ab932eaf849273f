// @kernel mexit
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void mexit(global const uint* a, global uint* o) {
  uint i = get_global_id(0);
  uint x = a[i];
  uint k = 0;
  for (;;) {
    if ((x & 0xf) == 0xf) { k += 1000; break; }
    x = x * 1103515245u + 12345u;
    k++;
    if (k > 40) break;
    if ((x >> 28) == 3u) { k += 500; goto out; }
  }
  k *= 2;
out:
  o[i] = k;
}
