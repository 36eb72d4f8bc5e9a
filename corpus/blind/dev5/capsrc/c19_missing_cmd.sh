#!/bin/bash
echo "job started on $(hostname) at 2026-11-14T08:12:01"
echo "activating env"
source_env_ok=1
deepspeedd --num_gpus 4 train.py --config cfg.yaml
