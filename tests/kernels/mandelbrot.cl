// @kernel mandel
// @global 32,32
// @local 8,8
// @group 2,1
// @arg buf:4096
kernel void mandel(global int* o) {
  int x = get_global_id(0), y = get_global_id(1);
  float cr = -2.0f + 2.5f * x / 32.0f, ci = -1.25f + 2.5f * y / 32.0f;
  float zr = 0.0f, zi = 0.0f;
  int it = 0;
  while (zr * zr + zi * zi < 4.0f && it < 200) {
    float t = zr * zr - zi * zi + cr;
    zi = 2.0f * zr * zi + ci;
    zr = t;
    it++;
  }
  o[y * 32 + x] = it;
}
