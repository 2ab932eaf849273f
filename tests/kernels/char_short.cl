// @kernel char_short
// @global 256
// @local 64
// @group 1
// @arg buf:256:fill=random
// @arg buf:512:fill=random
// @arg buf:2048
kernel void char_short(global const char* a, global const short* b, global short* o) {
  int i = get_global_id(0);
  char c = a[i]; short s = b[i];
  uchar uc = (uchar)c;
  o[4*i+0] = (short)(c * 3 + s);
  o[4*i+1] = (short)(uc >> 2) - s / 3;
  o[4*i+2] = (char)(c + 100);
  o[4*i+3] = (ushort)s % 1000;
}
