#!/bin/bash
echo "[fnf_data] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
python3 train.py --mode fnf --data data/train_v2.jsonl
