// @kernel dif
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=randf
// @arg buf:1024
kernel void dif(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i];
  if (i & 1) {
    x = x * 2.0f;
    if (i & 2) x += 1.0f; else x -= 1.0f;
  } else {
    x = x + 3.0f;
  }
  o[i] = x;
}
