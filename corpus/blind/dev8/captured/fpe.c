#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 0;
  long total = 0;
  for (int i = 0; i < 5; i++) { printf("partition %d: %ld cells\n", i, 1000L * (i + 1)); total += 1000L * (i + 1); }
  fflush(stdout);
  printf("cells per rank: %ld\n", total / n);
  return 0;
}
