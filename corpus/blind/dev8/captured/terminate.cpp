#include <stdexcept>
#include <cstdio>
int main() {
  std::printf("[loader] opening index /data/shards/index.bin\n"); std::fflush(stdout);
  throw std::runtime_error("index header magic mismatch: expected 0x4c44 got 0x0000");
}
