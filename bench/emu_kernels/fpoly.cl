kernel void fpoly(global float* o, int n) {
  int i = get_global_id(0);
  float x = (float)i * 0.001f, acc = 0.0f;
  for (int k = 0; k < n; k++) { acc = acc * x + 0.5f; x = x * 0.999f + 0.001f; }
  o[i] = acc;
}
