import mmap, os, sys
import numpy as np
path = "/tmp/b9-cap/data/tokens.bin"
with open(path, "wb") as f: f.truncate(1 << 20)
f = open(path, "r+b"); mm = mmap.mmap(f.fileno(), 0)
arr = np.frombuffer(mm, dtype=np.uint16)
print(f"memmapped {path}: {arr.size} tokens", flush=True)
os.truncate(path, 4096)   # another job rewrote the shard underneath us
print("reading window at offset", arr.size - 10, flush=True)
print(int(arr[-10:].sum()))
