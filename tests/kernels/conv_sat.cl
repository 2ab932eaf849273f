// @kernel conv_sat
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=random
// @arg buf:2048
kernel void conv_sat(global const int* a, global uchar* o) {
  int i = get_global_id(0);
  int x = a[i] >> 20;
  float f = (float)x * 0.37f;
  o[8*i+0] = convert_uchar_sat(x);
  o[8*i+1] = (uchar)convert_char_sat(x);
  o[8*i+2] = convert_uchar_sat(f);
  o[8*i+3] = (uchar)convert_char_sat_rte(f);
  ushort us = convert_ushort_sat(x * 40);
  o[8*i+4] = us & 255; o[8*i+5] = us >> 8;
  short ss = convert_short_sat((long)x * 100000L);
  o[8*i+6] = ss & 255; o[8*i+7] = (ushort)ss >> 8;
}
