#!/bin/bash
echo "[ok_pack] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
./pack_buckets 16 && python3 train.py --mode ok --steps 30 --seed 6
