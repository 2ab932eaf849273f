// @kernel stencil
// @global 512
// @local 64
// @group 4
// @arg buf:2048:fill=randf
// @arg buf:2048
#define R 3
kernel void stencil(global const float* in, global float* out) {
  local float s[64 + 2 * R];
  int g = get_global_id(0), l = get_local_id(0), n = get_global_size(0);
  s[l + R] = in[g];
  if (l < R) {
    s[l] = in[max(g - R, 0)];
    s[l + 64 + R] = in[min(g + 64, n - 1)];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float acc = 0.0f;
  for (int k = -R; k <= R; k++) acc += s[l + R + k] * (float)(k + 4);
  out[g] = acc;
}
