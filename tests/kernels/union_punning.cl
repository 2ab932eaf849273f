// @kernel upun
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=randf
// @arg buf:2048
typedef union { float f; uint u; uchar b[4]; } pun_t;
kernel void upun(global const float* a, global uint* o) {
  int i = get_global_id(0);
  pun_t p;
  p.f = a[i];
  uint e = (p.u >> 23) & 0xff;
  p.b[0] ^= (uchar)i;
  o[2*i] = e;
  o[2*i+1] = p.u;
}
