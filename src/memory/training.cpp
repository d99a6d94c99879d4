// Training terms of the memory estimator: the weights a rank stores (master copies, quantized
// bases under QLoRA, autocast copies), the trainable parameters, gradients and their buckets,
// optimizer states and the optimizer step's temporaries, activations per layer (Korthikanti et
// al.) or per sample, the logits, and the calibration fit to measured peaks. Formulas and
// sources: docs/memory-model.md (each term names its source).

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "memory/internal.hpp"
#include "memory/terms.hpp"

namespace gpusel::memory_detail {

namespace {

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

// What every term of a training estimate reads: the workload, the precision and recompute level
// it runs at (never the workload's fields: the query may choose others), the layout and how it
// shards.
struct TrainingSetup {
    TrainingSetup(const Workload& workload_, const Choices& choices, const Layout& layout_)
        : workload(workload_),
          model(workload_.model),
          training(workload_.training),
          precision(choices.precision),
          checkpointing(choices.checkpointing),
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
          compute_bytes(activation_element_bytes(choices.precision)) {}

    const Workload& workload;
    const ModelSpec& model;
    const TrainingSpec& training;
    const Precision precision;
    const Checkpointing checkpointing;
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
                to_string(setup.precision));
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
                      gradient_element, gradient_element != trainable.element_bytes ? " (fp32 gradient buffers)" : "",
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
        notes.add("activations: {} per sample (preset, fp32{}) × micro-batch {}", gb(model.activation_bytes_per_sample),
                  scale != 1.0 ? ", halved for 16-bit" : "", micro_batch);
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
    if (setup.checkpointing == Checkpointing::full) {
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
    shape.selective_recompute = setup.checkpointing == Checkpointing::selective;
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
            to_string(setup.checkpointing), training.seq_len,
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

}  // namespace

TrainingResult training_terms(const Workload& workload, const Choices& choices, const GpuSpec& gpu,
                              const Layout& layout, int micro_batch, NoteList& notes) {
    const TrainingSetup setup(workload, choices, layout);
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

}  // namespace gpusel::memory_detail
