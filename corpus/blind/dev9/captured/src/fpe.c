#include <stdio.h>
#include <stdlib.h>
int main(int argc,char**argv){ int n = argc > 1 ? atoi(argv[1]) : 0; int total = 50000; printf("packing %d samples into %d buckets\n", total, n); fflush(stdout); int per = total / n; printf("%d per bucket\n", per); return 0; }
