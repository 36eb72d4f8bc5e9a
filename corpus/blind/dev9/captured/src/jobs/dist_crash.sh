#!/bin/bash
echo "[dist_crash] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
torchrun --nproc_per_node 2 --master_port 29513 dist.py --mode crash --steps 40
