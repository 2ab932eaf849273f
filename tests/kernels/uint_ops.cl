// @kernel uint_ops
// @global 256
// @local 32
// @group 7
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:6144
kernel void uint_ops(global const uint* a, global const uint* b, global uint* o) {
  uint i = get_global_id(0);
  uint x = a[i], y = b[i] | 1u;
  global uint* r = o + 6 * i;
  r[0] = x / y; r[1] = x % y; r[2] = x >> (y % 32u); r[3] = x * y + 7u;
  r[4] = (x < y) ? x : y; r[5] = x > 0x80000000u;
}
