import ctypes, faulthandler, sys
if "--fh" in sys.argv: faulthandler.enable()
print("loading custom CUDA-free tokenizer extension (ctypes) ...", flush=True)
print("tokenizing batch 0", flush=True)
ctypes.string_at(0)
