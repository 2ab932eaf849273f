// @kernel hotspot
// @global 32,32
// @local 16,16
// @group 1,0
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=randf
// @arg buf:4096
#define B 16
kernel void hotspot(global const float* temp, global const float* power, global float* out) {
  local float t[B + 2][B + 2];
  int gx = get_global_id(0), gy = get_global_id(1), lx = get_local_id(0) + 1, ly = get_local_id(1) + 1;
  int w = get_global_size(0), h = get_global_size(1);
  t[ly][lx] = temp[gy * w + gx];
  if (lx == 1) t[ly][0] = temp[gy * w + max(gx - 1, 0)];
  if (lx == B) t[ly][B + 1] = temp[gy * w + min(gx + 1, w - 1)];
  if (ly == 1) t[0][lx] = temp[max(gy - 1, 0) * w + gx];
  if (ly == B) t[B + 1][lx] = temp[min(gy + 1, h - 1) * w + gx];
  barrier(CLK_LOCAL_MEM_FENCE);
  float c = t[ly][lx];
  float v = c + 0.1f * (t[ly - 1][lx] + t[ly + 1][lx] - 2.0f * c) + 0.1f * (t[ly][lx - 1] + t[ly][lx + 1] - 2.0f * c) + 0.05f * power[gy * w + gx];
  out[gy * w + gx] = v;
}
