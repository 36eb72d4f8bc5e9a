#!/bin/bash
echo "[ok_s2_amp] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 train.py --mode ok --steps 50 --seed 2 --amp
