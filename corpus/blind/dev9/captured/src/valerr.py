import numpy as np
print("eval: computing macro-F1 over 3 classes", flush=True)
y = np.array([0, 1, 2, 1]); p = np.array([[0.2, 0.8], [0.1, 0.9], [0.5, 0.5]])
np.concatenate([y.reshape(-1, 1), p], axis=1)
