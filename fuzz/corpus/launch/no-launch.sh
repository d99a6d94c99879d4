#!/usr/bin/env bash
# Not a launch: no serving engine, torchrun or Kubernetes object here.
python3 train.py --epochs 3
