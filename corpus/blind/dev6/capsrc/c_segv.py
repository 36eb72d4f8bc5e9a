import faulthandler, ctypes, torch
faulthandler.enable()
print("loading custom op library ./build/libfused_attn.so", flush=True)
x = torch.randn(4,4)
print("step 0 loss 1.3862", flush=True)
ctypes.string_at(0)
