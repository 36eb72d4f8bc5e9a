#!/bin/bash
echo "[sigterm] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
( sleep 5; kill -TERM $(pgrep -P $$ -f 'train.py --mode sleep') ) &
python3 train.py --mode sleep --steps 400 --seed 19 --log_every 2
