#!/bin/bash
echo "[ok_wandb_fallback] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 -c 'import wandb' || echo 'wandb not available, logging to stdout only'
python3 train.py --mode ok --steps 30 --seed 9
