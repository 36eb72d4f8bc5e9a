import numpy as np
print("computing calibration metrics", flush=True)
probs = np.random.rand(100)
ece = np.float(probs.mean())
