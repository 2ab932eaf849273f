// @kernel int_ops
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:8192
kernel void int_ops(global const int* a, global const int* b, global int* o) {
  int i = get_global_id(0);
  int x = a[i], y = b[i] | 1;
  global int* r = o + 8 * i;
  r[0] = x + y; r[1] = x - y; r[2] = x * y; r[3] = x / y;
  r[4] = x % y; r[5] = x >> (y & 31); r[6] = x << (y & 15); r[7] = (x ^ y) & ~(x | 3);
}
