// @kernel conv_i2f
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:2048:fill=random
// @arg buf:4096
kernel void conv_i2f(global const int* a, global const long* b, global float* o) {
  int i = get_global_id(0);
  o[4*i+0] = (float)a[i];
  o[4*i+1] = (float)(uint)a[i];
  o[4*i+2] = (float)b[i];
  o[4*i+3] = convert_float((ulong)b[i]);
}
