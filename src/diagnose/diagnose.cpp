// `gpusel diagnose`: each rule of the table (rules.cpp) weighed against the evidence of the
// capture's steady state (evidence.cpp) into verdicts with a confidence, described with their
// numbers and ranked; the capture that would tell the top two apart; and what a fix is worth,
// from the performance model.

#include "diagnose/diagnose.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "base/error.hpp"
#include "diagnose/internal.hpp"

#include <fmt/format.h>

namespace gpusel {

using namespace diagnose_detail;

std::string_view to_string(Severity severity) {
    switch (severity) {
        case Severity::error:
            return "error";
        case Severity::warning:
            return "warning";
        case Severity::info:
            return "info";
    }
    return "?";
}

std::string_view to_string(Confidence confidence) {
    switch (confidence) {
        case Confidence::high:
            return "high";
        case Confidence::medium:
            return "medium";
        case Confidence::low:
            return "low";
        case Confidence::unlikely:
            return "unlikely";
    }
    return "?";
}

namespace {

double rounded(double value, int digits) {
    const double scale = std::pow(10.0, digits);
    const double r = std::round(value * scale) / scale;
    return r == 0 ? 0.0 : r;
}

bool fires(const Evidence& evidence) {
    return evidence.above ? evidence.mean > evidence.threshold : evidence.mean < evidence.threshold;
}

Confidence confidence_of(double score) {
    if (score <= 0) {
        return Confidence::unlikely;
    }
    if (score < 1) {
        return Confidence::low;
    }
    return score < 1.5 ? Confidence::medium : Confidence::high;
}

// Which capture separates two plausible causes, by bottleneck pair (either order).
std::string tell_apart_hint(ObservedBottleneck a, ObservedBottleneck b) {
    using B = ObservedBottleneck;
    static const std::map<std::pair<ObservedBottleneck, ObservedBottleneck>, std::string> hints = {
        {{B::input_pipeline, B::memory_capacity},
         "torch.cuda.max_memory_allocated() against nvidia-smi's memory.used (is the memory used, or only cached?) "
         "and `mpstat -P ALL 1` (is one loader core saturated while the average idles?)"},
        {{B::input_pipeline, B::host_transfer},
         "`dcgmi dmon -e 1009,1010` with `--query-gpu=pcie.link.gen.max,pcie.link.width.max` (is the link near its "
         "achievable rate?) and `perf record` of the DataLoader workers"},
        {{B::input_pipeline, B::topology},
         "`dcgmi dmon -e 1011,1012` (NVLink bytes) with NCCL_DEBUG=INFO, or the same job on one GPU: if one GPU "
         "is as busy as now, the wait is input, not communication"},
        {{B::input_pipeline, B::communication},
         "the same job on one GPU: if it is as busy as now, the wait is input, not communication"},
        {{B::input_pipeline, B::load_imbalance},
         "`nvidia-smi dmon -s pucm` of every GPU: a slow GPU shows lower clocks or higher temperature"},
        {{B::compute, B::memory_bandwidth}, "`dcgmi dmon -e 1002,1004,1005` (SM, tensor and DRAM activity)"},
        {{B::host_transfer, B::memory_capacity},
         "torch.cuda.max_memory_allocated(): offloading (CPU optimizer state, paging) moves bytes over PCIe"},
        {{B::memory_capacity, B::topology},
         "`dcgmi dmon -e 1011,1012` (NVLink bytes) and torch.cuda.max_memory_allocated()"},
        {{B::host_transfer, B::topology}, "`dcgmi dmon -e 1009,1010,1011,1012`: PCIe and NVLink bytes side by side"},
    };
    auto found = hints.find({a, b});
    if (found == hints.end()) {
        found = hints.find({b, a});
    }
    return found == hints.end() ? std::string() : found->second;
}

void round_evidence(Evidence& evidence) {
    // The evidence is shown, not recomputed: round it once here so that text and JSON agree.
    evidence.mean = rounded(evidence.mean, 2);
    if (evidence.p5) {
        evidence.p5 = rounded(*evidence.p5, 2);
    }
    if (evidence.p95) {
        evidence.p95 = rounded(*evidence.p95, 2);
    }
    if (evidence.share_beyond) {
        evidence.share_beyond = rounded(*evidence.share_beyond, 4);
    }
}

// The rule's conditions, supporting and contradicting signals, and score. nullopt with
// `skip_reason` set when a condition's evidence is missing; a verdict whose conditions do not
// all hold is returned with `fired` false.
std::optional<Verdict> weigh_rule(const DiagnosisRule& rule, const EvidenceTable& table, bool& fired,
                                  std::string& skip_reason) {
    Verdict verdict;
    verdict.rule = &rule;
    fired = true;
    for (const RuleThreshold& threshold : rule.thresholds) {
        std::optional<Evidence> evidence = table.test(threshold.metric, threshold.above, threshold.value);
        if (!evidence) {
            const auto reason = table.missing.find(threshold.metric);
            skip_reason = reason != table.missing.end() ? reason->second : "no data for " + threshold.metric;
            return std::nullopt;
        }
        fired = fired && fires(*evidence);
        verdict.evidence.push_back(std::move(*evidence));
    }
    verdict.score = 1;
    for (const auto* signals : {&rule.supports, &rule.against}) {
        const bool supports = signals == &rule.supports;
        for (const RuleSignal& signal : *signals) {
            if (std::optional<Evidence> evidence = table.test(signal.metric, signal.above, signal.value)) {
                SignalEvidence measured{*evidence, signal.weight, signal.meaning, fires(*evidence)};
                round_evidence(measured.evidence);
                if (measured.holds) {
                    verdict.score += supports ? signal.weight : -signal.weight;
                }
                (supports ? verdict.supporting : verdict.contradicting).push_back(std::move(measured));
            }
        }
    }
    verdict.confidence = confidence_of(verdict.score);
    return verdict;
}

// A rate as the verdicts print it: "3 req/s", "0.25 req/s".
std::string fmt_rate(double per_s) {
    return fmt::format("{:g} req/s", rounded(per_s, 2));
}

// "~12", "~1200": two significant figures, for an estimate.
std::string fmt_about(double value) {
    if (!(value > 0) || !std::isfinite(value)) {
        return "~0";
    }
    const double step = std::pow(10.0, std::floor(std::log10(value)) - 1);
    return fmt::format("~{:g}", std::round(value / step) * step);
}

void describe_under_loaded(Verdict& verdict, const EvidenceTable& table, const ServingContext& serving,
                           const std::string& gpus_are) {
    const double busy = verdict.evidence[0].mean;
    if (serving.requests_per_s && serving.carry_requests_per_s) {
        verdict.summary = fmt::format("under-loaded: {} util at {}; this replica could carry {} req/s.", fmt_pct(busy),
                                      fmt_rate(*serving.requests_per_s), fmt_about(*serving.carry_requests_per_s));
    } else if (serving.requests_per_s) {
        verdict.summary = fmt::format("under-loaded: {} util at {}: the replica waits for requests.", fmt_pct(busy),
                                      fmt_rate(*serving.requests_per_s));
    } else {
        verdict.summary = fmt::format(
            "under-loaded: {} busy {} of the time: the replica waits for requests (pass --workload with "
            "inference.requests_per_s, or the engine's metrics with --prom, for the rate it could carry).",
            gpus_are == "The GPU is" ? "the GPU is" : "the GPUs are", fmt_pct(busy));
    }
    verdict.details.push_back(
        fmt::format("serving engine: {}, from {}", serving.engine.empty() ? "unknown" : serving.engine,
                    serving.engine_source.empty() ? "an inference workload" : serving.engine_source));
    if (const auto fb = table.series.find("fb_used_pct"); fb != table.series.end()) {
        const double used = summarize(fb->second.values).mean;
        if (serving.paged) {
            verdict.details.push_back(
                fmt::format("{} of the framebuffer in use is {}'s pre-allocation{}, not memory pressure", fmt_pct(used),
                            serving.engine,
                            serving.gpu_memory_utilization
                                ? fmt::format(" (gpu_memory_utilization {:g})", *serving.gpu_memory_utilization)
                                : ""));
        } else {
            verdict.details.push_back(fmt::format("{} of the framebuffer in use", fmt_pct(used)));
        }
    }
    if (serving.requests_per_s) {
        verdict.details.push_back(
            fmt::format("request rate {}: {}", fmt_rate(*serving.requests_per_s), serving.requests_source));
    }
    if (serving.carry_requests_per_s) {
        verdict.details.push_back(
            fmt::format("could carry {} req/s: {}", fmt_about(*serving.carry_requests_per_s), serving.carry_method));
    }
    if (serving.running_requests) {
        verdict.details.push_back(fmt::format("running requests average {:g}", *serving.running_requests));
    }
    if (serving.kv_cache_used_pct) {
        verdict.details.push_back(fmt::format("KV cache {:g} % used on average", *serving.kv_cache_used_pct));
    }
    verdict.expected_gain = 1 - busy / 100;
}

// One sentence with the numbers that matter, the details, and the expected gain.
void describe(Verdict& verdict, const EvidenceTable& table, const std::vector<int>& job,
              const ServingContext& serving) {
    const std::string& id = verdict.rule->id;
    const double first = verdict.evidence[0].mean;
    const double second = verdict.evidence.size() > 1 ? verdict.evidence[1].mean : 0;
    const std::string stand_in = verdict.evidence.size() > 1 ? verdict.evidence[1].metric : "";
    const bool one = job.size() == 1;
    const std::string gpus_are = one ? "The GPU is" : "The GPUs are";
    const std::string their = one ? "its" : "their";
    const std::string them = one ? "it" : "them";
    const std::string they_wait = one ? "it waits" : "they wait";
    const std::string memory_word =
        stand_in == "mem_util_pct" ? "memory (nvidia-smi memory utilisation)" : "memory interface";
    if (id == "under-loaded") {
        describe_under_loaded(verdict, table, serving, gpus_are);
    } else if (id == "no-job-running") {
        verdict.summary = fmt::format("{} busy {} of the time: no job seems to be running during the capture.",
                                      gpus_are, fmt_pct(first));
    } else if (id == "gpu-util-low-cpu-high") {
        verdict.summary = fmt::format(
            "{} busy {} of the time while the host CPUs are {} busy: the CPU side of the {} cannot keep up.", gpus_are,
            fmt_pct(first), fmt_pct(second), serving.serving ? "serving engine" : "input pipeline");
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-util-low-dram-low") {
        verdict.summary = fmt::format(
            "{} busy {} of the time and {} {} {}: {} for input, not for compute or "
            "memory.",
            gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second), they_wait);
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-util-low-fb-full") {
        verdict.summary = fmt::format(
            "{} busy {} of the time with {} of {} memory in use: the batch that fits is "
            "too small to keep {} busy.",
            gpus_are, fmt_pct(first), fmt_pct(second), their, them);
        if (!serving.training) {
            // The job is not known: a serving engine's pre-allocation looks exactly like this.
            verdict.details.push_back(
                "if a serving engine runs here (vLLM, SGLang, TensorRT-LLM pre-allocate most of the memory), pass "
                "--workload or --processes: its memory is then not read as pressure");
        }
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "pcie-saturated") {
        verdict.summary = fmt::format(
            "The PCIe link carries {} of its achievable rate on average: host-device "
            "transfers limit the job.",
            fmt_pct(first));
        verdict.expected_gain = verdict.evidence[0].share_beyond.value_or(0);
    } else if (id == "cpu-jpeg-decode") {
        verdict.summary = fmt::format(
            "{:.1f} % of the profiled CPU samples decode JPEGs (libjpeg/PIL): decoding on the "
            "CPU limits the input pipeline.",
            first);
        verdict.expected_gain = first / 100;
    } else if (id == "cpu-copy-mmap") {
        verdict.summary = fmt::format(
            "{:.1f} % of the profiled CPU samples copy memory or handle page faults "
            "(memcpy/mmap): reading the data limits the input pipeline.",
            first);
        verdict.expected_gain = first / 100;
    } else if (id == "gpu-peers-through-host") {
        verdict.summary = fmt::format(
            "{} of {} GPU pairs of the job talk through the host (PHB, NODE or SYS) rather "
            "than NVLink or a PCIe switch.",
            table.pair_details.size(), verdict.evidence[0].samples);
        const std::size_t shown = std::min<std::size_t>(table.pair_details.size(), 8);
        verdict.details.assign(table.pair_details.begin(),
                               table.pair_details.begin() + static_cast<std::ptrdiff_t>(shown));
        if (table.pair_details.size() > shown) {
            verdict.details.push_back(fmt::format("... and {} more pairs", table.pair_details.size() - shown));
        }
    } else if (id == "gpus-split-numa") {
        verdict.summary = fmt::format(
            "The job's {} GPUs sit on {} NUMA nodes although one node alone has enough "
            "GPUs for it.",
            verdict.evidence[0].samples, static_cast<int>(first));
        verdict.details = table.numa_details;
    } else if (id == "nvlink-busy") {
        verdict.summary = fmt::format(
            "{} busy {} of the time while NVLink carries {} of its achievable rate: {} on "
            "GPU-to-GPU communication.",
            gpus_are, fmt_pct(first), fmt_pct(second), they_wait);
        verdict.expected_gain = 1 - first / 100;
    } else if (id == "gpu-straggler") {
        verdict.summary = fmt::format(
            "The job's GPUs disagree: their utilisation spans {} points; in a synchronous "
            "job the others wait for the slowest.",
            fmt::format("{:.0f}", first));
        verdict.details = table.busy_details;
    } else if (id == "gpu-bound-memory") {
        verdict.summary = fmt::format("{} busy {} of the time and {} {} {}: the job is bound by memory bandwidth.",
                                      gpus_are, fmt_pct(first), their, memory_word, fmt_pct(second));
    } else if (id == "gpu-bound-tensor") {
        verdict.summary = fmt::format(
            "{} busy {} of the time with the tensor pipes active {}: the job is bound by "
            "tensor-core compute.",
            gpus_are, fmt_pct(first), fmt_pct(second));
    } else if (id == "gpu-bound-compute") {
        verdict.summary = fmt::format("{} busy {} of the time with {} {} at {}: the job is bound by compute.", gpus_are,
                                      fmt_pct(first), their, memory_word, fmt_pct(second));
    }
    for (Evidence& evidence : verdict.evidence) {
        round_evidence(evidence);
    }
    verdict.expected_gain = rounded(std::clamp(verdict.expected_gain, 0.0, 1.0), 4);
}

bool ranks_before(const Verdict& a, const Verdict& b) {
    if (a.confidence != b.confidence) {
        return static_cast<int>(a.confidence) < static_cast<int>(b.confidence);
    }
    if (a.rule->severity != b.rule->severity) {
        return static_cast<int>(a.rule->severity) < static_cast<int>(b.rule->severity);
    }
    if (a.expected_gain != b.expected_gain) {
        return a.expected_gain > b.expected_gain;
    }
    return a.score > b.score;
}

// When the top two plausible causes differ, the capture that would tell them apart.
std::vector<std::string> tell_apart(const std::vector<Verdict>& verdicts) {
    std::vector<std::string> hints;
    if (verdicts.size() < 2) {
        return hints;
    }
    const DiagnosisRule& a = *verdicts[0].rule;
    for (std::size_t i = 1; i < verdicts.size() && hints.empty(); ++i) {
        const DiagnosisRule& b = *verdicts[i].rule;
        if (b.bottleneck == a.bottleneck || verdicts[i].confidence == Confidence::low) {
            continue;
        }
        const std::string hint = tell_apart_hint(a.bottleneck, b.bottleneck);
        hints.push_back(
            fmt::format("{} ({}) or {} ({}): {}", to_string(a.bottleneck), a.id, to_string(b.bottleneck), b.id,
                        hint.empty() ? "a longer capture with the inputs listed under \"not evaluated\"" : hint));
    }
    return hints;
}

// When no rule found a plausible cause: insufficient-data without utilisation (nothing says
// whether the GPUs work or wait, so never "healthy"), else healthy when some rule could run.
void add_default_verdict(Diagnosis& diagnosis, std::size_t evaluated, const EvidenceTable& table) {
    if (diagnosis.verdicts.empty() && !diagnosis.gpu_busy_pct) {
        // Without utilisation nothing says whether the GPUs work or wait: never "healthy".
        Verdict insufficient;
        insufficient.rule = find_rule("insufficient-data");
        insufficient.score = 1;
        insufficient.confidence = Confidence::high;
        insufficient.remedies = insufficient.rule->remedies;
        insufficient.summary = fmt::format(
            "The capture holds no GPU utilisation, so whether the GPUs work or wait cannot be told{}.",
            evaluated > 0
                ? fmt::format(" ({} rule{} could be evaluated and found nothing)", evaluated, evaluated == 1 ? "" : "s")
                : "");
        for (const InputSummary& input : diagnosis.inputs) {
            insufficient.details.push_back(fmt::format("{}: {}, {} row{}", to_string(input.kind), input.file,
                                                       input.samples, input.samples == 1 ? "" : "s"));
        }
        diagnosis.verdicts.push_back(std::move(insufficient));
    } else if (diagnosis.verdicts.empty() && evaluated > 0) {
        Verdict healthy;
        healthy.rule = find_rule("healthy");
        healthy.score = 1;
        healthy.confidence = diagnosis.capture.too_short ? Confidence::low : Confidence::medium;
        healthy.remedies = healthy.rule->remedies;
        healthy.summary =
            fmt::format("None of the {} rules that could be evaluated found a plausible cause.", evaluated);
        if (const auto busy = table.series.find("sm_util_pct"); busy != table.series.end()) {
            healthy.details.push_back(fmt::format("GPU busy ({}) averages {}, from {}", busy->second.metric,
                                                  fmt_pct(summarize(busy->second.values).mean), busy->second.source));
        }
        diagnosis.verdicts.push_back(std::move(healthy));
    }
}

// Why `rule` is not evaluated for this job (a serving engine reads differently), or nullopt.
std::optional<std::string> skipped_for_job(const DiagnosisRule& rule, const ServingContext& serving) {
    if (rule.scope != RuleScope::not_serving || !serving.serving) {
        return std::nullopt;
    }
    if (rule.id == "gpu-util-low-fb-full" && serving.paged) {
        return fmt::format(
            "{} pre-allocates its memory (gpu_memory_utilization): framebuffer use is not memory pressure, and "
            "training remedies do not apply to a serving job",
            serving.engine);
    }
    return rule.serving_reason;
}

}  // namespace

Diagnosis diagnose(const DiagnoseInputs& in) {
    Diagnosis diagnosis;
    diagnosis.serving = detect_serving(in);

    // Inputs and the job's GPUs: those in the GPU telemetry, else every GPU of the topology.
    std::set<int> job;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        for (const int gpu : t->gpus()) {
            job.insert(gpu);
        }
    }
    const auto add_notes = [&diagnosis](const std::string& file, const std::vector<std::string>& notes) {
        for (const std::string& note : notes) {
            diagnosis.notes.push_back(fmt::format("{}: {}", file, note));
        }
    };
    for (const std::optional<GpuTelemetry>* t : {&in.dmon, &in.dcgm, &in.prometheus, &in.query}) {
        if (*t) {
            diagnosis.inputs.push_back(InputSummary{(*t)->kind, (*t)->file, (*t)->samples.size(), (*t)->gpus()});
            add_notes((*t)->file, (*t)->notes);
        }
    }
    if (in.cpu) {
        diagnosis.inputs.push_back(InputSummary{in.cpu->kind, in.cpu->file, in.cpu->samples.size(), {}});
        add_notes(in.cpu->file, in.cpu->notes);
    }
    if (in.perf) {
        diagnosis.inputs.push_back(
            InputSummary{TelemetryKind::perf_report, in.perf->file, in.perf->symbols.size(), {}});
        add_notes(in.perf->file, in.perf->notes);
    }
    if (in.topology) {
        std::vector<int> gpus;
        for (const std::size_t row : in.topology->gpu_rows()) {
            gpus.push_back(in.topology->devices[row].gpu_index);
        }
        diagnosis.inputs.push_back(InputSummary{TelemetryKind::nvidia_smi_topo, in.topology->file, gpus.size(), gpus});
        add_notes(in.topology->file, in.topology->notes);
        if (job.empty()) {
            job.insert(gpus.begin(), gpus.end());
        }
    }
    diagnosis.job_gpus.assign(job.begin(), job.end());
    const std::vector<int>& job_gpus = diagnosis.job_gpus;

    const SteadyState steady_state = find_steady_state(in, job_gpus);
    diagnosis.capture = steady_state.capture;
    const EvidenceTable table = gather_evidence(in, job_gpus, steady_state, diagnosis.notes);
    if (const auto busy = table.series.find("sm_util_pct"); busy != table.series.end()) {
        diagnosis.gpu_busy_pct = summarize(busy->second.values).mean;
        diagnosis.gpu_busy_source = busy->second.source;
    }
    estimate_carry(diagnosis.serving, in, static_cast<int>(std::max<std::size_t>(job_gpus.size(), 1)),
                   diagnosis.gpu_busy_pct);
    if (in.processes) {
        diagnosis.inputs.push_back(
            InputSummary{TelemetryKind::nvidia_smi_processes, in.processes->file, in.processes->processes.size(), {}});
        add_notes(in.processes->file, in.processes->notes);
    }

    // An idle capture has nothing to diagnose: its verdict alone, the other rules are not run.
    std::size_t evaluated = 0;
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        if (rule.thresholds.empty()) {
            continue;  // healthy and insufficient-data, decided below
        }
        if (rule.scope == RuleScope::serving_only && !diagnosis.serving.serving) {
            continue;  // means nothing for a job that is not a server
        }
        if (std::optional<std::string> reason = skipped_for_job(rule, diagnosis.serving)) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, std::move(*reason)});
            continue;
        }
        if (diagnosis.capture.idle) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, "no job seems to be running during the capture"});
            continue;
        }
        bool fired = false;
        std::string skip_reason;
        std::optional<Verdict> verdict = weigh_rule(rule, table, fired, skip_reason);
        if (!verdict) {
            diagnosis.not_evaluated.push_back(SkippedRule{rule.id, skip_reason});
            continue;
        }
        ++evaluated;
        if (rule.id == "gpus-split-numa" && !table.numa_regroup_possible) {
            fired = false;  // spanning nodes is unavoidable when no node holds the whole job
        }
        if (!fired) {
            continue;
        }
        describe(*verdict, table, job_gpus, diagnosis.serving);
        verdict->remedies = remedies_for(rule, diagnosis.serving.serving);
        if (diagnosis.capture.too_short && verdict->confidence != Confidence::unlikely) {
            verdict->confidence = Confidence::low;
        }
        if (verdict->confidence == Confidence::unlikely) {
            diagnosis.ruled_out.push_back(std::move(*verdict));
        } else {
            diagnosis.capture.idle = diagnosis.capture.idle || rule.id == "no-job-running";
            diagnosis.verdicts.push_back(std::move(*verdict));
        }
    }
    if (diagnosis.capture.idle) {
        evaluated = 1;
    }

    add_default_verdict(diagnosis, evaluated, table);
    std::stable_sort(diagnosis.verdicts.begin(), diagnosis.verdicts.end(), ranks_before);
    std::stable_sort(diagnosis.ruled_out.begin(), diagnosis.ruled_out.end(), ranks_before);
    diagnosis.tell_apart = tell_apart(diagnosis.verdicts);
    for (const std::string& note : diagnosis.serving.notes) {
        diagnosis.notes.push_back(note);
    }
    return diagnosis;
}

namespace {

struct Throughput {
    double per_s = 0;
    double busy_share = 0;
    std::string unit;
};

// The model's unobstructed throughput of `workload` on `count` x `gpu`; nullopt when the model
// cannot place the workload there (count not divisible into a layout, nothing fits).
std::optional<Throughput> unobstructed_throughput(const Workload& workload, const GpuSpec& gpu, int count,
                                                  const EfficiencyTable& efficiency) {
    const std::optional<PerfEstimate> estimate = model_estimate(workload, gpu, count, efficiency);
    if (!estimate) {
        return std::nullopt;
    }
    Throughput result;
    result.busy_share = estimate->bottleneck.gpu_utilization;
    if (estimate->training) {
        const bool tokens = estimate->training->tokens_per_s > 0;
        result.per_s = tokens ? estimate->training->tokens_per_s : estimate->training->samples_per_s;
        result.unit = tokens ? "tokens/s" : "samples/s";
    } else if (estimate->inference && estimate->inference->fits) {
        result.per_s = estimate->inference->output_tokens_per_s;
        result.unit = "output tokens/s";
    }
    if (!(result.per_s > 0) || !std::isfinite(result.per_s)) {
        return std::nullopt;
    }
    return result;
}

}  // namespace

std::optional<PerfEstimate> diagnose_detail::model_estimate(const Workload& workload, const GpuSpec& gpu, int count,
                                                            const EfficiencyTable& efficiency) {
    const FittingLayout fitting = fitting_layout(workload, gpu, count, ServingStack::automatic);
    if (!fitting.found()) {
        return std::nullopt;
    }
    try {
        PerfQuery query;
        query.layout = fitting.layout;
        return estimate_perf(workload, gpu, query, efficiency);
    } catch (const InputError&) {
        // A catalog GPU with no matrix rate the model can use (perf.cpp, matmul_peak_flops_per_s).
        return std::nullopt;
    }
}

FixWorth estimate_fix_worth(const Diagnosis& diagnosis, const Workload& workload, const GpuSpec* gpu,
                            const Catalog& catalog, const EfficiencyTable& efficiency) {
    FixWorth worth;
    worth.workload = workload.name;
    worth.gpu_count = static_cast<int>(std::max<std::size_t>(diagnosis.job_gpus.size(), 1));
    if (gpu == nullptr) {
        worth.note = "pass --gpu ID (the catalog id of the job's GPU) to predict what the fixes are worth";
        return worth;
    }
    worth.gpu = gpu->id;
    // The waits diagnose finds are outside the GPUs: the model runs without the workload's own
    // input-pipeline description, to give the speed the GPUs reach when nothing starves them.
    Workload unobstructed = workload;
    unobstructed.data.given = false;
    unobstructed.data.modelled = false;
    const std::optional<Throughput> here = unobstructed_throughput(unobstructed, *gpu, worth.gpu_count, efficiency);
    if (!here) {
        worth.note = fmt::format("the performance model cannot place workload '{}' on {} x {}", workload.name,
                                 worth.gpu_count, gpu->id);
        return worth;
    }
    worth.available = true;
    worth.unit = here->unit;
    worth.after_fix_per_s = here->per_s;
    worth.model_busy_share = here->busy_share;
    if (diagnosis.gpu_busy_pct) {
        worth.observed_busy_share = *diagnosis.gpu_busy_pct / 100;
        // First order: the GPUs deliver in proportion to the share of time they compute.
        const double ratio = here->busy_share > 0 ? std::min(1.0, *worth.observed_busy_share / here->busy_share) : 1.0;
        worth.now_per_s = here->per_s * ratio;
    }
    for (const GpuSpec& other : catalog.gpus()) {
        if (other.memory_bytes < gpu->memory_bytes) {
            continue;
        }
        const std::optional<Throughput> there =
            unobstructed_throughput(unobstructed, other, worth.gpu_count, efficiency);
        if (there && there->unit == here->unit && there->per_s > worth.fastest_per_s) {
            worth.fastest_per_s = there->per_s;
            worth.fastest_gpu = other.id;
        }
    }
    worth.note = fmt::format(
        "gpusel's performance model for {} x {} with nothing outside the GPUs limiting; 'now' "
        "scales it by the observed GPU utilisation over the {:.0f} % the model predicts",
        worth.gpu_count, gpu->id, here->busy_share * 100);
    return worth;
}

}  // namespace gpusel
