#include <assert.h>
#include <stdio.h>
int main() { int nbuckets = 0; printf("building histogram\n"); fflush(stdout); assert(nbuckets > 0); return 0; }
