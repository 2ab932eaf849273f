// @kernel gray
// @global 256
// @local 64
// @group 3
// @arg buf:1024:fill=random
// @arg buf:256
kernel void gray(global const uchar4* px, global uchar* o) {
  int i = get_global_id(0);
  uchar4 p = px[i];
  float g = 0.299f * p.x + 0.587f * p.y + 0.114f * p.z;
  o[i] = convert_uchar_sat_rte(g);
}
