// @kernel lup
// @global 128
// @local 64
// @group 1
// @arg buf:2048:fill=randf
// @arg buf:512
kernel void lup(global const float* a, global float* o) {
  int i = get_global_id(0);
  float w[8];
  #pragma unroll
  for (int k = 0; k < 8; k++) w[k] = a[(i * 8 + k) % 512];
  float m = w[0];
  #pragma unroll
  for (int k = 1; k < 8; k++) m = fmax(m, w[k]);
  int idx = 0;
  for (int k = 0; k < 8; k++) if (w[k] == m) { idx = k; break; }
  o[i] = m + (float)idx;
}
