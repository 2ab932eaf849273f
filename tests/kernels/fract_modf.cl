// @kernel fm
// @global 128
// @local 32
// @group 2
// @arg buf:512:fill=randf
// @arg buf:2048
kernel void fm(global const float* a, global float* o) {
  int i = get_global_id(0);
  float x = a[i] * 20.0f - 10.0f;
  float ip, fl;
  o[4*i+0] = fract(x, &fl);
  o[4*i+1] = fl;
  o[4*i+2] = modf(x, &ip);
  o[4*i+3] = ip;
}
