// @kernel geometric
// @global 128
// @local 32
// @group 1
// @ulp 16
// (PoCL computes normalize/length with rsqrt-based code; OpenCL 1.2 §7.4 allows several ulp)
// @arg buf:2048:fill=randf
// @arg buf:2048:fill=randf
// @arg buf:6144
kernel void geometric(global const float4* a, global const float4* b, global float* o) {
  int i = get_global_id(0);
  float4 x = a[i] - 0.5f, y = b[i];
  global float* r = o + 12 * i;
  r[0] = dot(x, y); r[1] = length(x); r[2] = distance(x, y);
  float4 n = normalize(x);
  r[3] = n.x; r[4] = n.y; r[5] = n.z; r[6] = n.w;
  float3 c = cross(x.xyz, y.xyz);
  r[7] = c.x; r[8] = c.y; r[9] = c.z;
  r[10] = dot(x.xy, y.xy); r[11] = length(x.xyz);
}
