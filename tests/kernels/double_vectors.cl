// @kernel dv
// @global 128
// @local 32
// @group 3
// @arg buf:4096:fill=random
// @arg buf:4096
kernel void dv(global const uint4* a, global double2* o) {
  int i = get_global_id(0);
  uint4 r = a[i];
  double2 x = convert_double2(r.xy) / 4294967296.0;
  double2 y = convert_double2(as_int2(r.zw)) * 1e-9;
  o[2*i] = x * y + (double2)(1.0, -1.0);
  o[2*i+1] = fma(x, y, x) - floor(y * 10.0);
}
