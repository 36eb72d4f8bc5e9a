#!/bin/bash
echo "[ok_s3_amp] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 train.py --mode ok --steps 100 --seed 3 --amp --bs 64 --log_every 20
