#!/bin/bash
set -e
echo "starting"
python3 train.py --config configs/base.yaml
