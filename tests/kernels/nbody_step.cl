// @kernel nbody
// @global 128
// @local 32
// @group 2
// @ulp 256
// (128-term sums with cancellation amplify the last-bit differences of rsqrt between libraries)
// @arg buf:2048:fill=randf
// @arg buf:2048
kernel void nbody(global const float4* pos, global float4* acc) {
  int i = get_global_id(0);
  float4 p = pos[i];
  float3 a = (float3)(0.0f);
  for (int j = 0; j < 128; j++) {
    float4 q = pos[j];
    float3 d = q.xyz - p.xyz;
    float r2 = dot(d, d) + 0.01f;
    float inv = rsqrt(r2);
    a += d * (q.w * inv * inv * inv);
  }
  acc[i] = (float4)(a, 0.0f);
}
