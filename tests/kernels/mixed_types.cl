// @kernel mixed
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:2048
kernel void mixed(global const uint* a, global ulong* o) {
  size_t i = get_global_id(0);
  uint x = a[i];
  ulong w = (ulong)x * (ulong)(x + 1u);
  long s = (long)(int)x * -3L;
  o[i] = w + (ulong)s + i * get_global_size(0) + (ushort)x + (uchar)(x >> 8);
}
