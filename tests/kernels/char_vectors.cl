// @kernel cv
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:2048
kernel void cv(global const uchar4* a, global const char4* b, global uchar8* o) {
  int i = get_global_id(0);
  uchar4 x = a[i];
  char4 y = b[i];
  uchar4 s = add_sat(x, as_uchar4(y));
  uchar4 h = rhadd(x, (uchar4)(7, 100, 200, 255));
  char4 m = max(y, (char4)(-3)) - min(y, (char4)(5));
  o[i] = (uchar8)(s, h ^ as_uchar4(m));
}
