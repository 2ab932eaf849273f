// @kernel long_ops
// @global 128
// @local 32
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:6144
kernel void long_ops(global const long* a, global const long* b, global long* o) {
  int i = get_global_id(0);
  long x = a[i], y = b[i] | 1;
  global long* r = o + 6 * i;
  r[0] = x * y; r[1] = x / y; r[2] = x % y; r[3] = x >> (y & 63);
  r[4] = (ulong)x >> (y & 63); r[5] = (x < y) ? x - y : x + y;
}
