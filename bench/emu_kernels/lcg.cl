kernel void lcg(global int* o, int n) {
  int i = get_global_id(0);
  int s = i;
  for (int k = 0; k < n; k++) { s = s * 1103515245 + 12345; s ^= s >> 7; }
  o[i] = s;
}
