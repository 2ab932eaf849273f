// @kernel parr
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void parr(global const uint* a, global uint* o) {
  uint i = get_global_id(0);
  uint t[16];
  for (int k = 0; k < 16; k++) t[k] = a[i] * (k + 1) ^ k;
  uint idx = a[i] % 16u;
  t[idx] += 5;
  uint s = 0;
  for (int k = 0; k < 16; k++) s += t[(k * 7 + idx) % 16] << (k & 3);
  o[i] = s;
}
