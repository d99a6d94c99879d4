#pragma once
// The memory estimator's parts, shared by its files and by nothing else: estimate.cpp (the
// breakdown at peak, its range, the largest batch), training.cpp (weights, gradients, optimizer
// states and activations of a training step) and inference.cpp (weights, KV cache and prefill
// workspace of serving). The per-term formulas the estimator shares with perf and search are in
// memory/terms.hpp.

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "memory/memory.hpp"

namespace gpusel::memory_detail {

// Mixed precision stores activations in half precision, halving them (Micikevicius et al. 2018,
// "Mixed Precision Training", ICLR).
inline constexpr double half_precision_activation_factor = 0.5;
// Weights: preset parameter counts are rounded to 3–4 digits and models hold non-parameter buffers
// (causal masks, rotary caches) or framework-specific untied copies: ±2 %. Quantized weights:
// scale layouts vary (NF4 4.127 bits with double quantization, 4.5 without; LLM.int8 outlier
// columns; which layers stay 16-bit): ±10 %.
inline constexpr double float_weight_uncertainty = 0.02;
inline constexpr double quantized_weight_uncertainty = 0.10;

// Notes of an estimate, or none: a null list skips them.
class NoteList {
public:
    explicit NoteList(std::vector<std::string>* list) : m_list(list) {}
    // Whether notes are kept: callers skip building their arguments (string formatting is most of
    // an estimate's cost) when they are not.
    bool active() const { return m_list != nullptr; }
    template <typename... Args>
    void add(fmt::format_string<Args...> format, Args&&... args) {
        if (m_list != nullptr) {
            m_list->push_back(fmt::format(format, std::forward<Args>(args)...));
        }
    }

private:
    std::vector<std::string>* m_list;
};

// "12.34 GB": bytes as the notes print them.
inline std::string gb(double bytes) {
    return fmt::format("{:.2f} GB", bytes / 1e9);
}

// The terms of one step on one GPU, in bytes, with their uncertainty; resolve_peak (estimate.cpp)
// takes the larger of the two moments that can hold the peak.
struct Peak {
    double weights = 0;
    double weights_uncertainty = 0;  // ± bytes (parameter count and non-parameter buffers)
    double states_uncertainty = 0;   // ± fraction of gradients, optimizer states and step temporary
    double cast_copy = 0;            // 16-bit autocast copy of fp32 weights, alive through forward/backward
    double gradients = 0;
    double backward_gradients = 0;  // gradients alive at the start of backward (all when resident)
    double optimizer = 0;
    double step_temporary = 0;  // alive only during the optimizer step
    double activations = 0;
    double kv_cache = 0;
};

// The compute precision and recompute level an estimate runs at: its query's, else the
// workload's, resolved once in estimate.cpp. The terms read them here, never from the workload.
struct Choices {
    Precision precision = Precision::bf16;
    Checkpointing checkpointing = Checkpointing::none;
};

// The least-squares line through the workload's measured peaks (bytes against micro-batch) on
// this GPU, else another; `used` false when there are none.
struct CalibrationFit {
    bool used = false;
    double intercept_bytes = 0;
    double slope_bytes = 0;
    std::size_t points = 0;
    bool other_gpu = false;
};

// The training terms; `activation_per_sample` in bytes, the model's slope before calibration.
struct TrainingResult {
    Peak peak;
    CalibrationFit calibration;
    double activation_per_sample = 0;
};

// Weights, gradients, optimizer states and activations of one training step on one GPU of
// `layout` at `micro_batch` under `choices` (training.cpp), with the calibration fit when the
// workload has measured peaks; notes go to `notes`.
TrainingResult training_terms(const Workload& workload, const Choices& choices, const GpuSpec& gpu,
                              const Layout& layout, int micro_batch, NoteList& notes);

struct InferenceResult {
    Peak peak;
};

// Weights, KV cache and prefill workspace of one GPU of `layout` serving `batch` requests of
// `context_tokens` tokens computed in `precision` (inference.cpp); notes go to `notes`.
InferenceResult inference_terms(const Workload& workload, Precision precision, const Layout& layout, int batch,
                                int context_tokens, NoteList& notes);

}  // namespace gpusel::memory_detail
