// @kernel bits64
// @global 128
// @local 32
// @group 1
// @arg buf:1024:fill=random
// @arg buf:4096
kernel void bits64(global const ulong* a, global ulong* o) {
  int i = get_global_id(0);
  ulong x = a[i];
  o[4*i+0] = popcount(x);
  o[4*i+1] = clz(x) + ((ulong)clz(x ^ (x - 1)) << 8);
  o[4*i+2] = rotate(x, (ulong)(i & 63));
  o[4*i+3] = mul_hi(x, x ^ 0x9e3779b97f4a7c15UL);
}
