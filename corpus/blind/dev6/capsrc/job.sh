#!/bin/bash
# batch-style wrapper used for captures: prints real environment noise, then runs the command
echo "=== job start: $(date -u '+%Y-%m-%d %H:%M:%S') on $(hostname) ==="
echo "--- environment ---"
env | grep -E '^(PATH|HOME|SHELL|LANG|PYENV_VERSION|SLURM_[A-Z_]+|OMP_NUM_THREADS)=' | sort
echo "--- python / torch ---"
python3 -V
python3 - <<'PY'
import torch, numpy, platform
print("torch", torch.__version__, "numpy", numpy.__version__, "platform", platform.platform())
print("cuda available:", torch.cuda.is_available(), "| threads:", torch.get_num_threads())
print(torch.__config__.show())
PY
echo "--- pip list (head) ---"
python3 -m pip list 2>/dev/null | head -n 45
echo "--- nvidia-smi ---"
nvidia-smi 2>&1 | head -n 3
echo "--- running: $* ---"
set -x
"$@"
rc=$?
set +x
echo "=== job end: exit status $rc ==="
exit $rc
