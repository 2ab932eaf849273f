// @kernel float4_ops
// @global 256
// @local 64
// @group 2
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=randf
// @arg buf:8192
kernel void float4_ops(global const float4* a, global const float4* b, global float4* o) {
  int i = get_global_id(0);
  float4 x = a[i], y = b[i];
  float4 z = x * y + (float4)(1.0f, 2.0f, 3.0f, 4.0f);
  z.xy = z.yx;
  z.w = x.x - y.w;
  o[2*i] = z / (y + 1.0f);
  o[2*i+1] = (float4)(z.zw, x.xy) * 0.5f;
}
