// @kernel negoff
// @global 256
// @local 64
// @group 2
// @arg buf:2048:fill=iota
// @arg buf:1024
kernel void negoff(global const int* a, global int* o) {
  int i = get_global_id(0);
  global const int* p = a + 256 + i;
  int s = p[-1] + p[-i - 1] + *(p - 128);
  ptrdiff_t d = (p - 3) - a;
  o[i] = s + (int)d;
}
