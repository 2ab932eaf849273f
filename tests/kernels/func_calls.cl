// @kernel fc
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=random
// @arg buf:2048
__attribute__((noinline)) int f1(int x, int y) { return x * 3 + y; }
__attribute__((noinline)) int f2(int x) { if (x < 0) return -x; int s = 0; for (int i = 0; i < (x & 15); i++) s += f1(i, x); return s; }
__attribute__((noinline)) void f3(global int* p, int v) { *p = v ^ 0x55; }
kernel void fc(global const int* a, global int* o) {
  int i = get_global_id(0);
  int v = f2(a[i] >> 8);
  f3(&o[2 * i], v);
  o[2 * i + 1] = f1(v, i);
}
