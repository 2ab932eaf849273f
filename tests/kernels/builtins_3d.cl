// @kernel b3
// @global 8,4,4
// @local 4,2,2
// @group 1,1,1
// @offset 1,2,3
// @arg buf:16384
kernel void b3(global uint* o) {
  size_t x = get_global_id(0) - get_global_offset(0), y = get_global_id(1) - get_global_offset(1), z = get_global_id(2) - get_global_offset(2);
  size_t lin = (z * get_global_size(1) + y) * get_global_size(0) + x;
  global uint* r = o + 16 * lin;
  for (int d = 0; d < 3; d++) {
    r[d] = get_local_id(d); r[3 + d] = get_group_id(d); r[6 + d] = get_num_groups(d);
    r[9 + d] = get_global_size(d) * 10 + get_local_size(d);
  }
  r[12] = get_work_dim(); r[13] = get_global_id(0); r[14] = get_global_offset(2); r[15] = 0xabcd;
}
