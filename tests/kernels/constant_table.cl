// @kernel ctab
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:1024
constant int tab[8] = {3, 1, 4, 1, 5, 9, 2, 6};
constant float ftab[4] = {0.5f, 1.5f, 2.5f, -1.0f};
kernel void ctab(global const int* a, global float* o) {
  int i = get_global_id(0);
  int k = a[i] & 7;
  o[i] = (float)tab[k] * ftab[k & 3] + (float)tab[(k + 3) & 7];
}
