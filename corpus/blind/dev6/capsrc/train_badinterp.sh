#!/usr/bin/env pythn3
print(1)
