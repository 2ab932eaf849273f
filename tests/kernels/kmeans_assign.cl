// @kernel kassign
// @global 256
// @local 64
// @group 3
// @arg buf:2048:fill=randf
// @arg buf:64:fill=randf
// @arg buf:1024
kernel void kassign(global const float2* pts, global const float2* cent, global int* lab) {
  int i = get_global_id(0);
  float2 p = pts[i];
  float best = INFINITY;
  int bi = -1;
  for (int c = 0; c < 8; c++) {
    float2 d = p - cent[c];
    float dd = d.x * d.x + d.y * d.y;
    if (dd < best) { best = dd; bi = c; }
  }
  lab[i] = bi;
}
