// @kernel acopy
// @global 512
// @local 128
// @group 2
// @arg buf:2048:fill=iota
// @arg buf:4096
kernel void acopy(global const int* in, global int* out) {
  local int t[128];
  local int u[64];
  int l = get_local_id(0), g = get_group_id(0);
  event_t e = async_work_group_copy(t, in + g * 128, 128, 0);
  e = async_work_group_strided_copy(u, in + g * 128, 64, 2, e);
  wait_group_events(1, &e);
  t[l] = t[l] * 3 + u[l / 2];
  barrier(CLK_LOCAL_MEM_FENCE);
  event_t f = async_work_group_copy(out + g * 256, t, 128, 0);
  event_t h = async_work_group_strided_copy(out + g * 256 + 128, u, 32, 4, 0);
  wait_group_events(1, &f);
  wait_group_events(1, &h);
}
