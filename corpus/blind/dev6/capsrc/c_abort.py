import faulthandler, os, torch
faulthandler.enable()
print("init extension: nvfuser fallback", flush=True)
os.abort()
