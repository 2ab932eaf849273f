// @kernel agl
// @global 512
// @local 64
// @group 3
// @arg buf:2048:fill=random
// @arg buf:512
kernel void agl(global const int* a, global int* cnt) {
  int g = get_group_id(0);
  int x = a[get_global_id(0)];
  atomic_add(&cnt[g * 8 + 0], x & 255);
  atomic_max(&cnt[g * 8 + 1], x);
  atomic_min(&cnt[g * 8 + 2], x);
  atomic_or(&cnt[g * 8 + 3], 1 << (x & 31));
  atomic_and(&cnt[g * 8 + 4], ~(1 << (x & 31)));
  atomic_xor(&cnt[g * 8 + 5], x);
  atomic_sub(&cnt[g * 8 + 6], 3);
  atomic_cmpxchg(&cnt[g * 8 + 7], 0, 42);
}
