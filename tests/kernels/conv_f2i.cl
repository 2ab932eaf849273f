// @kernel conv_f2i
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:5120
kernel void conv_f2i(global const float* a, global int* o) {
  int i = get_global_id(0);
  float x = (float)(((global const int*)a)[i] % 100000) / 7.0f;
  o[5*i+0] = (int)x;
  o[5*i+1] = convert_int_rte(x);
  o[5*i+2] = convert_int_rtp(x);
  o[5*i+3] = convert_int_rtn(x);
  o[5*i+4] = convert_int_sat(x * 1e6f);
}
