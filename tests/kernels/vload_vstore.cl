// @kernel vload_vstore
// @global 128
// @local 32
// @group 2
// @arg buf:8192:fill=randf
// @arg buf:8192
kernel void vload_vstore(global const float* a, global float* o) {
  int i = get_global_id(0);
  float4 v = vload4(i, a);
  float3 w = vload3(i, a + 512);
  vstore4(v * 2.0f + 1.0f, i, o);
  vstore3(w.zyx - v.xyz, i, o + 512);
  float2 u = vload2(i, a + 1024);
  vstore2(u.yx, i, o + 1024);
}
