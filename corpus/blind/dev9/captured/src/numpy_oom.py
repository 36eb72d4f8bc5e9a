import numpy as np
print("building co-occurrence matrix for vocab 2,000,000", flush=True)
m = np.zeros((2_000_000, 2_000_000), dtype=np.float32)
