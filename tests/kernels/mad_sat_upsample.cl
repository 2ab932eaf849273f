// @kernel msu
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:4096
kernel void msu(global const uint* a, global const int* b, global long* o) {
  int i = get_global_id(0);
  uint x = a[i];
  int y = b[i];
  o[2*i] = (long)mad_sat(y, 3, y) + (long)mad_sat(x, 5u, x);
  o[2*i+1] = upsample(y, x) ^ (long)mad_hi(y, y, 12345) ^ (long)mul24(y & 0x7fffff, 3);
}
