// @kernel conv_double
// @global 128
// @local 32
// @group 3
// @arg buf:1024:fill=random
// @arg buf:3072
kernel void conv_double(global const double* a, global double* o) {
  int i = get_global_id(0);
  long bits = as_long(a[i]) & 0x3fffffffffffffffL;
  double d = as_double(bits) ;
  float f = (float)d;
  o[3*i+0] = (double)f;
  o[3*i+1] = d * 3.0 + 1.0;
  o[3*i+2] = (double)convert_int_sat(d);
}
