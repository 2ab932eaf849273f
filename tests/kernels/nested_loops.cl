// @kernel nested
// @global 128
// @local 32
// @group 3
// @arg buf:512:fill=random
// @arg buf:512
kernel void nested(global const int* a, global int* o) {
  int i = get_global_id(0);
  int n = (a[i] & 7) + 1, m = ((a[i] >> 3) & 7) + 1;
  int s = 0;
  for (int x = 0; x < n; x++)
    for (int y = 0; y < m; y++) {
      if (x == y) continue;
      s += x * y + (x ^ y);
      if (s > 100) break;
    }
  o[i] = s;
}
