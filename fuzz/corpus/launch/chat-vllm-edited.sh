#!/usr/bin/env bash
# The same launch after edits that break the estimate: two GPUs per replica, a larger memory
# fraction than the plan's headroom allows, a longer context and an fp8 KV cache.
exec vllm serve /models/Llama-2-13B-chat-AWQ \
  --tensor-parallel-size 2 \
  --gpu-memory-utilization 0.95 \
  --max-model-len 4096 \
  --kv-cache-dtype fp8 \
  --quantization awq
