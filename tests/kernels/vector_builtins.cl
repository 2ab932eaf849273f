// @kernel vb
// @global 256
// @local 64
// @group 2
// @ulp 2
// (mix and smoothstep: PoCL evaluates them in single precision, we round once from double)
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=random
// @arg buf:4096
// @arg buf:8192
kernel void vb(global const float4* a, global const int4* b, global float4* o, global int4* p) {
  int i = get_global_id(0);
  float4 x = a[i];
  int4 y = b[i];
  o[i] = fmax(x, 0.5f) + clamp(x, 0.1f, 0.9f) + mix(x, x * 2.0f, 0.3f) + ldexp(x, 2) + step(0.5f, x) + smoothstep(0.1f, 0.9f, x);
  p[2*i] = min(y, 3) + clamp(y, 1, 5) + shuffle(y, (uint4)(3, 2, 1, 0)) + shuffle2(y, y * 3, (uint4)(7, 0, 5, 1)).xxyy;
  p[2*i+1] = rotate(y, 3) + max(y, 2) + shuffle(y, convert_uint4(y) & 3u);
}
