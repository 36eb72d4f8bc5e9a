#!/bin/bash
echo "[gloo_hang] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
PG_TIMEOUT=15 torchrun --nproc_per_node 2 --master_port 29512 dist.py --mode hang --steps 40
