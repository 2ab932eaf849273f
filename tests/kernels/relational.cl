// @kernel relational
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:4096
kernel void relational(global const float* a, global int* o) {
  int i = get_global_id(0);
  float x = a[i];
  float4 v = (float4)(x, -x, x * 0.0f, 1.0f / (x - x));
  int4 n = isnan(v);
  int4 f = isfinite(v);
  o[4*i+0] = n.x + 2 * n.y + 4 * n.z + 8 * n.w + 16 * isinf(x) + 32 * signbit(x);
  o[4*i+1] = f.x + 3 * f.y + 5 * f.z + 7 * f.w + any(n) * 100 + all(f) * 1000;
  int4 s = select((int4)(1, 2, 3, 4), (int4)(5, 6, 7, 8), isless(v, (float4)(0.0f)));
  o[4*i+2] = s.x + s.y * 10 + s.z * 100 + s.w * 1000;
  o[4*i+3] = bitselect(i, ~i, 0x0f0f0f0f) ^ (isgreater(x, 1.0f) ? 7 : -3);
}
