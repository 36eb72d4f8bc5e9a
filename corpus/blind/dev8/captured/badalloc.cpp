#include <vector>
#include <cstdio>
int main() {
  std::vector<std::vector<float>> shards;
  for (int i = 0; ; i++) {
    shards.emplace_back(size_t(256) << 20);
    std::printf("loaded shard %d (%d MiB resident)\n", i, (i + 1) * 1024);
    std::fflush(stdout);
  }
}
