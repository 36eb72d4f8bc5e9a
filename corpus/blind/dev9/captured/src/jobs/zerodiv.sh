#!/bin/bash
echo "[zerodiv] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 train.py --mode zerodiv --steps 30 --seed 11
