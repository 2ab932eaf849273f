// @kernel struct_buf
// @global 128
// @local 32
// @group 3
// @arg buf:4096:fill=random
// @arg buf:4096
typedef struct { int id; float v; short s; char c; double d; } item_t;
kernel void struct_buf(global const item_t* in, global item_t* out) {
  int i = get_global_id(0);
  item_t t = in[i];
  t.id = t.id ^ i;
  t.v = (float)(t.s) * 0.5f;
  t.c = (char)(t.c + 1);
  t.d = (double)t.id;
  out[i] = t;
}
