// @kernel sws
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void sws(global const uint* a, global uint* o) {
  uint i = get_global_id(0);
  uint r = 0;
  switch (a[i] & 3u) {
    case 0: r = 10; break;
    case 1: r = 20; break;
    case 2: r = 35; break;
    case 3: r = 47; break;
  }
  o[i] = r + i;
}
