#pragma once
// The readers of `gpusel calibrate` (calibrate.hpp) for training logs, PyTorch memory reports and
// vLLM start-up logs: for each format, whether a text is in it (from its content) and the
// calibration points it yields, each with a provenance line naming the figure read. Pure.
// Every reader throws InputError "path:line:col: field: message" for a malformed figure, and
// "path: --gpu: ..." / "path: --batch: ..." when it needs a fact the file does not state and the
// context (calibrate --gpu/--count/--batch) does not give. Formats and fixtures:
// tests/data/calibration/logs/SOURCES.md.

#include <string>
#include <string_view>

#include "calibrate/calibrate.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// Hugging Face Trainer: trainer_state.json (log_history; its final entry holds
// train_samples_per_second) or the Trainer's printed log lines ({'train_runtime': …,
// 'train_samples_per_second': …}). One samples_per_s point of count = context.count or 1 GPUs,
// batch = context.batch or the state's train_batch_size.
bool is_hf_trainer_state(std::string_view text);
MeasuredSource read_hf_trainer_state(std::string_view text, const std::string& path, const MeasurementContext& context);

// Megatron-LM training log (training.py training_log: "iteration N/ M | consumed samples: … |
// elapsed time per iteration (ms): … | global batch size: … |"). One samples_per_s point: the
// median over the logged intervals after the first (warm-up) of global batch / elapsed seconds,
// on the log's world size (its argument dump) or context.count.
bool is_megatron_log(std::string_view text);
MeasuredSource read_megatron_log(std::string_view text, const std::string& path, const MeasurementContext& context);

// torchtune metric lines ("Step 10 | loss:… lr:… tokens_per_second_per_gpu:… ") → one
// training_tokens_per_s point (median after the first step × count GPUs), and a memory point from
// peak_memory_alloc when context.batch is given; PyTorch Lightning progress bars ("Epoch 3: 100%|…|
// 1563/1563 [00:45<00:00, 34.51it/s, …]") → one samples_per_s point (it/s × context.batch ×
// count). A Lightning log without a speed figure is an error saying so.
bool is_lightning_log(std::string_view text);
MeasuredSource read_lightning_log(std::string_view text, const std::string& path, const MeasurementContext& context);

// torch.cuda.memory_summary() text: the "Allocated memory" row's Peak Usage → one memory point
// at micro_batch context.batch (required).
bool is_torch_memory_summary(std::string_view text);
MeasuredSource read_torch_memory_summary(std::string_view text, const std::string& path,
                                         const MeasurementContext& context);

// Printed torch.cuda.max_memory_allocated() / max_memory_reserved() figures ("max_memory_allocated:
// 35.2 GiB", a byte count): the largest allocated figure (reserved only when no allocated one is
// printed, said in the notes) → one memory point at micro_batch context.batch (required).
bool is_torch_max_memory(std::string_view text);
MeasuredSource read_torch_max_memory(std::string_view text, const std::string& path, const MeasurementContext& context);

// vLLM engine start-up log (V0 and V1 wordings: "Model loading took … GiB", "model weights take
// …; non_torch_memory takes …; PyTorch activation peak memory takes …", "torch peak memory
// increase: …", "GPU KV cache size: N tokens", "# GPU blocks: N"). Its figures are per GPU of a
// serving replica and fit no training point: read_vllm_startup_log gives them as provenance (no
// speed or memory point) and vllm_startup_serving_memory as the calibration.serving_memory point.
bool is_vllm_startup_log(std::string_view text);
MeasuredSource read_vllm_startup_log(std::string_view text, const std::string& path, const MeasurementContext& context);
ServingMemoryCalibrationPoint vllm_startup_serving_memory(std::string_view text, const std::string& path,
                                                          const MeasurementContext& context);

}  // namespace gpusel
