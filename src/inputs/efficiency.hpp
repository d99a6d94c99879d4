#pragma once
// Achieved fractions of peak by GPU family, memory class and software stack, loaded from
// data/efficiency.yaml (every value with its source). Data only: the performance model
// (perf/perf.hpp) applies them.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/workload.hpp"

namespace gpusel {

// The software that runs the model. It sets the kernels' achieved fractions of peak and,
// for llama.cpp, the tensor-core accumulate mode and the dequantization pass.
//  - optimized: TensorRT-LLM, vLLM, SGLang, lmdeploy (fused kernels, CUDA graphs, paged KV);
//    for training: Megatron, NeMo, FSDP, DeepSpeed.
//  - llama_cpp: llama.cpp / GGUF (FP16-accumulate cuBLAS GEMMs on quantized weights that are
//    first dequantized to FP16, builds up to mid-2024).
//  - eager: PyTorch eager / Hugging Face without a serving engine.
enum class ServingStack { automatic, optimized, llama_cpp, eager };
std::string_view to_string(ServingStack stack);  // "auto", "optimized", "llama.cpp", "eager"
std::optional<ServingStack> parse_serving_stack(std::string_view name);

// Engines (and eras) efficiency rules can match with `engine:`, besides the stack class above:
// the workload's runtime.engine names (tensorrt-llm, vllm, sglang, llama.cpp, hf-generate) and
// the stacks only the performance model distinguishes (lmdeploy, torch-compile, tensorrt,
// synapseai, vllm-rocm, tensorrt-llm-0.5 ...). docs/perf-model.md, "Software stacks".
const std::vector<std::string_view>& known_engine_names();
// The stack class an engine name runs as: llama.cpp, eager (hf-generate) or optimized.
ServingStack stack_of_engine(std::string_view engine);
bool is_known_engine(std::string_view engine);

// DRAM technology class, from GpuSpec::memory_type ("HBM3" -> hbm, "GDDR6X" -> gddr).
enum class MemoryClass { hbm, gddr, lpddr, other };
std::string_view to_string(MemoryClass memory_class);
MemoryClass memory_class(const GpuSpec& gpu);

// Achieved fractions of peak and fixed overheads for one GPU and stack, resolved from
// data/efficiency.yaml. Defaults below are the file's `defaults` section; tests compare them.
struct EfficiencyFactors {
    // Training.
    double training_compute = 0.45;            // fraction of dense 16-bit peak on executed FLOPs, CNNs
    double training_gemm = 0.6;                // plateau fraction of the dense peak, large training GEMMs
    double training_gemm_fp8 = 0.45;           // the same for FP8 GEMMs, of the FP8 dense peak
    double gemm_half_work_s = 7.8e-6;          // GEMM work (seconds at the dense peak) at half the plateau
    double kernel_floor_s = 5e-6;              // fixed time of one GPU kernel (launch and tail)
    double attention_compute = 0.5;            // fraction of the 16-bit dense peak flash attention reaches
    double tp_comm_overlap = 0.8;              // share of tensor-parallel collectives hidden (Megatron/NeMo)
    double cnn_flops_per_byte = 27;            // DRAM traffic of CNN training: FLOPs per byte moved
    double cnn_inference_flops_per_byte = 27;  // the same for CNN inference (fused engines move less)
    // Inference.
    double prefill_compute = 0.6;         // fraction of the 16-bit peak for large GEMMs
    double prefill_compute_8bit = 0.45;   // fraction of the FP8/INT8 peak for large GEMMs
    double decode_bandwidth = 0.84;       // fraction of DRAM bandwidth when streaming weights + KV
    double overhead_per_layer_s = 67e-6;  // per layer per forward pass (kernel launches, sync)
    double request_floor_s = 0;           // per request and batch, eager non-transformer inference
    double diffusion_compute = 0.5;       // fraction of the 16-bit peak reached by a diffusion UNet/DiT and VAE
    // Communication.
    double interconnect = 0.75;       // fraction of unidirectional NVLink bandwidth
    double host_link = 0.78;          // fraction of nominal PCIe bandwidth (pinned memory)
    double network = 0.8;             // fraction of NIC line rate between nodes
    double nvlink_latency_s = 10e-6;  // per collective
    double pcie_latency_s = 27e-6;
    double network_latency_s = 25e-6;
    // Per-operator inference (docs/perf-model.md, "Inference").
    double elementwise_kernels = 6;    // memory-bound kernels per layer (norms, activation, residual, RoPE)
    double step_floor_s = 1e-3;        // per decode step and per prefill: scheduler, sampling, host
    double request_latency_s = 0;      // per generated request, added to its TTFT: the engine's front end
                                       // and hand-off to the scheduler, no GPU time (0: none measured)
    double kv_read_factor = 1;         // KV bytes decode attention reads per byte stored
    double attention_score_bytes = 0;  // bytes moved per attention score by kernels that materialize
                                       // the scores (0: flash attention keeps them on chip)
    // Collectives inside an NVLink domain (training and tensor-parallel serving).
    double collective_bus = 1.12;         // NCCL all-reduce bus bandwidth / unidirectional NVLink
    double collective_latency_s = 61e-6;  // small-message all-reduce floor (engines with custom all-reduce: less)

    std::vector<std::string> applied;  // labels of the file entries that set these values
};

// Everything data/efficiency.yaml holds besides the per-GPU factors.
struct PlatformFactors {
    double infiniband_bytes_per_s_per_gpu = 50e9;  // NDR 400 Gb/s, one port per GPU
    double ethernet_bytes_per_s_per_gpu = 12.5e9;  // 100 GbE per GPU
    // Sequential read bandwidth of each storage kind, bytes/s.
    std::map<Storage, double> storage_bytes_per_s;
    double pageable_copy_fraction = 0.5;  // pageable host memory vs pinned
    // The input pipeline assumed for image training without a data: section (docs/perf-model.md,
    // "Input pipeline"): ImageNet-class JPEG decode and augmentation on one host CPU thread, and
    // the host threads per GPU where a GPU's offers publish none. Optional in an efficiency file
    // (data/efficiency.yaml has both); 0 = no pipeline is assumed.
    double image_decode_samples_per_s_per_vcpu = 0;
    std::string image_decode_source;
    double host_vcpus_per_gpu = 0;
    std::string host_vcpus_source;
};

// The spread of measured / predicted speed over the validation set, out of sample (the
// leave-one-publication-out cross-validation of tests/validation/test_perf_cross_validation.cpp):
// a prediction v stands for a speed between low·v and high·v (10th and 90th percentiles).
struct SpeedBandFactors {
    double low = 1;     // 10th percentile of measured / predicted speed
    double median = 1;  // 50th
    double high = 1;    // 90th
    std::string source;
};
// The validation groups a speed figure belongs to.
inline constexpr std::string_view speed_band_groups[] = {"training", "prefill", "decode", "non-llm"};

struct EfficiencyRule {
    std::string label;   // e.g. "hopper", "llama.cpp on hbm"
    std::string family;  // GpuSpec::architecture, lower case; empty = any
    std::optional<MemoryClass> memory;
    std::optional<ServingStack> stack;
    std::string engine;                    // a known_engine_names() entry; empty = any
    std::map<std::string, double> values;  // factor name -> value
    std::map<std::string, std::string> sources;
    // Factor name -> ids of the validation cases the value was fitted on (tests/validation/perf/,
    // or InferenceX rows IX… of tests/validation/serving_load/); absent for published ranges. The
    // cross-validations refit exactly these.
    std::map<std::string, std::vector<std::string>> fitted_on;
    int specificity() const;
};

struct EfficiencyTable {
    EfficiencyFactors defaults;
    std::map<std::string, std::vector<std::string>> defaults_fitted_on;  // as EfficiencyRule::fitted_on
    std::vector<EfficiencyRule> rules;                                   // in file order
    PlatformFactors platform;
    std::map<std::string, SpeedBandFactors, std::less<>> speed_bands;  // by speed_band_groups
    // A measured speed's multiplier on the stack (perf/calibration.hpp), 1 = none: achieved
    // fractions of peak × scale (capped at 0.98), fixed per-layer and per-request times ÷ scale;
    // link figures unchanged. Applied last by resolve(), so every estimator sees it.
    double speed_scale = 1;

    // The defaults with every matching rule applied, least specific first, then file order, then
    // speed_scale. `engine` (known_engine_names(), "" = none) also selects the rules that match it.
    EfficiencyFactors resolve(const GpuSpec& gpu, ServingStack stack, std::string_view engine = {}) const;
    EfficiencyFactors for_gpu(const GpuSpec& gpu) const { return resolve(gpu, ServingStack::optimized); }
};

// Reads or writes one factor by its file name; false / nullopt for an unknown name.
bool set_efficiency_factor(EfficiencyFactors& factors, std::string_view name, double value);
std::optional<double> efficiency_factor(const EfficiencyFactors& factors, std::string_view name);
// The most of a peak an achieved fraction may reach once scaled (calibration, refits): a
// measurement faster than that is absorbed by the fixed times instead.
constexpr double max_achieved_fraction = 0.98;
// Whether the factor is a fraction of a peak or line rate (at most 1); false for an unknown name.
bool efficiency_factor_is_fraction(std::string_view name);

// Parses efficiency YAML (format in data/efficiency.yaml's header). Strict: unknown keys,
// unknown factor names, values out of range and missing sources are InputErrors.
EfficiencyTable parse_efficiency_text(std::string_view text, const std::string& file_name);
// The table compiled into the binary from data/efficiency.yaml.
EfficiencyTable builtin_efficiency();

}  // namespace gpusel
