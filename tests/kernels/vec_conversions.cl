// @kernel vconv
// @global 256
// @local 64
// @group 1
// @arg buf:4096:fill=randf
// @arg buf:4096
kernel void vconv(global const float4* a, global int4* o) {
  int i = get_global_id(0);
  float4 x = a[i] * 600.0f - 300.0f;
  int4 r0 = convert_int4_rte(x);
  uchar4 r1 = convert_uchar4_sat_rtz(x);
  short4 r2 = convert_short4_sat(x * 200.0f);
  o[i] = r0 + convert_int4(r1) * 1000 + convert_int4(r2) * 7;
}
