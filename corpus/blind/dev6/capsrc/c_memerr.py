import numpy as np
print("building feature cache: 120000000 x 64 float64", flush=True)
a = np.zeros((120000000, 64))
a[:] = 1.0
