// @kernel sobel
// @global 32,32
// @local 16,8
// @group 1,3
// @arg buf:4096:fill=randf
// @arg buf:4096
kernel void sobel(global const float* in, global float* out) {
  int x = get_global_id(0), y = get_global_id(1);
  int w = get_global_size(0), h = get_global_size(1);
  #define P(dx, dy) in[clamp(y + (dy), 0, h - 1) * w + clamp(x + (dx), 0, w - 1)]
  float gx = -P(-1,-1) - 2.0f*P(-1,0) - P(-1,1) + P(1,-1) + 2.0f*P(1,0) + P(1,1);
  float gy = -P(-1,-1) - 2.0f*P(0,-1) - P(1,-1) + P(-1,1) + 2.0f*P(0,1) + P(1,1);
  out[y * w + x] = gx * gx + gy * gy;
}
