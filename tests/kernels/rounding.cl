// @kernel rounding
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=randf
// @arg buf:6144
kernel void rounding(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i] * 20.0f - 10.0f;
  if (i % 8 == 0) x = (float)(i / 8) - 15.5f;
  global float* r = o + 6 * i;
  r[0] = rint(x); r[1] = round(x); r[2] = trunc(x); r[3] = copysign(x, -1.0f);
  r[4] = fmod(x, 3.0f); r[5] = step(0.5f, x) + sign(x);
}
