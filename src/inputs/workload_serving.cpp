// The inference section of a workload file and the serving engine of its runtime: tokens in
// and out, batch, tensor parallelism, request rate, diffusion steps and the SLO; which engine
// serves a decoder and that engine's knobs; the inference task a workload's model implies.
// Every default applied is recorded as an Assumption (docs/workload.md).

#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/units.hpp"
#include "inputs/length_distribution.hpp"
#include "inputs/workload_reader.hpp"
#include "io/csv_reader.hpp"

namespace gpusel {

using namespace inputs_detail;

namespace {

constexpr std::pair<Engine, std::string_view> engine_names[] = {
    {Engine::vllm, "vllm"},           {Engine::sglang, "sglang"},           {Engine::tensorrt_llm, "tensorrt-llm"},
    {Engine::llama_cpp, "llama.cpp"}, {Engine::hf_generate, "hf-generate"}, {Engine::automatic, "auto"}};

constexpr std::pair<SpeculativeMethod, std::string_view> speculative_names[] = {
    {SpeculativeMethod::none, "none"}, {SpeculativeMethod::mtp, "mtp"}, {SpeculativeMethod::eagle, "eagle"}};

// DeepSeek-V3 technical report (arXiv:2412.19437, §5.4.3): the multi-token-prediction module's
// second-token acceptance rate is 85-90 % across generation topics; the low end is the default.
constexpr double mtp_default_acceptance = 0.85;
// TensorRT-LLM's DeepSeek-R1 MTP recipes (num_nextn_predict_layers: 3), as SemiAnalysis
// InferenceX launches them (benchmarks/dsr1_fp8_h200_trt_mtp.sh).
constexpr int default_draft_tokens = 3;

// Request-length distributions (docs/workload.md, "Request lengths"). The log-normal of
// `{p50, p90}` is cut into these 8 bins by quantile; each bin stands for its requests at its
// conditional median, the quantile halfway through it. Medians rather than means: the bins
// around 0.50 and 0.90 are centred on them, so the bins reproduce p50 and p90 exactly, and a
// median does not chase the log-normal's unbounded tail, which a model's context cuts off
// anyway (the bins' mean is therefore below the untruncated exp(mu + sigma^2/2)).
constexpr double lognormal_bin_edges[] = {0, 0.15, 0.30, 0.45, 0.55, 0.70, 0.85, 0.95, 1};
// Standard normal quantiles z(q) at the edges and midpoints above (Python 3.12
// statistics.NormalDist().inv_cdf, Dec 2026); z(0.9) = 1.28155 is the 1.2816 of sigma.
constexpr std::pair<double, double> normal_quantiles[] = {{0.075, -1.4395314709384557},
                                                          {0.15, -1.0364333894937894},
                                                          {0.225, -0.7554150263604693},
                                                          {0.30, -0.5244005127080407},
                                                          {0.375, -0.31863936396437514},
                                                          {0.45, -0.125661346855074},
                                                          {0.50, 0.0},
                                                          {0.55, 0.12566134685507413},
                                                          {0.625, 0.31863936396437514},
                                                          {0.70, 0.5244005127080407},
                                                          {0.775, 0.7554150263604693},
                                                          {0.85, 1.0364333894937894},
                                                          {0.90, 1.2815515655446008},
                                                          {0.95, 1.6448536269514715},
                                                          {0.975, 1.9599639845400536}};
constexpr double z90 = 1.2815515655446008;
// Histogram shares must sum to 1 within this (a typo, not rounding, is what it catches).
constexpr double share_sum_tolerance = 1e-6;

double z_at(double quantile) {
    for (const auto& [q, z] : normal_quantiles) {
        if (std::abs(q - quantile) < 1e-9) {
            return z;
        }
    }
    return 0;  // only the table's quantiles are asked for
}

int rounded_tokens(double tokens) {
    return static_cast<int>(std::clamp(std::lround(tokens), 1L, long{1 << 24}));
}

constexpr std::size_t lognormal_bin_count = std::size(lognormal_bin_edges) - 1;

// The log-normal's length at `quantile` (one of the table's).
double lognormal_tokens(int p50, int p90, double quantile) {
    const double mu = std::log(p50);
    const double sigma = (std::log(p90) - mu) / z90;
    return std::exp(mu + sigma * z_at(quantile));
}

LengthDistribution lognormal_bins(int p50, int p90) {
    LengthDistribution distribution;
    distribution.p50_tokens = p50;
    distribution.p90_tokens = p90;
    for (std::size_t bin = 0; bin < lognormal_bin_count; ++bin) {
        const double low = lognormal_bin_edges[bin];
        const double high = lognormal_bin_edges[bin + 1];
        distribution.bins.push_back({rounded_tokens(lognormal_tokens(p50, p90, (low + high) / 2)), high - low});
    }
    return distribution;
}

// A whole number of tokens from one scalar of a histogram pair; false with a diagnostic.
bool histogram_tokens(const YamlNode& node, const std::string& path, Diagnostics& diagnostics, int& into) {
    double value = 0;
    if (!read_number(node, path, diagnostics, value, UnitKind::plain, 1, 1 << 24)) {
        return false;
    }
    if (value != std::floor(value)) {
        diagnostics.error(node.position, path, fmt::format("'{}' is not a whole number of tokens", node.scalar));
        return false;
    }
    into = static_cast<int>(value);
    return true;
}

// `{histogram: [[tokens, share], ...]}`: sorted by tokens; a length given twice, a share outside
// (0, 1] or shares that do not sum to 1 are errors.
bool read_histogram(const YamlNode& node, const std::string& path, Diagnostics& diagnostics, LengthDistribution& into) {
    if (node.kind != YamlNode::Kind::sequence || node.items.empty()) {
        diagnostics.error(node.position, path,
                          fmt::format("expected a list of [tokens, share] pairs, e.g. [[200, 0.7], [4000, 0.3]], "
                                      "got {}",
                                      node.kind == YamlNode::Kind::sequence ? "an empty list" : kind_name(node.kind)));
        return false;
    }
    LengthDistribution distribution;
    bool valid = true;
    double sum = 0;
    for (std::size_t index = 0; index < node.items.size(); ++index) {
        const YamlNode& pair = node.items[index];
        const std::string at = fmt::format("{}[{}]", path, index);
        if (pair.kind != YamlNode::Kind::sequence || pair.items.size() != 2) {
            diagnostics.error(pair.position, at, "expected [tokens, share], e.g. [512, 0.25]");
            valid = false;
            continue;
        }
        LengthDistribution::Bin bin;
        const bool tokens_read = histogram_tokens(pair.items[0], at + "[0]", diagnostics, bin.tokens);
        const bool share_read =
            read_number(pair.items[1], at + "[1]", diagnostics, bin.share, UnitKind::plain, 0, 1, true);
        if (!tokens_read || !share_read) {
            valid = false;
            continue;
        }
        for (const LengthDistribution::Bin& other : distribution.bins) {
            if (other.tokens == bin.tokens) {
                diagnostics.error(pair.position, at,
                                  fmt::format("{} tokens appear twice; add their shares into one pair", bin.tokens));
                valid = false;
            }
        }
        sum += bin.share;
        distribution.bins.push_back(bin);
    }
    if (valid && std::abs(sum - 1) > share_sum_tolerance) {
        diagnostics.error(node.position, path,
                          fmt::format("the shares sum to {:.6g}, not 1; make them fractions of all requests", sum));
        valid = false;
    }
    if (!valid) {
        return false;
    }
    std::sort(distribution.bins.begin(), distribution.bins.end(),
              [](const LengthDistribution::Bin& a, const LengthDistribution::Bin& b) { return a.tokens < b.tokens; });
    into = std::move(distribution);
    return true;
}

// `{p50: 300, p90: 4000}` or `{histogram: [...]}` into `into`; false when it was invalid (reported).
bool read_length_distribution(const YamlNode& node, const std::string& path, Diagnostics& diagnostics,
                              LengthDistribution& into) {
    MapReader reader(node, path, diagnostics);
    const bool percentiles = reader.has("p50") || reader.has("p90");
    const YamlNode* histogram = reader.node("histogram");
    bool valid = true;
    if (percentiles && histogram != nullptr) {
        reader.error("histogram", "give {p50, p90} (a log-normal) or histogram, not both");
        valid = false;
    }
    if (histogram != nullptr) {
        valid = read_histogram(*histogram, reader.child_path("histogram"), diagnostics, into) && valid;
    } else {
        int p50 = 0;
        int p90 = 0;
        reader.require("p50");
        reader.require("p90");
        const bool p50_read = reader.integer("p50", p50, 1, 1 << 24);
        const bool p90_read = reader.integer("p90", p90, 1, 1 << 24);
        if (p50_read && p90_read && p90 < p50) {
            reader.error("p90", fmt::format("p90 ({}) is below p50 ({}): 90 % of requests are at most p90 tokens, so "
                                            "it is at least the median; swap them?",
                                            p90, p50));
            valid = false;
        }
        if (p50_read && p90_read && valid) {
            into = lognormal_bins(p50, p90);
        } else {
            valid = false;
        }
    }
    reader.finish();
    return valid;
}

}  // namespace

double LengthDistribution::mean_tokens() const {
    return std::accumulate(bins.begin(), bins.end(), 0.0,
                           [](double sum, const Bin& bin) { return sum + bin.share * bin.tokens; });
}

int length_bin_upper_tokens(const LengthDistribution& distribution, std::size_t bin) {
    const int tokens = distribution.bins[bin].tokens;
    const bool lognormal = distribution.p50_tokens > 0 && distribution.bins.size() == lognormal_bin_count;
    if (!lognormal || bin + 1 >= distribution.bins.size()) {
        return tokens;
    }
    const double upper =
        lognormal_tokens(distribution.p50_tokens, distribution.p90_tokens, lognormal_bin_edges[bin + 1]);
    return std::max(tokens, rounded_tokens(upper));
}

int longest_request_tokens(const InferenceSpec& inference) {
    const int input =
        inference.input_length.given() ? inference.input_length.bins.back().tokens : inference.input_tokens;
    const int output =
        inference.output_length.given() ? inference.output_length.bins.back().tokens : inference.output_tokens;
    return input + output;
}

int LengthDistribution::quantile_tokens(double q) const {
    double cumulative = 0;
    for (const Bin& bin : bins) {
        cumulative += bin.share;
        if (cumulative >= q - 1e-9) {
            return bin.tokens;
        }
    }
    return bins.empty() ? 0 : bins.back().tokens;
}

std::string_view to_string(SpeculativeMethod method) {
    return name_of(speculative_names, method);
}

std::string InferenceSpec::load_text() const {
    return concurrency > 0 ? fmt::format("{} client{}", concurrency, concurrency == 1 ? "" : "s")
                           : fmt::format("{:g} req/s", requests_per_s);
}

double SpeculativeSpec::tokens_per_step() const {
    if (!enabled()) {
        return 1;
    }
    double tokens = 1;
    double accepted = 1;
    for (int draft = 0; draft < draft_tokens; ++draft) {
        accepted *= acceptance;
        tokens += accepted;
    }
    return tokens;
}

std::string_view to_string(Engine engine) {
    return name_of(engine_names, engine);
}
bool is_paged_engine(Engine engine) {
    return engine == Engine::vllm || engine == Engine::sglang || engine == Engine::tensorrt_llm;
}

std::string_view to_string(InferenceTask task) {
    switch (task) {
        case InferenceTask::generation:
            return "generation";
        case InferenceTask::scoring:
            return "scoring";
        case InferenceTask::encoder:
            return "encoder";
        case InferenceTask::diffusion:
            return "diffusion";
        case InferenceTask::vision:
            return "vision";
        case InferenceTask::recommendation:
            return "recommendation";
    }
    return "generation";
}

InferenceTask Workload::task() const {
    switch (model.family) {
        case ModelFamily::diffusion:
            return InferenceTask::diffusion;
        case ModelFamily::cnn:
        case ModelFamily::vit:
            return InferenceTask::vision;
        case ModelFamily::encoder:
            return InferenceTask::encoder;
        case ModelFamily::other:
            return model.is_transformer() ? InferenceTask::encoder : InferenceTask::recommendation;
        default:
            break;
    }
    if (!model.is_transformer()) {
        return InferenceTask::recommendation;
    }
    return inference.output_tokens > 0 ? InferenceTask::generation : InferenceTask::scoring;
}

namespace inputs_detail {

// runtime.engine and its knobs. LLM serving (a decoder served) defaults to vLLM, the engine
// most deployments run; llama.cpp as framework means the llama.cpp engine.
void WorkloadReader::read_engine(MapReader& reader) {
    RuntimeSpec& runtime = m_workload.runtime;
    const ModelFamily family = m_workload.model.family;
    const bool llm_serving = m_workload.kind == WorkloadKind::inference && m_workload.model.is_transformer() &&
                             (family == ModelFamily::decoder || family == ModelFamily::moe_decoder);
    reader.choice("engine", runtime.engine, engine_names);
    if (runtime.engine == Engine::automatic && llm_serving) {
        runtime.engine = runtime.framework == Framework::llama_cpp ? Engine::llama_cpp : Engine::vllm;
        assume(reader.child_path("engine"), to_string(runtime.engine), "LLM serving default");
    }
    if (runtime.engine == Engine::automatic && m_workload.kind == WorkloadKind::inference && !llm_serving &&
        !reader.has("engine")) {
        // Encoders, CNNs, recommenders and diffusion pipelines are served compiled; the perf
        // model's optimized stack (docs/perf-model.md) stands for these engines.
        assume(reader.child_path("engine"), "auto",
               "an optimised engine: TensorRT, ONNX Runtime or torch.compile; hf-generate = PyTorch eager");
    }
    if (runtime.engine == Engine::llama_cpp && runtime.framework != Framework::llama_cpp) {
        runtime.framework = Framework::llama_cpp;  // the engine is the framework: static buffers
        runtime.allocator = Allocator::static_buffers;
    }
    const bool paged = is_paged_engine(runtime.engine);
    for (const char* key : {"gpu_memory_utilization", "max_model_len", "max_num_seqs", "max_num_batched_tokens",
                            "block_size", "cuda_graphs"}) {
        if (reader.has(key) && !paged) {
            reader.error(key, fmt::format("runtime.{} is a knob of a paged serving engine (vllm, sglang, "
                                          "tensorrt-llm); runtime.engine is {}",
                                          key, to_string(runtime.engine)));
        }
    }
    if (reader.has("scheduler_recv_interval") && runtime.engine != Engine::sglang) {
        reader.error("scheduler_recv_interval",
                     fmt::format("runtime.scheduler_recv_interval is SGLang's --scheduler-recv-interval; "
                                 "runtime.engine is {}",
                                 to_string(runtime.engine)));
    }
    if (!paged) {
        return;
    }
    reader.number("gpu_memory_utilization", runtime.gpu_memory_utilization, UnitKind::plain, 0.05, 1.0);
    reader.integer("max_model_len", runtime.max_model_len, 1, 1 << 24);
    reader.integer("max_num_seqs", runtime.max_num_seqs, 1, 1 << 20);
    reader.integer("max_num_batched_tokens", runtime.max_num_batched_tokens, 1, 1 << 24);
    reader.integer("block_size", runtime.block_size, 1, 4096);
    reader.boolean("cuda_graphs", runtime.cuda_graphs);
    if (const YamlNode* node = reader.node("speculative")) {
        read_speculative(*node, reader.child_path("speculative"));
    }
    reader.integer("scheduler_recv_interval", runtime.scheduler_recv_interval, 1, 1000);
}

// runtime.speculative: {method, draft_tokens, acceptance}. MTP has sourced defaults; an EAGLE
// head's acceptance depends on how it was trained, so it must be given.
void WorkloadReader::read_speculative(const YamlNode& node, const std::string& path) {
    MapReader reader(node, path, m_diagnostics);
    SpeculativeSpec& speculative = m_workload.runtime.speculative;
    reader.require("method");
    reader.choice("method", speculative.method, speculative_names);
    if (speculative.method == SpeculativeMethod::none) {
        reader.finish();
        return;
    }
    speculative.draft_tokens = default_draft_tokens;
    reader.integer("draft_tokens", speculative.draft_tokens, 1, 16);
    if (!reader.has("draft_tokens")) {
        assume(reader.child_path("draft_tokens"), fmt::format("{}", default_draft_tokens),
               "TensorRT-LLM's DeepSeek-R1 MTP recipe (num_nextn_predict_layers 3)");
    }
    if (reader.has("acceptance")) {
        reader.number("acceptance", speculative.acceptance, UnitKind::plain, 0.01, 0.99);
    } else if (speculative.method == SpeculativeMethod::mtp) {
        speculative.acceptance = mtp_default_acceptance;
        assume(reader.child_path("acceptance"), fmt::format("{:g}", mtp_default_acceptance),
               "DeepSeek-V3 report §5.4.3: 85-90 % of second tokens accepted");
    } else {
        reader.error("method", fmt::format("runtime.speculative.acceptance is required for {}: the acceptance rate "
                                           "of a draft head depends on its training (measure it: the engine logs it)",
                                           to_string(speculative.method)));
    }
    reader.finish();
}

// Denoising steps and classifier-free guidance: defaults of diffusers'
// StableDiffusionXLPipeline (num_inference_steps 50, guidance_scale 5.0 > 1, so CFG runs).
template <typename Defaulted>
void WorkloadReader::read_diffusion(MapReader& reader, const Defaulted& defaulted) {
    InferenceSpec& inference = m_workload.inference;
    const bool diffusion = m_workload.model.family == ModelFamily::diffusion;
    for (const std::string_view key : {"steps", "guidance"}) {
        if (reader.node(key) != nullptr && !diffusion) {
            reader.error(key, fmt::format("inference.{} applies to diffusion models; {} is a {} model", key,
                                          m_workload.model_label, to_string(m_workload.model.family)));
        }
    }
    if (!diffusion) {
        return;
    }
    reader.integer("steps", inference.denoising_steps, 1, 10000);
    defaulted("steps", "50");
    reader.boolean("guidance", inference.classifier_free_guidance);
    defaulted("guidance", "true");
}

// The load: inference.load (hour by hour), requests_per_s (open loop) or concurrency (closed loop).
template <typename Defaulted>
void WorkloadReader::read_rate(MapReader& reader, const Defaulted& defaulted) {
    InferenceSpec& inference = m_workload.inference;
    // inference.load sets the rate hour by hour; the single rate is derived from its peak
    // (derive_peak_load), so a second rate would contradict it.
    if (const YamlNode* load = reader.node("load")) {
        for (const std::string_view key : {"requests_per_s", "concurrency"}) {
            if (reader.has(key)) {
                reader.error(key, fmt::format("inference.load sets the load hour by hour (the plan sizes for its "
                                              "peak); remove inference.{}",
                                              key));
            }
        }
        read_load(*load, reader.child_path("load"));
    }
    reader.number("requests_per_s", inference.requests_per_s, UnitKind::plain, 0, 1e9, true);
    reader.integer("concurrency", inference.concurrency, 1, 1 << 24);
    if (reader.has("concurrency")) {
        if (reader.has("requests_per_s")) {
            reader.error("concurrency",
                         "give requests_per_s (an open-loop arrival rate) or concurrency (closed-loop "
                         "clients, as a benchmark runs them), not both");
        } else if (m_workload.task() != InferenceTask::generation) {
            reader.error("concurrency", fmt::format("closed-loop concurrency is modelled for token generation; a {} "
                                                    "workload takes requests_per_s",
                                                    to_string(m_workload.task())));
        }
        inference.requests_per_s = 0;
    } else if (!reader.has("load")) {
        defaulted("requests_per_s", "1");
    }
}

void WorkloadReader::read_inference(const YamlNode& node, const std::string& path) {
    MapReader reader(node, path, m_diagnostics);
    InferenceSpec& inference = m_workload.inference;
    const auto defaulted = [&](std::string_view key, std::string_view value) {
        if (!reader.has(key)) {
            assume(reader.child_path(key), value);
        }
    };
    const ModelSpec& model = m_workload.model;
    // Encoders (embedding, classification, reranking) produce no tokens: their default is 0.
    // A decoder with output_tokens 0 is prefill-only scoring.
    const bool generates = model.is_transformer() && model.family != ModelFamily::encoder;
    inference.output_tokens = generates ? 256 : 0;
    // A length, or its distribution (`{p50, p90}` or `{histogram}`): every single-type estimate
    // runs at the distribution's mean, printed as a derived assumption; plan/mix.cpp reads the bins.
    const auto read_length = [&](std::string_view key, int& tokens, LengthDistribution& distribution, int min) {
        if (const YamlNode* value = reader.node(key); value != nullptr && value->kind == YamlNode::Kind::mapping) {
            if (read_length_distribution(*value, reader.child_path(key), m_diagnostics, distribution)) {
                tokens = rounded_tokens(distribution.mean_tokens());
                assume(reader.child_path(key), fmt::format("{}", tokens),
                       distribution.p50_tokens > 0
                           ? fmt::format("the mean of {} log-normal bins through p50 {} and p90 {}; the single-type "
                                         "estimates run at it",
                                         distribution.bins.size(), distribution.p50_tokens, distribution.p90_tokens)
                           : fmt::format("the mean of the {}-bin histogram; the single-type estimates run at it",
                                         distribution.bins.size()));
            }
            return;
        }
        reader.integer(key, tokens, min, 1 << 24);
    };
    read_length("input_tokens", inference.input_tokens, inference.input_length, 1);
    if (model.is_transformer()) {
        defaulted("input_tokens", "512");  // CNNs, recommenders and diffusion read no tokens
    }
    read_length("output_tokens", inference.output_tokens, inference.output_length, 0);
    if (model.is_transformer()) {
        defaulted("output_tokens", generates ? "256" : "0");
    }
    if (!generates && inference.output_tokens > 0 && model.is_transformer()) {
        // An encoder reads its input in one pass: nothing to generate, whatever the file says.
        assume(
            reader.child_path("output_tokens"), "0",
            fmt::format("{} models generate no tokens; {} ignored", to_string(model.family), inference.output_tokens));
        inference.output_tokens = 0;
        inference.output_length = {};
    }
    // The model's position table bounds a request (BERT: 512 positions); with a distribution,
    // its longest bin must fit, not only the mean.
    const int longest_input =
        inference.input_length.given() ? inference.input_length.bins.back().tokens : inference.input_tokens;
    const int longest_output =
        inference.output_length.given() ? inference.output_length.bins.back().tokens : inference.output_tokens;
    if (model.max_context > 0 && longest_input + longest_output > model.max_context) {
        const bool distribution = inference.input_length.given() || inference.output_length.given();
        reader.error(reader.has("input_tokens") ? "input_tokens" : "output_tokens",
                     distribution
                         ? fmt::format("the longest bins, {} input + {} output tokens = {}, exceed the model's {} "
                                       "positions (max_context); lower p90 or give a histogram that stops within it",
                                       longest_input, longest_output, longest_input + longest_output, model.max_context)
                         : fmt::format("input_tokens + output_tokens = {} exceeds the model's {} positions "
                                       "(max_context)",
                                       longest_input + longest_output, model.max_context));
    }
    if (const YamlNode* batch = reader.node("batch"); batch != nullptr && batch->scalar == "auto") {
        inference.batch = 0;
    } else {
        reader.integer("batch", inference.batch, 1, 1 << 20);
    }
    // The tensor-parallel degree of one replica, as deployed or measured; auto = the fewest GPUs that hold it.
    if (const YamlNode* tp = reader.node("tensor_parallel"); tp != nullptr && tp->scalar == "auto") {
        inference.tensor_parallel = 0;
    } else {
        reader.integer("tensor_parallel", inference.tensor_parallel, 1, 1024);
    }
    if (const YamlNode* ep = reader.node("expert_parallel"); ep != nullptr && ep->scalar == "auto") {
        inference.expert_parallel = 0;
    } else {
        reader.integer("expert_parallel", inference.expert_parallel, 1, 1024);
    }
    // Experts are spread over one replica's tensor-parallel GPUs (docs/perf-model.md).
    if (inference.expert_parallel > 1 && !model.is_moe()) {
        reader.error("expert_parallel", fmt::format("{} has no routed experts to spread", model.name));
    } else if (inference.expert_parallel > 1 && inference.tensor_parallel > 0 &&
               inference.expert_parallel > inference.tensor_parallel) {
        reader.error("expert_parallel",
                     fmt::format("{} exceeds tensor_parallel {}: the experts are spread over one replica's GPUs",
                                 inference.expert_parallel, inference.tensor_parallel));
    }
    reader.boolean("dp_attention", inference.dp_attention);
    read_rate(reader, defaulted);
    read_diffusion(reader, defaulted);
    if (const YamlNode* slo = reader.node("slo")) {
        MapReader slo_reader(*slo, reader.child_path("slo"), m_diagnostics);
        slo_reader.number("ttft", inference.slo.ttft_seconds, UnitKind::seconds, 0, 86400, true);
        slo_reader.number("tpot", inference.slo.tpot_seconds, UnitKind::seconds, 0, 3600, true);
        slo_reader.number("e2e", inference.slo.e2e_seconds, UnitKind::seconds, 0, 86400, true);
        slo_reader.number("percentile", inference.slo.percentile, UnitKind::plain, 50, 99.99);
        if (!slo_reader.has("percentile")) {
            assume(slo_reader.child_path("percentile"), "99");
        }
        if (inference.slo.tpot_seconds > 0 && m_workload.task() != InferenceTask::generation) {
            // Nothing is generated, so there is no time per output token to hold.
            assume(slo_reader.child_path("tpot"), "ignored",
                   fmt::format("a {} workload generates no tokens", to_string(m_workload.task())));
            inference.slo.tpot_seconds = 0;
        }
        slo_reader.finish();
    }
    reader.finish();
}

// inference.load: {profile: [shares], peak_rps, growth} or {trace: file.csv, growth}
// (docs/workload.md, "Load over the day").
void WorkloadReader::read_load(const YamlNode& node, const std::string& path) {
    MapReader reader(node, path, m_diagnostics);
    LoadProfile& load = m_workload.inference.load;
    const YamlNode* profile = reader.node("profile");
    std::string trace;
    const bool has_trace = reader.text("trace", trace);
    if (profile != nullptr && reader.has("trace")) {
        reader.error("trace",
                     "give profile (hourly shares with peak_rps) or trace (a CSV of requests per hour), "
                     "not both");
    } else if (profile == nullptr && !reader.has("trace")) {
        reader.error("profile",
                     "inference.load needs profile: [24 or 168 hourly shares of the peak] with "
                     "peak_rps, or trace: a CSV of requests per hour (hour,requests)");
    }
    std::vector<double> shares;
    if (profile != nullptr && profile->kind != YamlNode::Kind::sequence) {
        reader.error("profile", fmt::format("{} where a list of 24 (a day) or 168 (a week from Monday 00:00) hourly "
                                            "shares of the peak was expected",
                                            kind_name(profile->kind)));
    } else if (profile != nullptr && profile->items.size() != 24 && profile->items.size() != 168) {
        reader.error("profile", fmt::format("{} shares; give 24 (one per hour of a day) or 168 (one per hour of a "
                                            "week from Monday 00:00)",
                                            profile->items.size()));
    } else if (profile != nullptr) {
        bool valid = true;
        for (std::size_t hour = 0; hour < profile->items.size(); ++hour) {
            double share = 0;
            valid = read_number(profile->items[hour], fmt::format("{}[{}]", reader.child_path("profile"), hour),
                                m_diagnostics, share, UnitKind::plain, 0, 1e9) &&
                    valid;
            shares.push_back(share);
        }
        if (valid) {
            load.hourly_shares = shares;
        }
    }
    if (profile != nullptr) {
        reader.require("peak_rps");
        reader.number("peak_rps", load.peak_requests_per_s, UnitKind::plain, 0, 1e9, true);
    }
    if (profile == nullptr && reader.node("peak_rps") != nullptr && reader.has("trace")) {
        reader.error("peak_rps", "the trace sets the peak (its busiest hour); remove peak_rps");
    }
    if (has_trace && profile == nullptr && read_load_trace(reader, trace)) {
        load.trace_path = trace;
    }
    // A profile written in any unit (requests, per cent) is a shape: the busiest hour is the peak.
    const double largest =
        load.hourly_shares.empty() ? 0.0 : *std::max_element(load.hourly_shares.begin(), load.hourly_shares.end());
    if (!load.hourly_shares.empty() && largest <= 0) {
        reader.error("profile", "every share is 0: no load to serve (the busiest hour is 1, the peak)");
        load.hourly_shares.clear();
    } else if (profile != nullptr && !load.hourly_shares.empty() && largest != 1) {
        for (double& share : load.hourly_shares) {
            share /= largest;
        }
        assume(reader.child_path("profile"), fmt::format("each share / {:g}", largest),
               "normalised so that the busiest hour is 1 (peak_rps)");
    }
    if (const YamlNode* growth = reader.node("growth")) {
        std::string text = growth->scalar;
        for (const std::string_view unit : {"/month", "/mo"}) {
            if (text.size() > unit.size() && text.ends_with(unit)) {
                text.resize(text.size() - unit.size());
                break;
            }
        }
        const ParsedNumber parsed = growth->kind == YamlNode::Kind::scalar && text.find('/') == std::string::npos
                                        ? parse_quantity(text, UnitKind::fraction)
                                        : ParsedNumber{};
        if (!parsed.value) {
            reader.error("growth", fmt::format("'{}' is not a monthly growth: write 5%/mo (or 0.05, per month; "
                                               "-3%/mo for a load that shrinks)",
                                               growth->scalar));
        } else if (*parsed.value < -0.5 || *parsed.value > 1) {
            reader.error("growth", fmt::format("{:g} %/mo is outside -50 %/mo to 100 %/mo", *parsed.value * 100));
        } else {
            load.growth_per_month = *parsed.value;
        }
    } else if (load.given()) {
        assume(reader.child_path("growth"), "0%/mo", "default: the first month's load over the whole horizon");
    }
    reader.finish();
}

// A CSV of requests per hour (`hour,requests`, one row per hour from 0): 24 or 168 rows as they
// are, a longer trace folded onto a week (168 × n rows) or a day (24 × n rows) with the busiest of
// its copies in each hour, since the SLO must hold on the busiest day, not the average one.
bool WorkloadReader::read_load_trace(MapReader& reader, const std::string& file) {
    const std::filesystem::path path = (m_base / file).lexically_normal();
    std::string text;
    std::vector<CsvRecord> records;
    try {
        text = read_input_file(path.string());
        records = parse_csv_records(text, path.string());
    } catch (const InputError& error) {
        reader.error("trace",
                     error.diagnostics().empty() ? std::string(error.what()) : error.diagnostics().front().message);
        return false;
    }
    const auto at = [&](const CsvField& field) {
        return fmt::format("{}:{}:{}", path.string(), field.position.line, field.position.column);
    };
    if (records.empty() || records.front().fields.size() != 2 || records.front().fields[0].text != "hour" ||
        records.front().fields[1].text != "requests") {
        reader.error("trace",
                     fmt::format("{}:1:1: the header must be hour,requests (requests in each hour)", path.string()));
        return false;
    }
    std::vector<double> requests;
    for (std::size_t row = 1; row < records.size(); ++row) {
        const CsvRecord& record = records[row];
        if (record.fields.size() != 2) {
            reader.error("trace", fmt::format("{}:{}:1: {} fields; a row is hour,requests", path.string(), record.line,
                                              record.fields.size()));
            return false;
        }
        const ParsedNumber hour = parse_integer(record.fields[0].text);
        if (!hour.value || *hour.value != static_cast<double>(row - 1)) {
            reader.error("trace", fmt::format("{}: hour '{}'; the rows must count the hours 0, 1, 2, ... (this is "
                                              "hour {})",
                                              at(record.fields[0]), record.fields[0].text, row - 1));
            return false;
        }
        const ParsedNumber count = parse_quantity(record.fields[1].text, UnitKind::plain);
        if (!count.value || *count.value < 0) {
            reader.error("trace", fmt::format("{}: requests '{}'; a count of requests in the hour, 0 or more",
                                              at(record.fields[1]), record.fields[1].text));
            return false;
        }
        requests.push_back(*count.value);
    }
    const std::size_t rows = requests.size();
    const std::size_t period = rows % 168 == 0 ? 168 : 24;
    if (rows == 0 || rows % 24 != 0) {
        reader.error("trace", fmt::format("{}: {} hours; give whole days (24 rows, 168 for a week, or more days to "
                                          "fold onto a day or a week)",
                                          path.string(), rows));
        return false;
    }
    std::vector<double> busiest(period, 0.0);
    for (std::size_t hour = 0; hour < rows; ++hour) {
        busiest[hour % period] = std::max(busiest[hour % period], requests[hour]);
    }
    const double peak = *std::max_element(busiest.begin(), busiest.end());
    if (peak <= 0) {
        reader.error("trace", fmt::format("{}: every hour has 0 requests: no load to serve", path.string()));
        return false;
    }
    LoadProfile& load = m_workload.inference.load;
    load.peak_requests_per_s = peak / seconds_per_hour;
    load.hourly_shares.clear();
    for (const double hour : busiest) {
        load.hourly_shares.push_back(hour / peak);
    }
    if (rows > period) {
        assume(reader.child_path("trace"),
               fmt::format("{} hours folded onto {}", rows, period == 168 ? "a week" : "a day"),
               "the busiest of the copies in each hour: the SLO must hold on the busiest day");
    }
    return true;
}

// The single-type pick is sized for the largest hourly load of the horizon, so that owning it
// all meets the SLO in every hour of every month (plan/fleet.hpp prices the hours).
void WorkloadReader::derive_peak_load() {
    InferenceSpec& inference = m_workload.inference;
    if (!inference.load.given() || inference.load.peak_requests_per_s <= 0) {
        return;
    }
    const LoadProfile& load = inference.load;
    const int months = std::max(1, static_cast<int>(std::ceil(m_workload.deployment.horizon_months - 1e-9)));
    const double growth = std::pow(1 + load.growth_per_month, months - 1);
    inference.requests_per_s = load.peak_requests_per_s * std::max(1.0, growth);
    assume(m_prefix.empty() ? std::string("inference.requests_per_s") : m_prefix + ".inference.requests_per_s",
           fmt::format("{:g}", inference.requests_per_s),
           growth > 1 ? fmt::format("the peak of inference.load in month {}: {:g} req/s × {:g}^{}", months,
                                    load.peak_requests_per_s, 1 + load.growth_per_month, months - 1)
                      : "the peak of inference.load");
    inference.concurrency = 0;
}
}  // namespace inputs_detail

}  // namespace gpusel
