// @kernel sw
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void sw(global const int* a, global int* o) {
  int i = get_global_id(0);
  int r;
  switch (a[i] & 7) {
    case 0: r = i; break;
    case 1: r = i * 2; break;
    case 2: case 3: r = -i; break;
    case 5: r = a[i] >> 4; break;
    case 6: r = 77; /* fallthrough */
    case 7: r = (a[i] & 7) * 1000; break;
    default: r = 12345;
  }
  o[i] = r;
}
