// @kernel bfs
// @global 256
// @local 64
// @group 1
// @arg buf:1024:fill=random
// @arg buf:4096:fill=random
// @arg buf:1024:fill=random
// @arg buf:1024
kernel void bfs(global const uint* deg, global const uint* adj, global const uint* dist, global uint* nd) {
  int v = get_global_id(0);
  uint best = dist[v] & 0xff;
  uint n = deg[v] % 9u;
  for (uint k = 0; k < n; k++) {
    uint u = adj[(v * 4u + k) % 1024u] & 255u;
    uint du = (dist[u] & 0xff) + 1u;
    if (du < best) best = du;
  }
  nd[v] = best;
}
