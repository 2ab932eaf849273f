// @kernel scopy
// @global 128
// @local 32
// @group 2
// @arg buf:8192:fill=random
// @arg buf:8192
typedef struct { int a[12]; float f; uint u; short s[2]; } big_t;
kernel void scopy(global const big_t* in, global big_t* out) {
  int i = get_global_id(0);
  big_t t = in[i];
  t.a[i % 12] = i;
  t.u += t.a[3];
  out[i] = t;
}
