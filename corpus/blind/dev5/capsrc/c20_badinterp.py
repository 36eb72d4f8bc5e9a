#!/usr/bin/env python3.9
print("hi")
