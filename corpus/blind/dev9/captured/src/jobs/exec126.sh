#!/bin/bash
echo "[exec126] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
chmod -x /tmp/b9-cap/run_eval.sh 2>/dev/null; printf 'python3 evaldump.py\n' > /tmp/b9-cap/run_eval.sh; chmod -x run_eval.sh; ./run_eval.sh
