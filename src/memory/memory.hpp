#pragma once
// Memory estimator: per-GPU bytes by component for one workload on one GPU and layout.
// Pure. Terms and sources: docs/memory-model.md.

#include <optional>
#include <string>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/layout.hpp"
#include "inputs/memory_assumptions.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// Bytes held by one GPU at peak, by component. The components weights … kv_cache sum to
// allocated_bytes; total_bytes = allocated_bytes + overhead_bytes.
struct MemoryBreakdown {
    double weights_bytes = 0;  // incl. the 16-bit autocast copy when fp32 weights run in fp16/bf16
    double gradients_bytes = 0;
    double optimizer_bytes = 0;    // incl. fp32 master copy under mixed precision and step temporaries
    double activations_bytes = 0;  // incl. logits/loss and inference workspace
    double kv_cache_bytes = 0;
    double overhead_bytes = 0;   // CUDA context, allocator reserve, NCCL buffers (not allocated tensors)
    double allocated_bytes = 0;  // what torch.cuda.max_memory_allocated() would show
    double total_bytes = 0;      // what nvidia-smi would show: allocated + overhead
    double total_low_bytes = 0;  // uncertainty band of total_bytes
    double total_high_bytes = 0;
    double allocated_low_bytes = 0;  // uncertainty band of allocated_bytes
    double allocated_high_bytes = 0;
};

// What is being estimated. For training, micro_batch and seq_len come from the workload
// unless set here (> 0); for inference, batch and context_tokens likewise. precision and
// checkpointing are the compute precision and recompute level to estimate at (a planner's
// candidate): the same figures as a copy of the workload with those fields set.
struct MemoryQuery {
    Layout layout;
    int micro_batch = 0;                         // training: samples per GPU per pass; 0 = from workload
    int batch = 0;                               // inference: concurrent sequences per replica; 0 = from workload or 1
    int context_tokens = 0;                      // inference: tokens per sequence (prompt + output); 0 = from workload
    double headroom_fraction = -1;               // < 0: from the workload's constraints
    std::optional<Precision> precision;          // none = the workload's precision
    std::optional<Checkpointing> checkpointing;  // training: none = the workload's training.checkpointing
};

// How a paged serving engine (vLLM, SGLang, TensorRT-LLM) divides one GPU at start-up
// (docs/memory-model.md, "Serving engines"; docs/reference/serving_memory_cases.md §2–3):
// the engine may use `budget_bytes`; weights, the profiled activation peak and non-torch memory
// come first and the rest is the KV-cache pool, in blocks of `block_size` tokens. Bytes per GPU;
// tokens and concurrency per replica (every GPU of a replica holds the same tokens).
struct ServingMemory {
    Engine engine = Engine::vllm;
    double device_total_bytes = 0;     // what the driver reports as total (cudaMemGetInfo)
    double memory_fraction = 0;        // gpu_memory_utilization or the engine's equivalent, resolved
    double budget_bytes = 0;           // what weights + activation + non-torch + KV may use
    double weights_bytes = 0;          // as loaded (quantized formats with their scales)
    double activation_peak_bytes = 0;  // profiling step: max_num_batched_tokens + the sampler
    double non_torch_bytes = 0;        // CUDA context growth, cuBLAS workspace, NCCL/custom all-reduce
    double kv_cache_bytes = 0;         // the pool (0 when nothing is left)
    double kv_bytes_per_token = 0;     // this GPU's share of one token's K and V
    long long kv_cache_blocks = 0;
    long long kv_cache_tokens = 0;
    int block_size = 16;
    int max_model_len = 0;
    int max_num_seqs = 0;
    int max_num_batched_tokens = 0;
    double max_concurrency = 0;  // kv_cache_tokens / max_model_len, as the engine prints it
    bool fits = false;           // the engine starts: one max_model_len request fits the pool
    std::string refusal;         // the engine's reason when it would not start
    // Terms taken from calibration.serving_memory in place of the estimate, one sentence each
    // ("activation peak 2.03 GB measured (vllm.log: 1.89 GiB), estimate was 2.02 GB").
    std::vector<std::string> measured;
};

// True when the workload is LLM serving on a paged engine (runtime.engine vllm, sglang or
// tensorrt-llm and a decoder transformer); then serving_memory() applies.
bool uses_serving_engine(const Workload& workload);

// The engine's start-up arithmetic for one replica's GPU; nullopt when !uses_serving_engine.
// `precision`: the compute precision of the activation peak; none = the workload's.
std::optional<ServingMemory> serving_memory(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                                            std::optional<Precision> precision = std::nullopt);

// Requests of `context_tokens` each (prompt + output) that the pool holds at once, whole blocks
// per request, capped by max_num_seqs; 0 when the engine would not start.
int serving_concurrency(const ServingMemory& serving, int context_tokens);

struct MemoryEstimate {
    MemoryBreakdown per_gpu;
    double capacity_bytes = 0;
    bool fits = false;                     // total_bytes <= capacity × (1 − headroom)
    double headroom_bytes = 0;             // capacity − total (negative when it does not fit)
    double headroom_fraction = 0;          // the required free fraction `fits` was judged with
    int max_micro_batch = 0;               // training: largest micro-batch that fits (0 = none)
    int max_batch = 0;                     // inference: largest batch at the workload's context
    int max_context_tokens = 0;            // inference: largest context at the chosen batch (transformers; 0 otherwise)
    int micro_batch = 0;                   // training: the micro-batch estimated
    int batch = 0;                         // inference: the batch estimated
    int context_tokens = 0;                // inference: tokens per sequence estimated
    std::vector<std::string> notes;        // assumptions and caveats, one sentence each
    std::optional<ServingMemory> serving;  // paged serving engines: the start-up arithmetic
};

// The bytes `fits` is judged against: capacity × (1 − headroom), or a paged engine's budget
// (at `precision`, as serving_memory; none = the workload's).
double memory_usable_bytes(const Workload& workload, const GpuSpec& gpu, const Layout& layout, double headroom_fraction,
                           std::optional<Precision> precision = std::nullopt);

MemoryEstimate estimate_memory(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query);

// Only the breakdown (no max-batch search); the planner's hot path.
MemoryBreakdown memory_breakdown(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query);

// ---------------------------------------------------------------------------------------
// The terms, exposed for tests and for other estimators. All pure; bytes per GPU unless said.

// How a model's parameters split, for sharding. Counts, not bytes.
struct ParameterSplit {
    double total = 0;          // Ψ
    double embedding = 0;      // token embedding (+ output projection when untied): V·h·(1 or 2)
    double layers = 0;         // everything else (transformer blocks; the whole model otherwise)
    double experts = 0;        // MoE expert FFN parameters, part of `layers`
    double largest_layer = 0;  // parameters of the largest single block (ZeRO-3 gather buffer)
};
ParameterSplit split_parameters(const ModelSpec& model);

// Trainable LoRA parameters over the whole model: Σ_layers Σ_targets r·(d_in + d_out)
// (Hu et al. 2021). Unknown target names count as hidden→hidden and are listed in `unknown`.
double lora_trainable_params(const ModelSpec& model, const LoraSpec& lora, std::vector<std::string>* unknown = nullptr);

// KV cache: kv_cache_bytes_per_sequence (models.hpp: K and V per KV head and layer, MLA's latent,
// sliding windows) × sequences.
double kv_cache_bytes(const ModelSpec& model, double element_bytes, double tokens_per_sequence, double sequences);

// Activation bytes one transformer layer keeps for backward (Korthikanti et al. 2022, §4.1,
// generalised to GQA, gated FFNs, dropout-free models and element size; docs/memory-model.md).
struct ActivationShape {
    double seq_len = 0;
    double micro_batch = 0;
    double element_bytes = 2;  // 2 for fp16/bf16 activations, 4 for fp32
    bool dropout = false;      // dropout masks (1 byte per element) and dropout outputs
    bool flash_attention = true;
    bool selective_recompute = false;
    // fp32 weights under fp16/bf16 autocast: LayerNorm and softmax run in fp32 (PyTorch autocast
    // op lists), so the residual stream and the attention probabilities are stored in fp32.
    bool autocast = false;
    // The FFN activation function (GeLU/SiLU) recomputed in backward instead of storing its output
    // (llm.c recompute 1, Megatron-Core --recompute-modules moe_act): one f-wide tensor fewer.
    bool recompute_ffn_activation = false;
    int tensor_parallel = 1;
};
double transformer_layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape);

// Device memory outside allocated tensors: the CUDA context (with library kernels), the
// workload's measured figure or the framework's. Sources in docs/memory-model.md.
double cuda_context_bytes(const RuntimeSpec& runtime);

// The fraction of allocated bytes the PyTorch caching allocator holds on top (reserved −
// allocated), nominal, low and high, is data/memory.yaml: builtin_memory_assumptions()
// (inputs/memory_assumptions.hpp) .allocator_reserve_fraction, _low, _high.

}  // namespace gpusel
