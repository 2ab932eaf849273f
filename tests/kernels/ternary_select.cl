// @kernel tsel
// @global 256
// @local 64
// @group 3
// @arg buf:4096:fill=random
// @arg buf:4096
kernel void tsel(global const int4* a, global int4* o) {
  int i = get_global_id(0);
  int4 x = a[i];
  int4 m = x > (int4)(0);
  o[i] = m ? x : -x;
}
