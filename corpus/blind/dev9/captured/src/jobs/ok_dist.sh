#!/bin/bash
echo "[ok_dist] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
torchrun --nproc_per_node 2 --master_port 29511 dist.py --mode ok --steps 40
