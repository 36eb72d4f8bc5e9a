#!/bin/bash
echo "[sigint] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
set -m
python3 train.py --mode sleep --steps 400 --seed 20 --log_every 2 &
pid=$!
sleep 5
kill -INT $pid
wait $pid
