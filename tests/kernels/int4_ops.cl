// @kernel int4_ops
// @global 256
// @local 64
// @group 3
// @arg buf:4096:fill=random
// @arg buf:4096:fill=random
// @arg buf:8192
kernel void int4_ops(global const int4* a, global const int4* b, global int4* o) {
  int i = get_global_id(0);
  int4 x = a[i], y = b[i];
  int4 c = x < y;
  o[2*i] = (x + y) * c + (x ^ y) * (~c & 1) + (x >> 3);
  uchar4 u = as_uchar4(x.x);
  o[2*i+1] = (int4)(u.x, u.y + u.z, u.w, (int)(x.s3 > 0)) + y.wzyx;
}
