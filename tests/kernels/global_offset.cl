// @kernel goff
// @global 256
// @local 64
// @offset 128
// @group 2
// @arg buf:2048
kernel void goff(global int* o) {
  size_t i = get_global_id(0);
  o[i] = (int)(i * 10 + get_local_id(0) + get_group_id(0) * 1000 + get_global_offset(0) * 100000);
}
