// @kernel struct_arg
// @global 256
// @local 64
// @group 2
// @arg bytes:0000404000000000070000000300000000002041
// @arg buf:1024:fill=randf
// @arg buf:1024
typedef struct { float scale; int pad; int add; int mul; float bias; } params_t;
kernel void struct_arg(params_t p, global const float* a, global float* o) {
  int i = get_global_id(0);
  o[i] = a[i] * p.scale + (float)(p.add * p.mul) + p.bias;
}
