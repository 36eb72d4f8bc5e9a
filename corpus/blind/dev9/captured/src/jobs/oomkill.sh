#!/bin/bash
echo "[oomkill] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
echo $$ > /sys/fs/cgroup/memory/b9test/cgroup.procs
python3 numpy_grow.py
