// @kernel shm
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=random
// @arg buf:4096
kernel void shm(global const int* a, global const int* b, global int* o) {
  int i = get_global_id(0);
  short s = (short)a[i];
  char c = (char)b[i];
  o[4*i+0] = s >> (c & 7);
  o[4*i+1] = (ushort)s >> (c & 7);
  o[4*i+2] = (char)(c << 3) >> 2;
  o[4*i+3] = (a[i] >> 31) | ((uint)b[i] >> 31);
}
