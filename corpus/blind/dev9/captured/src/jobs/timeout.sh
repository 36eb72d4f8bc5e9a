#!/bin/bash
echo "[timeout] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
timeout 6 python3 train.py --mode sleep --steps 400 --seed 18 --log_every 2
rc=$?
echo "train.py exited with status $rc"
exit $rc
