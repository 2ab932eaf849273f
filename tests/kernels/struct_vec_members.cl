// @kernel svm
// @global 128
// @local 32
// @group 2
// @arg buf:12288:fill=random
// @arg buf:12288
typedef struct { char tag; float4 v; short2 s; float3 p; int k; } rec_t;
kernel void svm(global const rec_t* in, global rec_t* out) {
  int i = get_global_id(0);
  rec_t r = in[i];
  r.tag = (char)i;
  r.v = r.v.wzyx;
  r.s = (short2)(r.s.y, (short)i);
  r.p = (float3)((float)r.k, 0.5f, -2.0f);
  r.k = r.k * 2 + 1;
  out[i] = r;
}
