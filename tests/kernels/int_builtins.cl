// @kernel int_builtins
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:16384
kernel void int_builtins(global const int* a, global const int* b, global int* o) {
  int i = get_global_id(0);
  int x = a[i], y = b[i];
  uint ux = (uint)x, uy = (uint)y;
  global int* r = o + 16 * i;
  r[0] = abs(x); r[1] = min(x, y); r[2] = max(x, y); r[3] = clamp(x, -1000, 1000);
  r[4] = clz(ux); r[5] = popcount(x); r[6] = mul_hi(x, y); r[7] = (int)mul_hi(ux, uy);
  r[8] = mad24(x & 0xfff, y & 0xfff, 5); r[9] = rotate(x, y & 31); r[10] = add_sat(x, y);
  r[11] = sub_sat(x, y); r[12] = hadd(x, y); r[13] = rhadd(x, y); r[14] = (int)abs_diff(x, y);
  r[15] = (int)upsample((short)x, (ushort)y);
}
