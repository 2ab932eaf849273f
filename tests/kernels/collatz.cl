// @kernel collatz
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void collatz(global const uint* a, global uint* o) {
  uint i = get_global_id(0);
  ulong n = (a[i] & 0xffff) + 1;
  uint steps = 0;
  while (n != 1 && steps < 1000) {
    n = (n & 1) ? 3 * n + 1 : n / 2;
    steps++;
  }
  o[i] = steps;
}
