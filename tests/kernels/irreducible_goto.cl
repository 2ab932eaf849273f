// @kernel irr
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=random
// @arg buf:1024
// Irreducible control flow (a loop with two entries), reconverged at the post-dominator.
kernel void irr(global const int* a, global int* o) {
  int i = get_global_id(0);
  int x = a[i] & 31, n = 0;
  if (x & 1) goto B;
A:
  x += 3; n++;
  if (n > 20) goto E;
B:
  x ^= 5; n++;
  if ((x & 7) != 0 && n < 40) goto A;
E:
  o[i] = x * 100 + n;
}
