#!/bin/bash
source ~/.bashrc
python3 train.py "$@"
