#include <vector>
#include <cstdio>
int main(){ std::vector<int> shard_offsets = {0, 4096, 8192, 12288};
  for (size_t i = 0; i <= 5; ++i){ std::printf("indexing shard %zu\n", i); std::fflush(stdout); int v = shard_offsets.at(i); (void)v; } return 0; }
