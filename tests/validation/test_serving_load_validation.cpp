// The serving performance model under closed-loop load against same-run cross-GPU measurements:
// SemiAnalysis InferenceX nightly sweeps of DeepSeek-R1-0528 (SGLang and TensorRT-LLM, FP8 and
// FP4, H200 to GB300 and MI300X to MI355X, 1k/1k, 1k/8k and 8k/1k, 1 to 512 clients), in
// tests/validation/serving_load/inferencex_dsr1.json (docs/reference/serving_load_measurements.md
// says how they were measured and selected). Each row is run through `gpusel perf` as a workload
// of `inference.concurrency` clients; printed per row and summarised:
//  - |error| of output tokens/s per GPU, median TPOT and median TTFT (median and 90th percentile);
//  - the error of the speed ratio between GPU types measured on the same date in the same group
//    (same framework, precision, lengths and concurrency): what a choice between GPUs rests on;
//  - in sample (the shipped factors) and out of sample: the factors of data/efficiency.yaml whose
//    fitted_on names these rows, and the draft acceptance of the benchmark's random prompts, are
//    refitted without one GPU type at a time and without one date at a time, and the held-out
//    rows predicted with them (a rule of a held-out GPU's family alone falls back to the engine's);
//  - the data's own repeatability: a configuration measured on several dates, each run against
//    the median of the others, which is as close as a model without the engine's version can be.
// Rows the model cannot run yet (disaggregated multi-node prefill/decode) are counted and named.
// The targets (median ≤ 10 %, p90 ≤ 25 %, same-run ratios ≤ 8 %) are printed beside
// today's figures; the assertions hold today's figures (support/held_bounds.hpp).

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/text.hpp"
#include "catalog/catalog.hpp"
#include "catalog/precision.hpp"
#include "inputs/efficiency.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "report/text_table.hpp"
#include "support/held_bounds.hpp"
#include "support/validation_cases.hpp"

namespace {

using namespace gpusel;
using gpusel::validation::golden_section_minimum;
using gpusel::validation::held_bound_percent;
using gpusel::validation::percentile_of;

const std::filesystem::path rows_file =
    std::filesystem::path(GPUSEL_SOURCE_DIR) / "tests/validation/serving_load/inferencex_dsr1.json";
// DeepSeek-R1-0528 has DeepSeek-V3's architecture (its config.json differs only in metadata).
const std::filesystem::path model_config =
    std::filesystem::path(GPUSEL_SOURCE_DIR) / "tests/data/hf/hf-config-deepseek-v3.json";

// Held bounds (support/held_bounds.hpp: today + 10 %, at least + 0.5 point; counts at today's).
// Today's figures are far from the targets: the bounds stop them getting worse while the MoE,
// MLA and engine terms are built (docs/perf-model.md, "Validation under load").
constexpr std::size_t held_predicted_rows = 199;  // today 199
constexpr std::size_t held_ratio_pairs = 119;     // today 119, in sample and in both folds
constexpr std::size_t held_fitted_factors = 4;    // today 4 factors of data/efficiency.yaml
// Refitting on all rows gives the shipped values back within 5 % (today at most 2.5 %; a median
// objective is flat, so coordinate descent stops within a few percent of where it started).
constexpr double refit_move_bound = 0.05;
// In sample (the shipped factors): today's figures, held.
constexpr double in_output_median_bound_percent = held_bound_percent(10.4, 1e9);  // today 10.4 %
constexpr double in_output_p90_bound_percent = held_bound_percent(44.5, 1e9);     // today 44.5 %
constexpr double in_tpot_median_bound_percent = held_bound_percent(8.9, 1e9);     // today 8.9 %
constexpr double in_tpot_p90_bound_percent = held_bound_percent(34.4, 1e9);       // today 34.4 %
constexpr double in_ttft_median_bound_percent = held_bound_percent(26.0, 1e9);    // today 26.0 %
constexpr double in_ttft_p90_bound_percent = held_bound_percent(71.8, 1e9);       // today 71.8 %
constexpr double in_ratio_median_bound_percent = held_bound_percent(6.1, 8);      // today 6.1 % (target 8 %)
// Out of sample, the worse of leaving one GPU type out and leaving one date out: today's, held.
constexpr double out_output_median_bound_percent = held_bound_percent(11.2, 1e9);  // today 11.2 % (GPU type)
constexpr double out_output_p90_bound_percent = held_bound_percent(49.4, 1e9);     // today 49.4 % (GPU type)
constexpr double out_tpot_median_bound_percent = held_bound_percent(10.3, 1e9);    // today 10.3 % (both)
constexpr double out_tpot_p90_bound_percent = held_bound_percent(37.1, 1e9);       // today 37.1 % (GPU type)
constexpr double out_ttft_median_bound_percent = held_bound_percent(27.3, 1e9);    // today 27.3 % (date)
constexpr double out_ttft_p90_bound_percent = held_bound_percent(72.8, 1e9);       // today 72.8 % (GPU type)
constexpr double out_ratio_median_bound_percent = held_bound_percent(9.2, 1e9);    // today 9.2 % (GPU type)

// InferenceX's GPU names and the catalog's.
const std::map<std::string, std::string> catalog_gpu = {{"h200", "H200-SXM"}, {"b200", "B200"},    {"b300", "B300"},
                                                        {"gb200", "GB200"},   {"gb300", "GB300"},  {"mi300x", "MI300X"},
                                                        {"mi325x", "MI325X"}, {"mi355x", "MI355X"}};

struct Row {
    std::string id, group, date, gpu, framework, weights, kv_cache, spec;
    int tp = 8, ep = 1, isl = 0, osl = 0, concurrency = 0;
    bool dp_attention = false, disaggregated = false;
    std::optional<double> output_per_gpu;
    double tpot_ms = 0, ttft_ms = 0;
};

std::vector<Row> read_rows() {
    std::ifstream in(rows_file);
    const nlohmann::json root = nlohmann::json::parse(in);
    std::vector<Row> rows;
    for (const nlohmann::json& item : root.at("rows")) {
        Row row;
        row.id = item.at("id").get<std::string>();
        row.group = item.at("group_id").get<std::string>();
        row.date = item.at("date").get<std::string>();
        row.gpu = item.at("gpu").get<std::string>();
        row.framework = item.at("framework").get<std::string>();
        row.weights = item.at("weight_precision").get<std::string>();
        row.kv_cache = item.at("kv_cache_dtype").get<std::string>();
        row.spec = item.at("spec_decoding").get<std::string>();
        row.disaggregated = item.at("disaggregated").get<bool>();
        if (!row.disaggregated) {
            row.tp = item.at("tp").get<int>();
            row.ep = item.at("ep").is_number() ? item.at("ep").get<int>() : 1;
            row.dp_attention = item.at("dp_attention").is_boolean() && item.at("dp_attention").get<bool>();
        }
        row.isl = item.at("isl").get<int>();
        row.osl = item.at("osl").get<int>();
        row.concurrency = item.at("concurrency").get<int>();
        if (item.at("output_tput_per_gpu").is_number()) {
            row.output_per_gpu = item.at("output_tput_per_gpu").get<double>();
        }
        row.tpot_ms = item.at("median_tpot_ms").get<double>();
        row.ttft_ms = item.at("median_ttft_ms").get<double>();
        rows.push_back(row);
    }
    return rows;
}

// The weight format of the row's checkpoint: FP8 block-scaled (deepseek-ai/DeepSeek-R1-0528), or
// FP4 as NVFP4 on NVIDIA (nvidia/DeepSeek-R1-0528-FP4) and MXFP4 on AMD (amd/...-MXFP4).
std::string weight_format(const Row& row) {
    if (row.weights == "fp8") {
        return "fp8";
    }
    return row.gpu.rfind("mi", 0) == 0 ? "mxfp4" : "nvfp4";
}

// The draft tokens of the row's MTP launch: SGLang --speculative-num-steps 2 (InferenceX
// benchmarks/dsr1_fp8_b200_mtp.sh), TensorRT-LLM num_nextn_predict_layers 3, 1 with DP attention
// (benchmarks/dsr1_fp8_h200_trt_mtp.sh).
int draft_tokens(const Row& row) {
    if (row.framework == "sglang") {
        return 2;
    }
    return row.dp_attention ? 1 : 3;
}

// The row's SGLang --scheduler-recv-interval: the B200 and B300 launch scripts poll for new
// requests every 30 decode steps at 16 clients or more and every 10 below, 10 at TP4 with FP8
// weights (InferenceX benchmarks/dsr1_fp8_b200.sh, dsr1_fp8_b200_mtp.sh, dsr1_fp4_b200.sh,
// dsr1_fp4_b200_mtp.sh and their B300 copies, in both the benchmarks/ and benchmarks/single_node/
// layouts); the H200 and AMD scripts leave SGLang's default, every step. TensorRT-LLM has no such
// knob (its stream_interval 10 sends the first token at once, as SGLang's --stream-interval does).
int scheduler_recv_interval(const Row& row) {
    if (row.framework != "sglang" || (row.gpu != "b200" && row.gpu != "b300")) {
        return 1;
    }
    if (row.weights == "fp8" && row.tp == 4) {
        return 10;
    }
    return row.concurrency >= 16 ? 30 : 10;
}

// The memory knobs of the row's launch script (InferenceX benchmarks/, the same scripts as above):
// SGLang --mem-fraction-static and --max-running-requests, TensorRT-LLM's kv_cache_config
// free_gpu_memory_fraction; empty where the script leaves the engine's default or was not read.
struct LaunchMemory {
    double fraction = 0;
    int max_running = 0;
};
LaunchMemory launch_memory(const Row& row) {
    const bool blackwell = row.gpu == "b200" || row.gpu == "b300";
    if (row.framework == "trt") {
        return row.gpu == "h200" ? LaunchMemory{0.75, 0} : LaunchMemory{};
    }
    if (blackwell && row.weights == "fp8" && row.spec != "mtp") {
        return row.tp == 4 ? LaunchMemory{0.95, 32} : LaunchMemory{0.82, 128};
    }
    if (blackwell && row.weights == "fp8") {
        return {0.82, 512};
    }
    if (blackwell) {
        return {0.85, row.spec == "mtp" ? 512 : 256};
    }
    if (row.gpu == "h200" && row.spec != "mtp") {
        return {0.82, row.isl == 1024 && row.osl == 1024 ? 512 : 256};
    }
    if ((row.gpu == "mi300x" || row.gpu == "mi325x" || row.gpu == "mi355x") && row.weights == "fp8" &&
        row.spec != "mtp") {
        return {0.8, 0};
    }
    return {};
}

struct Prediction {
    double output_per_gpu = 0, tpot_ms = 0, ttft_ms = 0;
};

// A row made ready once: its workload, GPU and layout (the fits re-run only the estimate).
struct Prepared {
    Row row;
    const GpuSpec* gpu = nullptr;
    std::optional<Workload> workload;
    std::string skipped;  // why it is not run
};

double error_of(double predicted, double measured) {
    return predicted / measured - 1;
}

Prepared prepare(const Row& row, const Catalog& catalog, const LoadContext& context) {
    Prepared result{row, nullptr, std::nullopt, {}};
    if (row.disaggregated) {
        result.skipped = "disaggregated prefill/decode (multi-node) not modelled";
        return result;
    }
    result.gpu = catalog.find(catalog_gpu.at(row.gpu));
    if (result.gpu == nullptr) {
        result.skipped = fmt::format("GPU {} not in the catalog", catalog_gpu.at(row.gpu));
        return result;
    }
    if (!parse_weight_format(weight_format(row))) {
        result.skipped = fmt::format("weight format {} not modelled", weight_format(row));
        return result;
    }
    const std::string speculative =
        row.spec == "mtp" ? fmt::format(", speculative: {{method: mtp, draft_tokens: {}}}", draft_tokens(row)) : "";
    const int recv_interval = scheduler_recv_interval(row);
    const LaunchMemory memory = launch_memory(row);
    std::string memory_knobs;
    if (memory.fraction > 0) {
        memory_knobs += fmt::format(", gpu_memory_utilization: {}", memory.fraction);
    }
    if (memory.max_running > 0) {
        memory_knobs += fmt::format(", max_num_seqs: {}", memory.max_running);
    }
    const std::string receive =
        (recv_interval > 1 ? fmt::format(", scheduler_recv_interval: {}", recv_interval) : std::string()) +
        memory_knobs;
    // Mean lengths: InferenceX draws each length uniformly from [0.8 L, L].
    const std::string text = fmt::format(
        "format: 1\nname: {}\nkind: inference\nmodel: {{hf_config: {}}}\nprecision: bf16\nweights: {}\n"
        "kv_cache: {}\ninference: {{input_tokens: {}, output_tokens: {}, concurrency: {}, tensor_parallel: {}}}\n"
        "runtime: {{engine: {}{}{}}}\n",
        row.id, model_config.string(), weight_format(row), row.kv_cache.rfind("fp8", 0) == 0 ? "fp8" : "bf16",
        static_cast<int>(std::lround(0.9 * row.isl)), static_cast<int>(std::lround(0.9 * row.osl)), row.concurrency,
        row.tp, row.framework == "trt" ? "tensorrt-llm" : "sglang", speculative, receive);
    result.workload = load_workload_text(text, row.id, context);
    return result;
}

// The row's prediction with `table`; MTP rows draft with `acceptance` per token when it is set.
std::optional<Prediction> predict(const Prepared& item, const EfficiencyTable& table,
                                  std::optional<double> acceptance) {
    if (!item.workload) {
        return std::nullopt;
    }
    Workload workload = *item.workload;
    if (acceptance && workload.runtime.speculative.enabled()) {
        workload.runtime.speculative.acceptance = *acceptance;
    }
    PerfQuery query;
    query.layout.tensor_parallel = item.row.tp;
    query.search_capacity = false;
    const PerfEstimate estimate = estimate_perf(workload, *item.gpu, query, table);
    if (!estimate.inference) {
        return std::nullopt;
    }
    const InferencePerf& inference = *estimate.inference;
    return Prediction{inference.output_tokens_per_s / item.row.tp, inference.tpot_s * 1000, inference.ttft_s * 1000};
}

// What is fitted to these rows (docs/perf-model.md, "Validation under load"): the factors of
// data/efficiency.yaml whose `fitted_on` names InferenceX rows, each fitted on the rows its rule
// matches, and the draft acceptance of the benchmark's prompts (a property of the data, not of the
// engine: InferenceX sends random tokens, on which DeepSeek's MTP head agrees less often than on
// the natural text behind the 0.85 default). Each minimises the median |log(predicted/measured)|
// of the figure it moves: TPOT for per-kernel and per-layer times and the acceptance, TTFT for
// the per-request latency.
enum class Metric { tpot, ttft };

struct Term {
    int rule = -1;       // index in the table's rules; -1: the acceptance
    std::string factor;  // efficiency factor, or "acceptance"
    Metric metric = Metric::tpot;
    double low = 0, high = 1;  // the search bracket
    double value = 0;
    bool active = true;  // false: no training row in a fold, so the rule's value is not in its table
};

// The draft acceptance per token of InferenceX's random prompts, fitted on the MTP rows (the test
// checks that refitting on all rows gives it back).
constexpr double random_prompt_acceptance = 0.3538;

bool is_inferencex_id(const std::string& id) {
    return id.rfind("IX", 0) == 0;
}

std::vector<Term> fitted_terms(const EfficiencyTable& table) {
    std::vector<Term> terms;
    for (std::size_t i = 0; i < table.rules.size(); ++i) {
        for (const auto& [factor, cases] : table.rules[i].fitted_on) {
            if (cases.empty() || !is_inferencex_id(cases.front())) {
                continue;
            }
            Term term{static_cast<int>(i), factor, Metric::tpot, 0, 1, table.rules[i].values.at(factor)};
            if (factor == "request_latency") {
                term.metric = Metric::ttft;
                term.high = 0.6;
            } else if (factor == "prefill_compute_8bit") {
                term.metric = Metric::ttft;
                term.low = 0.05;
                term.high = 0.9;
            } else if (factor == "kernel_floor") {
                term.low = 1e-6;
                term.high = 60e-6;
            } else if (factor == "overhead_per_layer") {
                term.high = 400e-6;
            }
            terms.push_back(term);
        }
    }
    // Last: the acceptance is fitted given the decode factors.
    terms.push_back({-1, "acceptance", Metric::tpot, 0.2, 0.95, random_prompt_acceptance});
    return terms;
}

std::string term_label(const EfficiencyTable& table, const Term& term) {
    return term.rule < 0 ? "InferenceX prompts' draft acceptance"
                         : fmt::format("{}.{}", table.rules[static_cast<std::size_t>(term.rule)].label, term.factor);
}

std::string engine_of(const Row& row) {
    return row.framework == "trt" ? "tensorrt-llm" : "sglang";
}

bool applies(const Term& term, const EfficiencyTable& table, const Prepared& item) {
    if (!item.workload) {
        return false;
    }
    if (term.rule < 0) {
        return item.row.spec == "mtp";
    }
    // Decode factors are fitted without speculative decoding, so that they and the acceptance
    // are not two ways of fitting the same MTP rows.
    if (term.metric == Metric::tpot && item.row.spec == "mtp") {
        return false;
    }
    const EfficiencyRule& rule = table.rules[static_cast<std::size_t>(term.rule)];
    return !rule.memory && !rule.stack && equals_ignore_case(rule.engine, engine_of(item.row)) &&
           (rule.family.empty() || to_lower(item.gpu->architecture) == rule.family);
}

struct Model {
    EfficiencyTable table;
    std::optional<double> acceptance;
};

// `base` with the terms' values; an inactive term's factor is taken out of its rule.
Model with_terms(const EfficiencyTable& base, const std::vector<Term>& terms) {
    Model model{base, std::nullopt};
    for (const Term& term : terms) {
        if (term.rule < 0) {
            model.acceptance = term.active ? std::optional<double>(term.value) : std::nullopt;
            continue;
        }
        std::map<std::string, double>& values = model.table.rules[static_cast<std::size_t>(term.rule)].values;
        if (term.active) {
            values[term.factor] = term.value;
        } else {
            values.erase(term.factor);
        }
    }
    return model;
}

double term_loss(const std::vector<Term>& terms, std::size_t which, const std::vector<const Prepared*>& rows,
                 const EfficiencyTable& base) {
    const Model model = with_terms(base, terms);
    std::vector<double> losses;
    for (const Prepared* item : rows) {
        const std::optional<Prediction> p = predict(*item, model.table, model.acceptance);
        if (!p) {
            losses.push_back(10);
            continue;
        }
        const bool tpot = terms[which].metric == Metric::tpot;
        losses.push_back(
            std::fabs(std::log((tpot ? p->tpot_ms : p->ttft_ms) / (tpot ? item->row.tpot_ms : item->row.ttft_ms))));
    }
    return percentile_of(losses, 0.5);
}

// Coordinate descent: each term in turn by golden-section search over its bracket, `sweeps`
// times. A term none of whose rows is in `train` is made inactive (its rule falls back to the
// less specific rules), so a held-out GPU type never sees a value fitted on itself.
void fit_terms(std::vector<Term>& terms, const std::vector<const Prepared*>& train, const EfficiencyTable& base,
               int sweeps) {
    constexpr int iterations = 12;
    for (int sweep = 0; sweep < sweeps; ++sweep) {
        for (std::size_t i = 0; i < terms.size(); ++i) {
            std::vector<const Prepared*> rows;
            for (const Prepared* item : train) {
                if (applies(terms[i], base, *item)) {
                    rows.push_back(item);
                }
            }
            terms[i].active = !rows.empty();
            if (rows.empty()) {
                continue;
            }
            terms[i].value = golden_section_minimum(terms[i].low, terms[i].high, iterations, [&](double value) {
                terms[i].value = value;
                return term_loss(terms, i, rows, base);
            });
        }
    }
}

struct Evaluated {
    Row row;
    std::optional<Prediction> prediction;
    std::string skipped;  // why not, when no prediction
};

// The median and 90th percentile of |errors|, in percent.
struct Spread {
    double median = 0, p90 = 0;
};

Spread spread_of(const std::vector<double>& errors) {
    return {100 * percentile_of(errors, 0.5), 100 * percentile_of(errors, 0.9)};
}

struct Summary {
    std::size_t rows = 0, predicted = 0;
    std::map<std::string, std::size_t> skipped;  // reason -> rows
    Spread output, tpot, ttft;
    std::size_t ratio_pairs = 0;
    Spread ratio;
};

Summary summarise(const std::vector<Evaluated>& evaluated, TextTable* table) {
    Summary result;
    std::vector<double> output_errors, tpot_errors, ttft_errors;
    result.rows = evaluated.size();
    for (const Evaluated& item : evaluated) {
        const Row& row = item.row;
        if (!item.prediction) {
            ++result.skipped[item.skipped];
            continue;
        }
        ++result.predicted;
        const Prediction& p = *item.prediction;
        const std::optional<double> output_error =
            row.output_per_gpu ? std::optional<double>(error_of(p.output_per_gpu, *row.output_per_gpu)) : std::nullopt;
        if (output_error) {
            output_errors.push_back(std::fabs(*output_error));
        }
        tpot_errors.push_back(std::fabs(error_of(p.tpot_ms, row.tpot_ms)));
        ttft_errors.push_back(std::fabs(error_of(p.ttft_ms, row.ttft_ms)));
        if (table != nullptr) {
            table->add_row(
                {row.id, row.date, row.gpu, row.framework, row.weights, row.spec, fmt::format("{}/{}", row.tp, row.ep),
                 fmt::format("{}/{}", row.isl, row.osl), fmt::format("{}", row.concurrency),
                 row.output_per_gpu ? fmt::format("{:.1f}", *row.output_per_gpu) : "—",
                 fmt::format("{:.1f}", p.output_per_gpu),
                 output_error ? fmt::format("{:+.0f}", 100 * *output_error) : "—", fmt::format("{:.1f}", row.tpot_ms),
                 fmt::format("{:.1f}", p.tpot_ms), fmt::format("{:+.0f}", 100 * error_of(p.tpot_ms, row.tpot_ms)),
                 fmt::format("{:.0f}", row.ttft_ms), fmt::format("{:.0f}", p.ttft_ms),
                 fmt::format("{:+.0f}", 100 * error_of(p.ttft_ms, row.ttft_ms))});
        }
    }
    // Same-run ratios: every pair of GPU types in one group on one date.
    std::vector<double> ratio_errors;
    for (std::size_t a = 0; a < evaluated.size(); ++a) {
        for (std::size_t b = a + 1; b < evaluated.size(); ++b) {
            const Evaluated& x = evaluated[a];
            const Evaluated& y = evaluated[b];
            if (!x.prediction || !y.prediction || x.row.group != y.row.group || x.row.date != y.row.date ||
                x.row.gpu == y.row.gpu || !x.row.output_per_gpu || !y.row.output_per_gpu) {
                continue;
            }
            const double predicted = x.prediction->output_per_gpu / y.prediction->output_per_gpu;
            const double measured = *x.row.output_per_gpu / *y.row.output_per_gpu;
            ratio_errors.push_back(std::fabs(error_of(predicted, measured)));
        }
    }
    result.output = spread_of(output_errors);
    result.tpot = spread_of(tpot_errors);
    result.ttft = spread_of(ttft_errors);
    result.ratio_pairs = ratio_errors.size();
    result.ratio = spread_of(ratio_errors);
    return result;
}

std::string summary_lines(const Summary& s) {
    return fmt::format(
        "  output tok/s per GPU  median |error| {:.1f} %, p90 {:.1f} %   (target ≤ 10 %, ≤ 25 %)\n"
        "  median TPOT           median |error| {:.1f} %, p90 {:.1f} %   (target ≤ 10 %, ≤ 25 %)\n"
        "  median TTFT           median |error| {:.1f} %, p90 {:.1f} %   (target ≤ 10 %, ≤ 25 %)\n"
        "  same-run GPU ratios   {} pairs, median |error| {:.1f} %, p90 {:.1f} %   (target median ≤ 8 %)\n",
        s.output.median, s.output.p90, s.tpot.median, s.tpot.p90, s.ttft.median, s.ttft.p90, s.ratio_pairs,
        s.ratio.median, s.ratio.p90);
}

// How far one nightly run is from the others of the same configuration (GPU, engine, precisions,
// layout, MTP, lengths, clients) measured on other dates: each such row predicted by the median
// of the others. It is what software updates between nightly runs move the figures by; a model
// without the engine's version cannot be closer than this on rows that date apart.
struct Repeatability {
    std::size_t configurations = 0, rows = 0;
    Spread output, tpot, ttft;
};

Repeatability repeatability_of(const std::vector<Row>& rows) {
    std::map<std::string, std::vector<const Row*>> configurations;
    for (const Row& row : rows) {
        if (!row.disaggregated) {
            configurations[fmt::format("{} {} {} {} {}/{} {} {} {}/{} {}", row.gpu, row.framework, row.weights,
                                       row.kv_cache, row.tp, row.ep, row.dp_attention, row.spec, row.isl, row.osl,
                                       row.concurrency)]
                .push_back(&row);
        }
    }
    Repeatability result;
    std::vector<double> output, tpot, ttft;
    const auto others_median = [](const std::vector<const Row*>& group, std::size_t skip, auto figure) {
        std::vector<double> values;
        for (std::size_t j = 0; j < group.size(); ++j) {
            if (j != skip) {
                values.push_back(figure(*group[j]));
            }
        }
        std::sort(values.begin(), values.end());
        const std::size_t n = values.size();
        return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    };
    for (const auto& [key, group] : configurations) {
        if (group.size() < 2) {
            continue;
        }
        ++result.configurations;
        const bool all_output =
            std::all_of(group.begin(), group.end(), [](const Row* row) { return row->output_per_gpu.has_value(); });
        for (std::size_t i = 0; i < group.size(); ++i) {
            ++result.rows;
            if (all_output) {
                output.push_back(std::fabs(others_median(group, i, [](const Row& row) { return *row.output_per_gpu; }) /
                                               *group[i]->output_per_gpu -
                                           1));
            }
            tpot.push_back(
                std::fabs(others_median(group, i, [](const Row& row) { return row.tpot_ms; }) / group[i]->tpot_ms - 1));
            ttft.push_back(
                std::fabs(others_median(group, i, [](const Row& row) { return row.ttft_ms; }) / group[i]->ttft_ms - 1));
        }
    }
    result.output = spread_of(output);
    result.tpot = spread_of(tpot);
    result.ttft = spread_of(ttft);
    return result;
}

struct Validation {
    Repeatability repeatability;
    Summary in_sample;                // the shipped factors
    Summary by_gpu_type, by_date;     // each group predicted by factors refitted without it
    std::size_t fitted_factors = 0;   // factors of data/efficiency.yaml fitted on these rows
    std::size_t wrong_fitted_on = 0;  // fitted_on lists that are not the rows their rule matches
    double largest_refit_move = 0;    // |refit on all rows / shipped − 1|, the largest
};

const Validation& load_validation() {
    static const Validation validation = [] {
        const Catalog catalog = builtin_catalog();
        const ModelLibrary models = builtin_models();
        const LoadContext context{&catalog, &models};
        const EfficiencyTable shipped = builtin_efficiency();
        const std::vector<Row> rows = read_rows();
        std::vector<Prepared> prepared;
        for (const Row& row : rows) {
            prepared.push_back(prepare(row, catalog, context));
        }
        std::vector<const Prepared*> all;
        for (const Prepared& item : prepared) {
            all.push_back(&item);
        }
        const auto evaluate_with = [&](const Model& model, const std::vector<const Prepared*>& subset) {
            std::vector<Evaluated> evaluated;
            for (const Prepared* item : subset) {
                Evaluated e{item->row, predict(*item, model.table, model.acceptance), item->skipped};
                if (!e.prediction && e.skipped.empty()) {
                    e.skipped = "no estimate";
                }
                evaluated.push_back(e);
            }
            return evaluated;
        };
        Validation result;
        result.repeatability = repeatability_of(rows);
        const std::vector<Term> terms = fitted_terms(shipped);
        result.fitted_factors = terms.size() - 1;  // the acceptance is not a factor

        // Each fitted_on list names exactly the modelled rows its rule matches.
        std::string fit_table = "fitted on these rows                          shipped     refit on all rows  rows\n";
        std::vector<Term> refit = terms;
        fit_terms(refit, all, shipped, 3);
        for (std::size_t i = 0; i < terms.size(); ++i) {
            std::set<std::string> matched;
            for (const Prepared* item : all) {
                if (applies(terms[i], shipped, *item)) {
                    matched.insert(item->row.id);
                }
            }
            if (terms[i].rule >= 0) {
                const EfficiencyRule& rule = shipped.rules[static_cast<std::size_t>(terms[i].rule)];
                const std::vector<std::string>& listed = rule.fitted_on.at(terms[i].factor);
                if (std::set<std::string>(listed.begin(), listed.end()) != matched || listed.size() != matched.size()) {
                    ++result.wrong_fitted_on;
                    std::cout << fmt::format("{}: fitted_on lists {} rows, the rule matches {}\n",
                                             term_label(shipped, terms[i]), listed.size(), matched.size());
                }
            }
            const double move = std::fabs(refit[i].value / terms[i].value - 1);
            result.largest_refit_move = std::max(result.largest_refit_move, move);
            fit_table += fmt::format("{:<44}  {:>10.4g}  {:>10.4g} ({:+.1f} %)  {:>4}\n", term_label(shipped, terms[i]),
                                     terms[i].value, refit[i].value, 100 * (refit[i].value / terms[i].value - 1),
                                     matched.size());
        }

        // Out of sample: every group's rows predicted by the terms refitted without them.
        const auto out_of_sample = [&](const std::function<std::string(const Row&)>& group_of) {
            std::map<std::string, std::vector<const Prepared*>> groups;
            for (const Prepared* item : all) {
                groups[group_of(item->row)].push_back(item);
            }
            std::vector<Evaluated> predicted;
            for (const auto& [name, held] : groups) {
                std::vector<const Prepared*> train;
                for (const Prepared* item : all) {
                    if (group_of(item->row) != name) {
                        train.push_back(item);
                    }
                }
                std::vector<Term> fold = terms;
                fit_terms(fold, train, shipped, 1);
                const std::vector<Evaluated> evaluated = evaluate_with(with_terms(shipped, fold), held);
                predicted.insert(predicted.end(), evaluated.begin(), evaluated.end());
            }
            // Ratios pair rows of one group and date: order by id so that pairs are found as in-sample.
            std::sort(predicted.begin(), predicted.end(),
                      [](const Evaluated& x, const Evaluated& y) { return x.row.id < y.row.id; });
            return summarise(predicted, nullptr);
        };
        result.by_gpu_type = out_of_sample([](const Row& row) { return row.gpu; });
        result.by_date = out_of_sample([](const Row& row) { return row.date; });

        TextTable table;
        for (const char* header :
             {"row", "date", "gpu", "engine", "W", "spec", "tp/ep", "isl/osl", "clients", "out tok/s/GPU", "predicted",
              "err %", "TPOT ms", "predicted", "err %", "TTFT ms", "predicted", "err %"}) {
            const std::string name = header;
            const bool left = name == "row" || name == "date" || name == "gpu" || name == "engine" || name == "W" ||
                              name == "spec" || name == "tp/ep" || name == "isl/osl";
            table.add_column(header, left ? TextTable::Align::left : TextTable::Align::right);
        }
        result.in_sample = summarise(evaluate_with(with_terms(shipped, terms), all), &table);
        std::cout << "\nServing under closed-loop load vs SemiAnalysis InferenceX (DeepSeek-R1-0528; error = "
                     "predicted / measured − 1; medians as published; the shipped factors)\n\n"
                  << table.render()
                  << fmt::format("\nrows {}: predicted {}", result.in_sample.rows, result.in_sample.predicted);
        for (const auto& [reason, count] : result.in_sample.skipped) {
            std::cout << fmt::format(" · {} not run: {}", count, reason);
        }
        std::cout << "\n\n"
                  << fit_table << "\nin sample (the shipped factors, fitted on all rows):\n"
                  << summary_lines(result.in_sample)
                  << "out of sample, leave one GPU type out (its rows predicted by factors refitted without them; a "
                     "rule of its family alone falls back to the engine's):\n"
                  << summary_lines(result.by_gpu_type) << "out of sample, leave one date out:\n"
                  << summary_lines(result.by_date)
                  << fmt::format(
                         "the data's own repeatability ({} configurations measured on 2 or more dates, {} rows; each "
                         "row predicted by the median of the other dates):\n"
                         "  output tok/s per GPU  median |error| {:.1f} %, p90 {:.1f} %\n"
                         "  median TPOT           median |error| {:.1f} %, p90 {:.1f} %\n"
                         "  median TTFT           median |error| {:.1f} %, p90 {:.1f} %\n\n",
                         result.repeatability.configurations, result.repeatability.rows,
                         result.repeatability.output.median, result.repeatability.output.p90,
                         result.repeatability.tpot.median, result.repeatability.tpot.p90,
                         result.repeatability.ttft.median, result.repeatability.ttft.p90);
        return result;
    }();
    return validation;
}

}  // namespace

TEST_CASE("closed-loop serving against InferenceX same-run measurements", "[validation][serving-load]") {
    const Validation& validation = load_validation();
    CHECK(validation.in_sample.rows == 205);
    // The data's repeatability across dates, independent of the model: a separate Python reading
    // of the JSON (same grouping, statistics.median of the other dates, nearest-rank percentiles)
    // gives 75 rows, output 12.16 % / p90 37.04 %, TPOT 10.48 % / 38.74 %, TTFT 7.48 % / 37.49 %.
    CHECK(validation.repeatability.configurations == 34);
    CHECK(validation.repeatability.rows == 75);
    CHECK(validation.repeatability.output.median == Approx(12.16).margin(0.01));
    CHECK(validation.repeatability.tpot.median == Approx(10.48).margin(0.01));
    CHECK(validation.repeatability.ttft.median == Approx(7.48).margin(0.01));
    CHECK(validation.repeatability.tpot.p90 == Approx(38.74).margin(0.01));
    CHECK(validation.in_sample.predicted >= held_predicted_rows);
    // The factors fitted here list exactly the rows their rule matches, and refitting them on
    // all rows gives the shipped values back.
    CHECK(validation.fitted_factors == held_fitted_factors);
    CHECK(validation.wrong_fitted_on == 0);
    CHECK(validation.largest_refit_move <= refit_move_bound);
    for (const Summary* summary : {&validation.in_sample, &validation.by_gpu_type, &validation.by_date}) {
        CHECK(summary->ratio_pairs >= held_ratio_pairs);
    }
    const Summary& in = validation.in_sample;
    CHECK(in.output.median <= in_output_median_bound_percent);
    CHECK(in.output.p90 <= in_output_p90_bound_percent);
    CHECK(in.tpot.median <= in_tpot_median_bound_percent);
    CHECK(in.tpot.p90 <= in_tpot_p90_bound_percent);
    CHECK(in.ttft.median <= in_ttft_median_bound_percent);
    CHECK(in.ttft.p90 <= in_ttft_p90_bound_percent);
    CHECK(in.ratio.median <= in_ratio_median_bound_percent);
    for (const Summary* out : {&validation.by_gpu_type, &validation.by_date}) {
        CHECK(out->output.median <= out_output_median_bound_percent);
        CHECK(out->output.p90 <= out_output_p90_bound_percent);
        CHECK(out->tpot.median <= out_tpot_median_bound_percent);
        CHECK(out->tpot.p90 <= out_tpot_p90_bound_percent);
        CHECK(out->ttft.median <= out_ttft_median_bound_percent);
        CHECK(out->ttft.p90 <= out_ttft_p90_bound_percent);
        CHECK(out->ratio.median <= out_ratio_median_bound_percent);
    }
}
