import faulthandler, ctypes, sys
faulthandler.enable()
print("loading custom extension ...", flush=True)
def decode_batch(addr):
    return ctypes.string_at(addr, 64)
for i in range(3):
    print(f"batch {i} ok", flush=True)
decode_batch(8)
