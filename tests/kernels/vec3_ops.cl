// @kernel v3
// @global 128
// @local 32
// @group 2
// @arg buf:2048:fill=randf
// @arg buf:2048
kernel void v3(global const float4* a, global float4* o) {
  int i = get_global_id(0);
  float3 v = a[i].xyz;
  float3 w = v * v + (float3)(1.0f, 2.0f, 3.0f);
  o[i] = (float4)(w.zxy, v.x + v.y + v.z);
}
