#!/bin/bash
echo "[exec127] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
module load cuda/12.1 2>/dev/null
pythn train.py --mode ok
