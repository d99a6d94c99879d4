// Per-GPU memory at peak, by component, for training, fine-tuning and inference.
// Formulas and sources: docs/memory-model.md (each term below names its source).

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "memory/memory.hpp"
#include "memory/terms.hpp"

namespace gpusel {

namespace {

using memory_detail::activation_element_bytes;
using memory_detail::is_float_format;
using memory_detail::largest_fitting;
using memory_detail::largest_matrix_params;
using memory_detail::LoraShape;
using memory_detail::nccl_bytes_per_communicator;
using memory_detail::shard_parameters;
using memory_detail::ShardParams;
using memory_detail::stored_weight_bytes;
using memory_detail::trains_with_dropout;
using memory_detail::TransformerWidths;
using memory_detail::uses_per_sample_activations;

// Context band over GPUs and software versions: 0.3–1.4 GB (docs/reference/formulas.md, HF docs, fms logs).
constexpr double context_low_bytes = 0.3e9;
constexpr double context_high_bytes = 1.4e9;
// Activations: the spread between implementations of the same layer (fused vs unfused SwiGLU,
// fp32 norm upcasts, dropout on or off) is about a quarter of a 20–35-element layer.
constexpr double activation_low_factor = 0.75;
constexpr double activation_high_factor = 1.25;
// Mixed precision stores activations in half precision, halving them (Micikevicius et al. 2018,
// "Mixed Precision Training", ICLR).
constexpr double half_precision_activation_factor = 0.5;
// Weights: preset parameter counts are rounded to 3–4 digits and models hold non-parameter buffers
// (causal masks, rotary caches) or framework-specific untied copies: ±2 %. Quantized weights:
// scale layouts vary (NF4 4.127 bits with double quantization, 4.5 without; LLM.int8 outlier
// columns; which layers stay 16-bit): ±10 %.
constexpr double float_weight_uncertainty = 0.02;
constexpr double quantized_weight_uncertainty = 0.10;

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

std::string gb(double bytes) {
    return fmt::format("{:.2f} GB", bytes / 1e9);
}

// Parameters of the largest single trainable tensor: what a for-loop optimizer step holds a
// temporary for. 0 when the architecture is unknown.
double largest_trainable_tensor_params(const ModelSpec& model, const LoraSpec& lora, const Layout& layout) {
    if (!model.is_transformer()) {
        return 0;
    }
    const TransformerWidths w = memory_detail::transformer_widths(model);
    const double t = std::max(layout.tensor_parallel, 1);
    if (lora.enabled()) {
        // An adapter matrix is rank × (the wider side of the adapted projection).
        const bool head = std::any_of(lora.targets.begin(), lora.targets.end(), [](const std::string& target) {
            const std::string lower = to_lower(target);
            return lower == "lm_head" || lower == "output" || lower == "head";
        });
        return lora.rank *
               std::max({w.hidden, w.ffn, w.q_width + 2 * w.kv_width, head ? static_cast<double>(model.vocab) : 0.0});
    }
    return std::max(largest_matrix_params(model), static_cast<double>(model.vocab) * model.hidden) / t;
}

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

struct Allocation {
    double weights = 0;
    double gradients = 0;
    double optimizer = 0;
    double activations = 0;
    double kv_cache = 0;
    bool at_step = false;
    double total() const { return weights + gradients + optimizer + activations + kv_cache; }
};

// Two moments can hold the peak. At the start of backward every activation (and the autocast
// copy) is alive with the gradients that exist by then: all of them when they are kept between
// steps, else only the output layer's, produced first. During the optimizer step the activations
// are freed and all gradients exist, with the step's temporaries. Backward frees each layer's
// activations as it produces that layer's gradients, so the moments in between hold less than
// the larger of the two. `sign` (−1, 0, +1) moves every term to the low end, nominal or high end.
Allocation resolve_peak(const Peak& peak, double activation_factor, bool count_step_temporary, double sign) {
    Allocation allocation;
    const double states = 1.0 + sign * peak.states_uncertainty;
    const double activations = peak.activations * activation_factor;
    const double step = (count_step_temporary ? peak.step_temporary : 0.0) * states;
    const double gradients = peak.gradients * states;
    const double backward_gradients = peak.backward_gradients * states;
    const double backward_extra = activations + peak.cast_copy + backward_gradients;
    allocation.kv_cache = peak.kv_cache;
    allocation.optimizer = peak.optimizer * states;
    const double weights = peak.weights + sign * peak.weights_uncertainty;
    if (gradients + step > backward_extra) {
        allocation.weights = weights;
        allocation.gradients = gradients;
        allocation.optimizer += step;
        allocation.at_step = true;
    } else {
        allocation.weights = weights + peak.cast_copy;
        allocation.gradients = backward_gradients;
        allocation.activations = activations;
    }
    return allocation;
}

struct CalibrationFit {
    bool used = false;
    double intercept_bytes = 0;
    double slope_bytes = 0;
    std::size_t points = 0;
    bool other_gpu = false;
};

// Least-squares line through the measured peaks (bytes against micro-batch).
CalibrationFit fit_calibration(const Workload& workload, const GpuSpec& gpu, double model_slope_bytes) {
    CalibrationFit fit;
    std::vector<const MemoryCalibrationPoint*> points;
    for (const MemoryCalibrationPoint& point : workload.calibration.memory) {
        if (equals_ignore_case(point.gpu, gpu.id)) {
            points.push_back(&point);
        }
    }
    if (points.empty()) {
        // max_memory_allocated counts tensors, which do not depend on the GPU model.
        for (const MemoryCalibrationPoint& point : workload.calibration.memory) {
            points.push_back(&point);
        }
        fit.other_gpu = !points.empty();
    }
    if (points.empty()) {
        return fit;
    }
    fit.used = true;
    fit.points = points.size();
    const double n = static_cast<double>(points.size());
    double sum_x = 0;
    double sum_y = 0;
    for (const MemoryCalibrationPoint* point : points) {
        sum_x += point->micro_batch;
        sum_y += point->peak_bytes;
    }
    const double mean_x = sum_x / n;
    const double mean_y = sum_y / n;
    double sxx = 0;
    double sxy = 0;
    for (const MemoryCalibrationPoint* point : points) {
        sxx += (point->micro_batch - mean_x) * (point->micro_batch - mean_x);
        sxy += (point->micro_batch - mean_x) * (point->peak_bytes - mean_y);
    }
    if (sxx > 0) {
        fit.slope_bytes = sxy / sxx;
    } else {
        fit.slope_bytes = model_slope_bytes;  // one batch size measured: the slope comes from the model
    }
    fit.intercept_bytes = mean_y - fit.slope_bytes * mean_x;
    return fit;
}

struct TrainingResult {
    Peak peak;
    CalibrationFit calibration;
    double activation_per_sample = 0;
};

// What every term of a training estimate reads: the workload, the layout and how it shards.
struct TrainingSetup {
    TrainingSetup(const Workload& workload_, const Layout& layout_)
        : workload(workload_),
          model(workload_.model),
          training(workload_.training),
          layout(layout_),
          split(split_parameters(workload_.model)),
          shard(shard_parameters(workload_.model, split, layout_)),
          d(std::max(layout_.data_parallel, 1)),
          sharded_optimizer(layout_.sharding != Sharding::none && d > 1),
          sharded_gradients((layout_.sharding == Sharding::zero2 || layout_.sharding == Sharding::zero3) && d > 1),
          sharded_weights(layout_.sharding == Sharding::zero3 && d > 1),
          offload_optimizer(layout_.offload != Offload::none),
          offload_params(layout_.offload == Offload::optimizer_and_params),
          lora(workload_.training.lora.enabled()),
          compute_bytes(activation_element_bytes(workload_.precision)) {}

    const Workload& workload;
    const ModelSpec& model;
    const TrainingSpec& training;
    const Layout& layout;
    const ParameterSplit split;
    const ShardParams shard;
    const double d;  // data-parallel degree
    const bool sharded_optimizer;
    const bool sharded_gradients;
    const bool sharded_weights;
    const bool offload_optimizer;
    const bool offload_params;
    const bool lora;
    const double compute_bytes;  // bytes of an activation element in the compute precision
};

// The stored (frozen or updated) weights on this GPU before any LoRA adapter.
struct StoredWeights {
    WeightFormat format = WeightFormat::fp32;
    double element_bytes = 0;
    double bytes = 0;
};

// The parameters training updates on this GPU and the bytes of each; with the bytes of a stored
// weight, which decide whether autocast runs.
struct TrainableParams {
    double count = 0;
    double element_bytes = 0;
    double stored_element_bytes = 0;
};

StoredWeights stored_training_weights(const TrainingSetup& setup, NoteList& notes) {
    const ModelSpec& model = setup.model;
    const Layout& layout = setup.layout;
    const double compute_bytes = setup.compute_bytes;
    StoredWeights result;
    WeightFormat stored = setup.workload.weights;
    if (!setup.lora && !is_float_format(stored)) {
        if (notes.active()) {
            notes.add("full training cannot update {} weights; counted as {} (the compute precision)",
                      to_string(stored), compute_bytes == 4 ? "fp32" : "16-bit");
        }
        stored = compute_bytes == 4 ? WeightFormat::fp32 : WeightFormat::bf16;
    }
    double weights = stored_weight_bytes(setup.shard, stored);
    const double weight_element = bits_per_weight(stored) / 8.0;
    if (setup.sharded_weights || setup.offload_params) {
        // ZeRO-3 gathers a layer before use and prefetches the next: two of the largest layer
        // (DeepSpeed estimate_zero3_model_states_mem_needs: 4 × largest layer bytes at 16-bit).
        const double gather = 2.0 * setup.split.largest_layer / std::max(layout.tensor_parallel, 1) * weight_element;
        const double resident = setup.offload_params ? 0.0 : weights / setup.d;
        if (notes.active()) {
            notes.add("weights: {} = {} parameters × {:g} B{} + gathered layers 2 × {} × {:g} B = {}{}",
                      setup.offload_params ? "offloaded to CPU" : fmt::format("ZeRO-3 shard {}", gb(resident)),
                      format_count(setup.shard.total), weight_element,
                      setup.offload_params ? "" : fmt::format(" / {} GPUs", layout.data_parallel),
                      format_count(setup.split.largest_layer), weight_element, gb(gather),
                      setup.split.largest_layer > 0 ? "" : " (layer sizes unknown: gather buffers not counted)");
        }
        weights = resident + gather;
    }
    if (!is_float_format(stored) && setup.lora) {
        // bitsandbytes dequantizes one weight matrix at a time to the compute dtype for its matmul.
        weights += largest_matrix_params(model) * compute_bytes;
    }
    result.format = stored;
    result.element_bytes = weight_element;
    result.bytes = weights;
    return result;
}

// Full training updates every stored weight; LoRA only its adapters, which `weights` gains.
TrainableParams trainable_params(const TrainingSetup& setup, StoredWeights& weights, NoteList& notes) {
    const ModelSpec& model = setup.model;
    const LoraSpec& lora = setup.training.lora;
    TrainableParams trainable{setup.shard.total, weights.element_bytes, weights.element_bytes};
    if (!setup.lora) {
        return trainable;
    }
    const LoraShape lora_terms = memory_detail::lora_shape(model, lora);
    const double lora_params = lora_trainable_params(model, lora);
    trainable.count = lora_params * setup.shard.fraction;
    // Adapters live in the base's float dtype, or the compute dtype over a quantized base.
    trainable.element_bytes = is_float_format(weights.format) ? weights.element_bytes : setup.compute_bytes;
    weights.bytes += trainable.count * trainable.element_bytes;
    if (notes.active()) {
        notes.add("LoRA rank {} on [{}]: {:.0f} trainable parameters ({:.3f} % of {}); the base stays frozen as {}",
                  lora.rank, fmt::join(lora.targets, ", "), lora_params,
                  100.0 * lora_params / std::max(model.params, 1.0), format_count(model.params),
                  to_string(weights.format));
        if (!model.is_transformer()) {
            notes.add(
                "LoRA adapters cannot be sized without transformer fields (layers, hidden, heads); counted as 0 "
                "(adapters are typically well under 1 % of the parameters)");
        }
        if (!lora_terms.unknown.empty()) {
            notes.add("LoRA targets not recognised, counted as hidden→hidden: {}", fmt::join(lora_terms.unknown, ", "));
        }
    }
    return trainable;
}

// Sets the weights, their uncertainty and the autocast copy; returns what training updates.
TrainableParams weights_term(const TrainingSetup& setup, Peak& peak, NoteList& notes) {
    StoredWeights weights = stored_training_weights(setup, notes);
    const TrainableParams trainable = trainable_params(setup, weights, notes);
    const WeightFormat stored = weights.format;
    const bool gathered = setup.sharded_weights || setup.offload_params;
    if (!gathered && notes.active()) {
        notes.add("weights: {} parameters{} × {:g} B ({}) = {}{}", format_count(setup.shard.total),
                  setup.shard.fraction < 1 ? " on this GPU" : "", bits_per_weight(stored) / 8, to_string(stored),
                  gb(stored_weight_bytes(setup.shard, stored)),
                  setup.lora ? fmt::format(" + LoRA adapters {} × {:g} B = {}", format_count(trainable.count),
                                           trainable.element_bytes, gb(trainable.count * trainable.element_bytes))
                             : "");
    }
    peak.weights = weights.bytes;
    peak.weights_uncertainty =
        weights.bytes * (is_float_format(stored) ? float_weight_uncertainty : quantized_weight_uncertainty);
    // Autocast runs fp32 weights in 16-bit through a cached copy (HF "model memory anatomy": 6 B/param
    // for weights in mixed precision = 4 fp32 + 2 half).
    if (weights.element_bytes == 4 && setup.compute_bytes == 2 && !gathered) {
        peak.cast_copy = setup.shard.total * 2.0;
        if (notes.active()) {
            notes.add(
                "fp32 weights under {} autocast: a 16-bit copy of every weight lives through forward and backward "
                "(6 B/param)",
                to_string(setup.workload.precision));
        }
    }
    return trainable;
}

// Gradients: in the trainable dtype (HF docs; ZeRO paper 2Ψ under fp16), or in fp32 buffers
// (Megatron-LM accumulates and all-reduces bf16 gradients in fp32 main_grad buffers: arguments.py,
// "accumulate and all-reduce gradients in fp32 for bfloat16 data type"). Sets the gradients, how
// many of them are alive at the start of backward, and the states' uncertainty.
void gradients_term(const TrainingSetup& setup, const TrainableParams& trainable, int micro_batch, Peak& peak,
                    NoteList& notes) {
    const ModelSpec& model = setup.model;
    const TrainingSpec& training = setup.training;
    const Layout& layout = setup.layout;
    const double d = setup.d;
    const double gradient_element = training.gradient_dtype == GradientDtype::fp32 ? 4.0 : trainable.element_bytes;
    double gradients = trainable.count * gradient_element;
    const bool streamed_to_host = setup.offload_optimizer && setup.sharded_gradients;
    if (streamed_to_host) {
        gradients = 0;  // DeepSpeed ZeRO-Offload streams reduced gradient partitions to host memory
    } else if (setup.sharded_gradients) {
        gradients /= d;
    }
    peak.gradients = gradients;
    peak.states_uncertainty = float_weight_uncertainty;
    if (notes.active()) {
        if (streamed_to_host) {
            notes.add("gradients: reduced partitions stream to CPU memory with the offloaded optimizer (ZeRO-Offload)");
        } else {
            notes.add("gradients: {} trainable parameters × {:g} B{}{} = {}", format_count(trainable.count),
                      gradient_element,
                      gradient_element != trainable.element_bytes ? " (fp32 gradient buffers)" : "",
                      setup.sharded_gradients ? fmt::format(" / {} GPUs (ZeRO)", layout.data_parallel) : "",
                      gb(gradients));
        }
    }
    // Gradients stay allocated between steps when they are accumulated over micro-batches or zeroed in
    // place (PyTorch < 2.0 zero_grad, Megatron's and llm.c's persistent buffers); with
    // zero_grad(set_to_none=True), the PyTorch 2.0 default, they exist only from backward to the step,
    // and the first produced in backward are the output layer's.
    // Context parallelism: the data-parallel GPUs hold dp / cp sequence replicas.
    const double replicas = training.sequence_replicas(layout.data_parallel);
    const double global_batch = training.global_batch > 0 ? training.global_batch : micro_batch * replicas;
    const bool accumulating = global_batch > static_cast<double>(micro_batch) * replicas;
    const bool gradients_resident = accumulating || training.zero_grad == ZeroGrad::zero;
    double output_layer_params = 0;
    // Encoders' vocabulary matrix is the input embedding, whose gradient comes last; their task heads are small.
    if (model.is_transformer() && model.vocab > 0 && layout.pipeline_parallel <= 1 &&
        model.family != ModelFamily::encoder) {
        output_layer_params =
            setup.lora ? memory_detail::lora_shape(model, training.lora).head_params
                       : static_cast<double>(model.vocab) * model.hidden / std::max(layout.tensor_parallel, 1);
    }
    peak.backward_gradients =
        gradients_resident ? gradients : std::min(gradients, output_layer_params * gradient_element);
    if (!notes.active()) {
        return;
    }
    if (gradients_resident) {
        notes.add("gradients resident through backward ({})",
                  accumulating
                      ? fmt::format("accumulated over {:g} micro-batches", global_batch / (micro_batch * replicas))
                      : "zero_grad keeps them allocated as zeros");
    } else {
        notes.add("gradients exist from backward to the step only (zero_grad set-to-none, no accumulation){}",
                  peak.backward_gradients > 0
                      ? fmt::format("; backward starts with the output layer's {}", gb(peak.backward_gradients))
                      : "");
    }
}

// Bytes of optimizer state per trainable parameter (without the master copy), with the words for
// the note when notes are kept.
struct OptimizerState {
    double bytes_per_param = 0;
    std::string text;
};

OptimizerState optimizer_state(Optimizer optimizer, const ModelSpec& model, double state_element, bool describe) {
    OptimizerState state;
    switch (optimizer) {
        case Optimizer::adam:
        case Optimizer::adamw:
            state.bytes_per_param = 2 * state_element;
            if (describe) {
                state.text =
                    fmt::format("{} m and v {:g} B", state_element == 4 ? "fp32" : "16-bit", 2 * state_element);
            }
            break;
        case Optimizer::sgd:
            state.text = "no state 0 B";
            break;
        case Optimizer::sgd_momentum:
            state.bytes_per_param = state_element;
            if (describe) {
                state.text = fmt::format("momentum {:g} B", state_element);
            }
            break;
        case Optimizer::lion:
            state.bytes_per_param = state_element;
            if (describe) {
                state.text = fmt::format("momentum {:g} B", state_element);
            }
            break;
        case Optimizer::adamw_8bit:
            // bitsandbytes block-wise 8-bit m and v (Dettmers et al. 2022): 2 B/param.
            state.bytes_per_param = 2;
            state.text = "8-bit m and v 2 B";
            break;
        case Optimizer::adafactor: {
            // Factored second moment: rows + cols per matrix instead of rows × cols (Shazeer & Stern 2018).
            const double width = model.hidden > 0 ? model.hidden : std::sqrt(std::max(model.params, 1.0));
            state.bytes_per_param = state_element * 2.0 / width;
            if (describe) {
                state.text = fmt::format("factored second moment {:.4f} B", state.bytes_per_param);
            }
            break;
        }
    }
    return state;
}

// Adam/AdamW materialise sqrt(v) (+ eps) before the update. PyTorch's foreach kernels (the CUDA
// default since 2.0) do it for the whole parameter list at once (torch/optim/adam.py,
// _multi_tensor_adam: exp_avg_sq_sqrt = torch._foreach_sqrt(...)); the for-loop implementations
// (PyTorch < 2.0, Hugging Face's adamw_hf) one tensor at a time; fused kernels (fused=True,
// apex/Transformer Engine FusedAdam in Megatron, llm.c, bitsandbytes) not at all. Bytes before
// sharding, with the words for the note when notes are kept.
struct StepTemporary {
    double bytes = 0;
    std::string text;
};

StepTemporary adam_step_temporary(const TrainingSetup& setup, double trainable, double state_element, bool describe) {
    const TrainingSpec& training = setup.training;
    StepTemporary step;
    const bool adam_family = training.optimizer == Optimizer::adam || training.optimizer == Optimizer::adamw;
    if (adam_family && training.optimizer_step == OptimizerStep::foreach) {
        step.bytes = trainable * state_element;
        if (describe) {
            step.text = fmt::format("{:g} B/param for sqrt(v) over all parameters (foreach step)", state_element);
        }
    } else if (adam_family && training.optimizer_step == OptimizerStep::for_loop) {
        const double largest =
            std::min(trainable, largest_trainable_tensor_params(setup.model, training.lora, setup.layout));
        step.bytes = largest * state_element;
        if (describe) {
            step.text =
                fmt::format("sqrt(v) of the largest tensor, {} × {:g} B (for-loop step){}", format_count(largest),
                            state_element, largest > 0 ? "" : "; its size is unknown without the architecture");
        }
    }
    return step;
}

// Optimizer states (+ fp32 master copy under mixed precision) and the step's temporary.
void optimizer_term(const TrainingSetup& setup, const TrainableParams& trainable, Peak& peak, NoteList& notes) {
    const TrainingSpec& training = setup.training;
    const Layout& layout = setup.layout;
    const bool master = training.master_weights && trainable.element_bytes < 4;
    const double state_element = (master || trainable.element_bytes >= 4) ? 4.0 : trainable.element_bytes;
    const OptimizerState state = optimizer_state(training.optimizer, setup.model, state_element, notes.active());
    double optimizer = trainable.count * (state.bytes_per_param + (master ? 4.0 : 0.0));
    const bool adam_family = training.optimizer == Optimizer::adam || training.optimizer == Optimizer::adamw;
    StepTemporary step = adam_step_temporary(setup, trainable.count, state_element, notes.active());
    if (setup.offload_optimizer) {
        optimizer = 0;
        step.bytes = 0;
        if (notes.active()) {
            notes.add("optimizer states offloaded to CPU memory (DeepSpeed ZeRO-Offload); the GPU keeps none");
        }
    } else if (setup.sharded_optimizer) {
        optimizer /= setup.d;
        if (training.optimizer_step == OptimizerStep::foreach) {
            step.bytes /= setup.d;
        }
    }
    peak.optimizer = optimizer;
    peak.step_temporary = step.bytes;
    if (!notes.active()) {
        return;
    }
    if (!setup.offload_optimizer) {
        notes.add("optimizer {}: {} trainable × ({}{}){} = {}{}", to_string(training.optimizer),
                  format_count(trainable.count), state.text,
                  master ? " + fp32 master copy 4 B" : (trainable.element_bytes < 4 ? ", no fp32 master copy" : ""),
                  setup.sharded_optimizer ? fmt::format(" / {}", layout.data_parallel) : "", gb(optimizer),
                  step.bytes > 0 ? fmt::format("; the step adds a temporary {} = {}", step.text, gb(step.bytes))
                  : adam_family  ? fmt::format("; {} step: no temporary", to_string(training.optimizer_step))
                                 : "");
    }
    if (setup.sharded_optimizer) {
        notes.add("{} over {} data-parallel GPUs divides {}", to_string(layout.sharding), layout.data_parallel,
                  layout.sharding == Sharding::zero1   ? "optimizer states"
                  : layout.sharding == Sharding::zero2 ? "optimizer states and gradients"
                                                       : "optimizer states, gradients and weights");
    }
}

struct ActivationTerm {
    double bytes = 0;
    double per_sample = 0;
};

// Models without transformer fields: the preset's per-sample figure (fp32) × micro-batch.
ActivationTerm per_sample_activations(const TrainingSetup& setup, int micro_batch, NoteList& notes) {
    const ModelSpec& model = setup.model;
    ActivationTerm term;
    const double scale = setup.compute_bytes == 2 ? half_precision_activation_factor : 1.0;
    term.per_sample = model.activation_bytes_per_sample * scale;
    term.bytes = term.per_sample * micro_batch;
    if (!notes.active()) {
        return term;
    }
    if (model.activation_bytes_per_sample > 0) {
        notes.add("activations: {} per sample (preset, fp32{}) × micro-batch {}",
                  gb(model.activation_bytes_per_sample), scale != 1.0 ? ", halved for 16-bit" : "", micro_batch);
    } else if (setup.workload.calibration.memory.empty()) {
        notes.add(
            "activations: no per-sample figure in the model and no calibration points; counted as 0 — add "
            "activation_per_sample or calibration.memory");
    }
    return term;
}

// The transformer blocks' activations by recompute policy (Korthikanti et al. 2022 terms), with
// the note's words for them when notes are kept.
struct LayerStack {
    double bytes = 0;
    std::string parts;
};

LayerStack layer_stack_activations(const TrainingSetup& setup, const ActivationShape& shape, NoteList& notes) {
    const ModelSpec& model = setup.model;
    const TrainingSpec& training = setup.training;
    const double s = shape.seq_len;
    const double b = shape.micro_batch;
    const double compute_bytes = setup.compute_bytes;
    LayerStack stack;
    const double layer = transformer_layer_activation_bytes(model, shape);
    const double layers = model.layers;  // first pipeline stage: p micro-batches × L/p layers (Korthikanti §4.2.3)
    // LoRA dropout (LitGPT default 0.05) stores each adapted input and its mask.
    double lora_dropout = 0;
    if (setup.lora) {
        lora_dropout =
            s * b * memory_detail::lora_shape(model, training.lora).input_width_per_layer * (compute_bytes + 1.0);
    }
    if (training.checkpointing == Checkpointing::full) {
        // Full recompute keeps each layer's input and rebuilds one layer at a time.
        const double inputs = layers * s * b * model.hidden * compute_bytes;
        ActivationShape working = shape;
        working.selective_recompute = false;
        const double working_layer = transformer_layer_activation_bytes(model, working);
        stack.bytes = inputs + working_layer + lora_dropout;
        if (notes.active()) {
            stack.parts = fmt::format("layer inputs {} × {} tokens × {} × {:g} B = {} + one layer rebuilt {}",
                                      model.layers, s * b, model.hidden, compute_bytes, gb(inputs), gb(working_layer));
            if (lora_dropout > 0) {
                stack.parts += fmt::format(" + LoRA dropout {}", gb(lora_dropout));
            }
        }
        return stack;
    }
    stack.bytes = layers * (layer + lora_dropout);
    if (notes.active()) {
        stack.parts = fmt::format("{} layers × {}", model.layers, gb(layer));
        if (lora_dropout > 0) {
            stack.parts += fmt::format(" + {} × LoRA dropout {}", model.layers, gb(lora_dropout));
        }
    }
    if (training.recompute_ffn_activation) {
        // The recomputed activation of the layer in backward needs one buffer (llm.c fch_gelu scratch).
        const TransformerWidths w = memory_detail::transformer_widths(model);
        const double scratch = s * b * w.moe_top_k * w.ffn * compute_bytes / std::max(setup.layout.tensor_parallel, 1);
        stack.bytes += scratch;
        if (notes.active()) {
            stack.parts += fmt::format(" + one layer's recomputed FFN activation {}", gb(scratch));
        }
    }
    return stack;
}

// Output layer and loss, per logit (s·b·V of them), by how the cross-entropy is taken:
// standard: the logits plus the fp32 log-probabilities F.cross_entropy keeps for backward after
// the upcast (torchtune memory table; HF Transformers upcasts logits to fp32 for the loss);
// chunked: the fp32 work happens one chunk at a time (torchtune CEWithChunkedOutputLoss, 8 chunks;
// LitGPT chunked_cross_entropy, 128 tokens, on 16-bit log-probabilities): logits + log-probabilities
// in the compute dtype; fused: only the logits, the loss gradient overwriting them in place (llm.c
// fused_classifier). 0 on a later pipeline stage and for encoders. Appends its words to `parts`.
double logits_activations(const TrainingSetup& setup, double tokens, std::string& parts, NoteList& notes) {
    const ModelSpec& model = setup.model;
    const TrainingSpec& training = setup.training;
    const double compute_bytes = setup.compute_bytes;
    if (setup.layout.pipeline_parallel > 1 || model.vocab <= 0 || model.family == ModelFamily::encoder) {
        return 0;
    }
    const double per_logit = training.loss == LossKind::standard  ? compute_bytes + 4.0
                             : training.loss == LossKind::chunked ? 2.0 * compute_bytes
                                                                  : compute_bytes;
    const double logits = tokens * model.vocab * per_logit / std::max(setup.layout.tensor_parallel, 1);
    if (notes.active()) {
        parts += fmt::format(" + logits and {} loss {} tokens × {} vocab × {:g} B = {}", to_string(training.loss),
                             tokens, model.vocab, per_logit, gb(logits));
    }
    return logits;
}

ActivationTerm transformer_activations(const TrainingSetup& setup, double stored_weight_element, int micro_batch,
                                       NoteList& notes) {
    const ModelSpec& model = setup.model;
    const TrainingSpec& training = setup.training;
    const double b = micro_batch;
    // Under context parallelism each GPU holds 1/cp of every sequence's tokens (with flash
    // attention, which the loader requires, nothing scales with the whole sequence).
    const double s = static_cast<double>(training.seq_len) / std::max(1, training.context_parallel);
    ActivationShape shape;
    shape.seq_len = s;
    shape.micro_batch = b;
    shape.element_bytes = setup.compute_bytes;
    shape.dropout = trains_with_dropout(model);
    shape.flash_attention = training.flash_attention;
    shape.selective_recompute = training.checkpointing == Checkpointing::selective;
    shape.tensor_parallel = setup.layout.tensor_parallel;
    shape.autocast = stored_weight_element == 4 && setup.compute_bytes == 2;
    shape.recompute_ffn_activation = training.recompute_ffn_activation;
    LayerStack stack = layer_stack_activations(setup, shape, notes);
    ActivationTerm term;
    term.bytes = stack.bytes;
    term.bytes += logits_activations(setup, s * b, stack.parts, notes);
    term.per_sample = b > 0 ? term.bytes / b : 0;
    if (notes.active()) {
        notes.add(
            "activations ({} recompute; Korthikanti et al. 2022 terms, seq {}{} × micro-batch {}, {}{}{}{}): {} = {}",
            to_string(training.checkpointing), training.seq_len,
            training.context_parallel > 1 ? fmt::format(" / context parallel {}", training.context_parallel) : "",
            micro_batch, training.flash_attention ? "flash attention" : "attention scores stored",
            model.ffn_gated ? ", gated FFN" : "", shape.dropout ? ", dropout masks" : "",
            shape.autocast ? ", fp32 norms/softmax under autocast" : "", stack.parts, gb(term.bytes));
        if (setup.lora) {
            notes.add("LoRA dropout assumed on (LitGPT default): each adapted module keeps its dropped input and mask");
        }
    }
    return term;
}

// Measured points override the activation estimate: the activations become the fitted peak less
// the model's states, taken against resident gradients and without the step's temporaries.
void apply_calibration(const Workload& workload, const GpuSpec& gpu, int micro_batch, TrainingResult& result,
                       NoteList& notes) {
    Peak& peak = result.peak;
    result.calibration = fit_calibration(workload, gpu, result.activation_per_sample);
    const CalibrationFit& fit = result.calibration;
    if (!fit.used) {
        return;
    }
    const double b = micro_batch;
    const double fitted = fit.intercept_bytes + fit.slope_bytes * b;
    const double fixed = peak.weights + peak.gradients + peak.optimizer;
    peak.activations = std::max(0.0, fitted - fixed);
    peak.backward_gradients = peak.gradients;  // the fit was taken against resident gradients
    peak.step_temporary = 0;
    peak.cast_copy = 0;
    if (notes.active()) {
        notes.add(
            "calibration: {} measured point{}{} fitted linearly: {} + {} per sample; activations = fit − model "
            "states",
            fit.points, fit.points == 1 ? " (slope from the model)" : "s", fit.other_gpu ? " from another GPU" : "",
            gb(fit.intercept_bytes), gb(fit.slope_bytes));
    }
}

TrainingResult training_terms(const Workload& workload, const GpuSpec& gpu, const Layout& layout, int micro_batch,
                              NoteList& notes) {
    const TrainingSetup setup(workload, layout);
    TrainingResult result;
    const TrainableParams trainable = weights_term(setup, result.peak, notes);
    gradients_term(setup, trainable, micro_batch, result.peak, notes);
    optimizer_term(setup, trainable, result.peak, notes);
    const ActivationTerm activations =
        uses_per_sample_activations(setup.model)
            ? per_sample_activations(setup, micro_batch, notes)
            : transformer_activations(setup, trainable.stored_element_bytes, micro_batch, notes);
    result.peak.activations = activations.bytes;
    result.activation_per_sample = activations.per_sample;
    apply_calibration(workload, gpu, micro_batch, result, notes);
    return result;
}

struct InferenceResult {
    Peak peak;
};

// KV heads split over tensor-parallel ranks, replicated when there are fewer heads than ranks.
// MLA's latent is shared by all heads, so every rank holds all of it (vLLM, SGLang).
double inference_kv_cache_bytes(const Workload& workload, const Layout& layout, int batch, int context_tokens,
                                NoteList& notes) {
    const ModelSpec& model = workload.model;
    const double t = std::max(layout.tensor_parallel, 1);
    const double p = std::max(layout.pipeline_parallel, 1);
    const double kv_heads = model.kv_heads > 0 ? model.kv_heads : model.heads;
    const double kv_share = model.is_mla() ? 1.0 : std::ceil(kv_heads / t) / kv_heads;
    const double kv_cache =
        kv_cache_bytes(model, element_bytes(workload.kv_cache), context_tokens, batch) * kv_share / p;
    if (!notes.active()) {
        return kv_cache;
    }
    const std::string share = kv_share < 1 || p > 1 ? fmt::format(", this GPU's share {:.3g}", kv_share / p) : "";
    const std::string window =
        model.sliding_window > 0
            ? fmt::format(" ({} of them hold at most the {}-token window)",
                          model.sliding_layers > 0 ? model.sliding_layers : model.layers, model.sliding_window)
            : "";
    if (model.is_mla()) {
        notes.add(
            "KV cache (MLA latent): {} layers{} × ({} latent + {} RoPE key) × {:g} B × {} tokens × {} "
            "sequences{} = {}",
            model.layers, window, model.kv_lora_rank, model.qk_rope_head_dim, element_bytes(workload.kv_cache),
            context_tokens, batch, share, gb(kv_cache));
    } else {
        notes.add(
            "KV cache: 2 × {} layers{} × {} KV heads × {} head dim × {:g} B × {} tokens × {} sequences{} = "
            "{}",
            model.layers, window, model.kv_heads, model.head_dim, element_bytes(workload.kv_cache), context_tokens,
            batch, share, gb(kv_cache));
    }
    return kv_cache;
}

// Prefill workspace: one layer's transient (residual, normed input, FFN intermediates) for the
// whole prompt, plus the prompt's logits in the compute dtype (HF and LitGPT compute them all).
// Encoders (BERT, RoBERTa) encode each input in one pass: their outputs are hidden states for a
// small task head, not vocabulary logits (as in training).
double prefill_workspace_bytes(const Workload& workload, const Layout& layout, int batch, int context_tokens,
                               NoteList& notes) {
    const ModelSpec& model = workload.model;
    const bool encoder = model.family == ModelFamily::encoder;
    const double t = std::max(layout.tensor_parallel, 1);
    const double compute_bytes = activation_element_bytes(workload.precision);
    const TransformerWidths w = memory_detail::transformer_widths(model);
    const double prompt = std::min(workload.inference.input_tokens, context_tokens);
    const double tokens = prompt * batch;
    const double ffn_tensors = model.ffn_gated ? 3.0 : 2.0;
    const double layer = tokens * (2.0 * w.hidden + w.moe_top_k * ffn_tensors * w.ffn / t) * compute_bytes;
    const double logits = model.vocab > 0 && !encoder ? tokens * model.vocab * compute_bytes / t : 0.0;
    const double workspace = layer + logits;
    if (notes.active()) {
        notes.add("activation workspace: one layer's {} intermediates for {} tokens × {}{} = {}",
                  encoder ? "forward" : "prefill", static_cast<long long>(prompt), batch,
                  encoder ? " (encoder: no KV cache, no vocabulary logits)" : " + their logits", gb(workspace));
    }
    return workspace;
}

InferenceResult inference_terms(const Workload& workload, const Layout& layout, int batch, int context_tokens,
                                NoteList& notes) {
    const ModelSpec& model = workload.model;
    InferenceResult result;
    const ParameterSplit split = split_parameters(model);
    const ShardParams shard = shard_parameters(model, split, layout);
    const double compute_bytes = activation_element_bytes(workload.precision);
    result.peak.weights = stored_weight_bytes(shard, workload.weights);
    result.peak.weights_uncertainty =
        result.peak.weights *
        (is_float_format(workload.weights) ? float_weight_uncertainty : quantized_weight_uncertainty);
    if (is_quantized(workload.weights) && !memory_detail::is_whole_file_format(workload.weights)) {
        // Weight-only kernels dequantize one matrix at a time to the compute dtype.
        result.peak.weights += largest_matrix_params(model) * compute_bytes / std::max(layout.tensor_parallel, 1);
    }
    if (notes.active()) {
        notes.add("weights: {} parameters{} × {:g} B ({}){} = {}", format_count(shard.total),
                  shard.fraction < 1 ? " on this GPU" : "", bits_per_weight(workload.weights) / 8,
                  to_string(workload.weights),
                  model.is_transformer() && bits_per_weight(workload.weights) <= 8 &&
                          !memory_detail::is_whole_file_format(workload.weights)
                      ? ", embeddings and output layer in 16-bit, + one dequantized matrix"
                      : "",
                  gb(result.peak.weights));
    }
    if (model.is_transformer()) {
        // Encoders (BERT, RoBERTa) encode each input in one pass: no KV cache.
        if (model.family != ModelFamily::encoder) {
            result.peak.kv_cache = inference_kv_cache_bytes(workload, layout, batch, context_tokens, notes);
        }
        result.peak.activations = prefill_workspace_bytes(workload, layout, batch, context_tokens, notes);
    } else if (model.activation_bytes_per_sample > 0) {
        const double scale = compute_bytes == 2 ? half_precision_activation_factor : 1.0;
        result.peak.activations = model.activation_bytes_per_sample * scale * batch;
        if (notes.active()) {
            notes.add(
                "activation workspace: the per-sample training figure × batch {} = {}, an upper bound (inference "
                "frees activations layer by layer)",
                batch, gb(result.peak.activations));
        }
    } else {
        if (notes.active()) {
            notes.add("activation workspace: the model has no per-sample activation figure; counted as 0");
        }
    }
    return result;
}

struct Resolved {
    Layout layout;
    int micro_batch = 1;
    int batch = 1;
    int context_tokens = 1;
};

Resolved resolve(const Workload& workload, const MemoryQuery& query) {
    Resolved resolved;
    resolved.layout = query.layout;
    resolved.layout.tensor_parallel = std::max(resolved.layout.tensor_parallel, 1);
    resolved.layout.pipeline_parallel = std::max(resolved.layout.pipeline_parallel, 1);
    resolved.layout.data_parallel = std::max(resolved.layout.data_parallel, 1);
    resolved.layout.expert_parallel = std::max(resolved.layout.expert_parallel, 1);
    resolved.micro_batch = query.micro_batch > 0 ? query.micro_batch : std::max(workload.training.micro_batch, 1);
    resolved.batch = query.batch > 0 ? query.batch : std::max(workload.inference.batch, 1);
    resolved.context_tokens = query.context_tokens > 0
                                  ? query.context_tokens
                                  : workload.inference.input_tokens + workload.inference.output_tokens;
    return resolved;
}

// A paged engine at `batch` sequences of `context` tokens: the weights, the profiled activation
// peak and non-torch memory, with the KV blocks those sequences occupy (at least one request of
// max_model_len: the engine's start-up check). Judged against the engine's budget.
MemoryBreakdown engine_breakdown(const Workload& workload, const ServingMemory& serving, const Resolved& resolved,
                                 NoteList& notes) {
    const long long blocks_per_sequence = (resolved.context_tokens + serving.block_size - 1) / serving.block_size;
    const long long minimum_blocks = (serving.max_model_len + serving.block_size - 1) / serving.block_size;
    const double blocks = static_cast<double>(std::max(blocks_per_sequence * resolved.batch, minimum_blocks));
    MemoryBreakdown breakdown;
    breakdown.weights_bytes = serving.weights_bytes;
    breakdown.activations_bytes = serving.activation_peak_bytes;
    breakdown.kv_cache_bytes = blocks * serving.block_size * serving.kv_bytes_per_token;
    breakdown.overhead_bytes = serving.non_torch_bytes;
    breakdown.allocated_bytes = breakdown.weights_bytes + breakdown.activations_bytes + breakdown.kv_cache_bytes;
    breakdown.total_bytes = breakdown.allocated_bytes + breakdown.overhead_bytes;
    const double spread =
        (is_float_format(workload.weights) ? float_weight_uncertainty : quantized_weight_uncertainty) *
            serving.weights_bytes +
        (activation_high_factor - 1) * serving.activation_peak_bytes;
    breakdown.allocated_low_bytes = breakdown.allocated_bytes - spread;
    breakdown.allocated_high_bytes = breakdown.allocated_bytes + spread;
    breakdown.total_low_bytes = breakdown.total_bytes - spread;
    breakdown.total_high_bytes = breakdown.total_bytes + spread;
    if (notes.active()) {
        notes.add("{} start-up: budget {} = {:g} × {} device total{}", to_string(serving.engine),
                  gb(serving.budget_bytes), serving.memory_fraction, gb(serving.device_total_bytes),
                  serving.engine == Engine::sglang ? " (mem_fraction_static for weights + KV; activations outside)"
                  : serving.engine == Engine::tensorrt_llm
                      ? " (free_gpu_memory_fraction of what is free after the weights)"
                      : " (gpu_memory_utilization)");
        notes.add("weights as loaded {} ({}); no allocator reserve: the engine preallocates its pools",
                  gb(serving.weights_bytes), to_string(workload.weights));
        notes.add(
            "activation peak {}: profiling step of max_num_batched_tokens {} and a sampler pass over {} sequences",
            gb(serving.activation_peak_bytes), serving.max_num_batched_tokens,
            std::min(serving.max_num_seqs, serving.max_num_batched_tokens));
        notes.add("non-torch memory {}{}", gb(serving.non_torch_bytes),
                  resolved.layout.tensor_parallel > 1 ? " (NCCL and custom all-reduce buffers at TP > 1)" : "");
        notes.add(
            "KV cache pool {} = {} blocks × {} tokens = {} tokens ({:.0f} KiB per token on this GPU); {} at "
            "max_model_len {}: {:.2f}x concurrency",
            gb(serving.kv_cache_bytes), serving.kv_cache_blocks, serving.block_size, serving.kv_cache_tokens,
            serving.kv_bytes_per_token / 1024, serving.fits ? "fits" : "refused", serving.max_model_len,
            serving.max_concurrency);
        if (workload.runtime.cuda_graphs && serving.engine == Engine::vllm) {
            notes.add(
                "CUDA graphs are captured after the KV cache is sized (0.5–1.9 GiB in the vLLM v0.19 logs), outside "
                "the budget: keep gpu_memory_utilization ≤ 0.95");
        }
    }
    return breakdown;
}

MemoryBreakdown compute(const Workload& workload, const GpuSpec& gpu, const Resolved& resolved,
                        std::vector<std::string>* note_list) {
    NoteList notes(note_list);
    if (const std::optional<ServingMemory> serving = serving_memory(workload, gpu, resolved.layout)) {
        return engine_breakdown(workload, *serving, resolved, notes);
    }
    Peak peak;
    if (workload.is_training()) {
        TrainingResult training = training_terms(workload, gpu, resolved.layout, resolved.micro_batch, notes);
        peak = training.peak;
    } else {
        peak = inference_terms(workload, resolved.layout, resolved.batch, resolved.context_tokens, notes).peak;
    }
    const Allocation nominal = resolve_peak(peak, 1.0, true, 0.0);
    const Allocation low = resolve_peak(peak, activation_low_factor, false, -1.0);
    const Allocation high = resolve_peak(peak, activation_high_factor, true, 1.0);
    if (nominal.at_step) {
        if (notes.active()) {
            notes.add(
                "the peak is at the optimizer step: all gradients ({}) and the step's temporary ({}) outweigh the "
                "activations ({}) and the gradients alive when backward starts ({}); activations are freed by then",
                gb(peak.gradients), gb(peak.step_temporary), gb(peak.activations + peak.cast_copy),
                gb(peak.backward_gradients));
        }
    }
    MemoryBreakdown breakdown;
    breakdown.weights_bytes = nominal.weights;
    breakdown.gradients_bytes = nominal.gradients;
    breakdown.optimizer_bytes = nominal.optimizer;
    breakdown.activations_bytes = nominal.activations;
    breakdown.kv_cache_bytes = nominal.kv_cache;
    breakdown.allocated_bytes = nominal.total();
    breakdown.allocated_low_bytes = low.total();
    breakdown.allocated_high_bytes = high.total();

    const Layout& layout = resolved.layout;
    const int communicators = (layout.data_parallel > 1 ? 1 : 0) + (layout.tensor_parallel > 1 ? 1 : 0) +
                              (layout.pipeline_parallel > 1 ? 1 : 0);
    const double nccl = communicators * nccl_bytes_per_communicator;
    const RuntimeSpec& runtime = workload.runtime;
    const double context = cuda_context_bytes(runtime);
    // A measured context is taken as given; otherwise the band spans the published range over GPUs
    // and software versions.
    const bool context_measured = runtime.cuda_context_bytes > 0;
    const double context_low = context_measured ? context : std::min(context, context_low_bytes);
    const double context_high = context_measured ? context : std::max(context, context_high_bytes);
    // Static allocators (llm.c, llama.cpp) cudaMalloc their buffers once: nothing is cached on top.
    const bool caching = runtime.allocator == Allocator::caching;
    const double reserve_fraction = caching ? builtin_memory_assumptions().allocator_reserve_fraction : 0.0;
    const double reserve_low = caching ? builtin_memory_assumptions().allocator_reserve_fraction_low : 0.0;
    const double reserve_high = caching ? builtin_memory_assumptions().allocator_reserve_fraction_high : 0.0;
    const double reserve = reserve_fraction * breakdown.allocated_bytes;
    breakdown.overhead_bytes = context + reserve + nccl;
    breakdown.total_bytes = breakdown.allocated_bytes + breakdown.overhead_bytes;
    breakdown.total_low_bytes = breakdown.allocated_low_bytes * (1 + reserve_low) + context_low + nccl;
    breakdown.total_high_bytes = breakdown.allocated_high_bytes * (1 + reserve_high) + context_high + nccl;
    if (notes.active()) {
        notes.add("overhead {}: CUDA context {} ({}) + {}{}", gb(breakdown.overhead_bytes), gb(context),
                  context_measured ? "runtime.cuda_context" : fmt::format("{}", to_string(runtime.framework)),
                  caching ? fmt::format("allocator reserve {:.0f} % × {} allocated = {}", reserve_fraction * 100,
                                        gb(breakdown.allocated_bytes), gb(reserve))
                          : "no allocator reserve (static buffers)",
                  nccl > 0 ? fmt::format(" + NCCL buffers {}", gb(nccl)) : "");
    }
    return breakdown;
}

constexpr int max_search_batch = 1 << 16;
constexpr int max_search_context = 1 << 24;

}  // namespace

double memory_usable_bytes(const Workload& workload, const GpuSpec& gpu, const Layout& layout,
                           double headroom_fraction) {
    if (const std::optional<ServingMemory> serving = serving_memory(workload, gpu, layout)) {
        return serving->budget_bytes;
    }
    return gpu.memory_bytes * (1.0 - headroom_fraction);
}

MemoryBreakdown memory_breakdown(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query) {
    return compute(workload, gpu, resolve(workload, query), nullptr);
}

MemoryEstimate estimate_memory(const Workload& workload, const GpuSpec& gpu, const MemoryQuery& query) {
    const Resolved resolved = resolve(workload, query);
    MemoryEstimate estimate;
    estimate.per_gpu = compute(workload, gpu, resolved, &estimate.notes);
    estimate.capacity_bytes = gpu.memory_bytes;
    estimate.headroom_fraction =
        query.headroom_fraction >= 0 ? query.headroom_fraction : workload.constraints.memory_headroom_fraction;
    estimate.serving = serving_memory(workload, gpu, resolved.layout);
    const double usable = memory_usable_bytes(workload, gpu, resolved.layout, estimate.headroom_fraction);
    estimate.fits = estimate.per_gpu.total_bytes <= usable;
    estimate.headroom_bytes = gpu.memory_bytes - estimate.per_gpu.total_bytes;
    if (estimate.serving) {
        const ServingMemory& serving = *estimate.serving;
        estimate.fits = estimate.fits && serving.fits;
        estimate.headroom_fraction = 1.0 - serving.budget_bytes / gpu.memory_bytes;
        estimate.batch = resolved.batch;
        estimate.context_tokens = resolved.context_tokens;
        estimate.max_batch = serving_concurrency(serving, resolved.context_tokens);
        const long long blocks_each = serving.kv_cache_blocks / std::max(resolved.batch, 1);
        long long context = blocks_each * serving.block_size;
        if (workload.model.max_context > 0) {
            context = std::min<long long>(context, workload.model.max_context);
        }
        estimate.max_context_tokens =
            serving.fits ? static_cast<int>(std::min<long long>(context, max_search_context)) : 0;
        if (!serving.fits) {
            estimate.notes.push_back(fmt::format("{} would not start: {}", to_string(serving.engine), serving.refusal));
        }
        if (estimate.max_batch == serving.max_num_seqs) {
            estimate.notes.push_back(fmt::format("concurrency capped by max_num_seqs {}", serving.max_num_seqs));
        }
        return estimate;
    }
    if (workload.is_training()) {
        estimate.micro_batch = resolved.micro_batch;
        estimate.max_micro_batch = largest_fitting(max_search_batch, [&](int micro_batch) {
            Resolved probe = resolved;
            probe.micro_batch = micro_batch;
            return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
        });
        if (estimate.max_micro_batch == max_search_batch) {
            estimate.notes.push_back(
                fmt::format("the largest micro-batch reached the search limit of {}", max_search_batch));
        }
    } else {
        estimate.batch = resolved.batch;
        estimate.context_tokens = resolved.context_tokens;
        estimate.max_batch = largest_fitting(max_search_batch, [&](int batch) {
            Resolved probe = resolved;
            probe.batch = batch;
            return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
        });
        if (estimate.max_batch == max_search_batch) {
            estimate.notes.push_back(fmt::format("the largest batch reached the search limit of {}", max_search_batch));
        }
        if (workload.model.is_transformer()) {
            const int context_limit = workload.model.max_context > 0 ? workload.model.max_context : max_search_context;
            estimate.max_context_tokens = largest_fitting(context_limit, [&](int tokens) {
                Resolved probe = resolved;
                probe.context_tokens = tokens;
                return compute(workload, gpu, probe, nullptr).total_bytes <= usable;
            });
            if (estimate.max_context_tokens == context_limit) {
                estimate.notes.push_back(
                    fmt::format("the largest context reached {} tokens, {}", context_limit,
                                workload.model.max_context > 0 ? "the model's maximum" : "the search limit"));
            }
        }
    }
    if (estimate.headroom_fraction > 0) {
        estimate.notes.push_back(fmt::format("fits means total ≤ {:.0f} % of capacity ({} free required)",
                                             (1 - estimate.headroom_fraction) * 100,
                                             format_percent(estimate.headroom_fraction)));
    }
    return estimate;
}

}  // namespace gpusel
