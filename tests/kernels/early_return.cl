// @kernel er
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024:fill=zero
kernel void er(global const int* a, global int* o) {
  int i = get_global_id(0);
  if (a[i] < 0) return;
  int s = a[i] & 255;
  for (int k = 0; k < 10; k++) {
    if (s % 13 == 0) { o[i] = -k; return; }
    s += 7;
  }
  o[i] = s;
}
