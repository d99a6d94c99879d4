#!/usr/bin/env bash
# A launch edited by hand after `gpusel deploy examples/chat-llama2-13b-int4.yaml --target vllm`:
# the real checkpoint, another port, flags in another order and spelling (--x=y, underscores).
# None of it contradicts the plan.
set -euo pipefail
MODEL=/models/Llama-2-13B-chat-AWQ
exec vllm serve "$MODEL" \
  --port 9000 \
  --tensor-parallel-size=1 \
  --quantization awq_marlin \
  --max_model_len 768 \
  --max-num-seqs 111 \
  --gpu-memory-utilization 0.90 \
  --kv-cache-dtype auto
