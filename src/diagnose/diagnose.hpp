#pragma once
// Observed bottlenecks: a differential diagnosis over parsed telemetry (telemetry.hpp). Pure:
// parsed inputs in, verdicts out. Each candidate cause is a rule: conditions that must hold,
// signals that support it and signals that argue against it. Rules, thresholds, weights and
// their rationale live in one table (diagnosis_rules()); docs/diagnose.md explains each verdict
// and how to capture each input.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/catalog.hpp"
#include "inputs/workload.hpp"
#include "perf/perf.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

enum class Severity { error, warning, info };
std::string_view to_string(Severity severity);  // "error", "warning", "info"

// One condition of a rule: the mean of the evidence series `metric` is beyond `value`
// (strictly above when `above`, strictly below otherwise).
struct RuleThreshold {
    std::string metric;  // evidence metric, e.g. "sm_util_pct", "cpu_busy_pct"
    bool above = false;
    double value = 0;
};

// A signal that weighs on a cause without being required: when it holds (same test as a
// threshold), `weight` is added to (supports) or taken from (against) the cause's score.
struct RuleSignal {
    std::string metric;
    bool above = false;
    double value = 0;
    double weight = 0;
    std::string meaning;  // why it weighs: "idle CPUs: the host is not the limit"
};

// How strongly the evidence points at a cause, from its score (1 for the conditions holding,
// plus supporting weights, minus contradicting ones): high >= 1.5, medium >= 1, low > 0,
// unlikely <= 0 (considered and ruled out). A capture too short to judge caps it at low.
enum class Confidence { high, medium, low, unlikely };
std::string_view to_string(Confidence confidence);  // "high", "medium", "low", "unlikely"

// Which jobs a rule reads correctly. A serving engine's pre-allocated memory and request-bound
// utilisation mislead the rules written for training and batch jobs; under-loaded only means
// something for a server.
enum class RuleScope { any, not_serving, serving_only };

struct DiagnosisRule {
    std::string id;  // "gpu-util-low-cpu-high"
    // What the job waits for (perf/bottleneck.hpp, the vocabulary perf's predictions share): any
    // but launch_overhead, printed by its name (input-pipeline, host-transfer, ..., idle, healthy).
    ObservedBottleneck bottleneck = ObservedBottleneck::healthy;
    Severity severity = Severity::warning;
    std::string finding;                    // what it means, short: "data loading", "GPU JPEG decode"
    std::vector<RuleThreshold> thresholds;  // all must hold; empty for "healthy"
    std::vector<RuleSignal> supports;       // raise the score when they hold
    std::vector<RuleSignal> against;        // lower it when they hold
    std::string rationale;                  // why these thresholds, with sources
    std::vector<std::string> remedies;      // largest expected gain first
    bool gpu_upgrade_helps = false;
    std::string upgrade_note;  // why (not)
    RuleScope scope = RuleScope::any;
    std::string serving_reason;  // not_serving: why the rule is not evaluated for a serving engine
};

// The rule table, in evaluation order.
const std::vector<DiagnosisRule>& diagnosis_rules();
// The remedies of `rule` for the job: the rule's own, except where a serving job needs others.
const std::vector<std::string>& remedies_for(const DiagnosisRule& rule, bool serving);
const DiagnosisRule* find_rule(std::string_view id);

// Summary statistics of a series. Percentiles interpolate linearly between order statistics
// (the definition numpy.percentile uses by default). Empty input: count 0, the rest 0.
struct SeriesStats {
    std::size_t count = 0;
    double mean = 0;
    double p5 = 0;
    double p95 = 0;
};
SeriesStats summarize(std::vector<double> values);

struct Evidence {
    std::string metric;       // "sm_util_pct", "cpu_busy_pct", "pcie_link_use_pct", ...
    std::string source;       // the input it came from: "nvidia-smi-dmon dmon.log"
    std::size_t samples = 0;  // 0 for single figures (a profile share, a topology count)
    double mean = 0;
    std::optional<double> p5, p95;  // absent for single figures
    double threshold = 0;
    bool above = false;                  // the rule fires above (true) or below (false) the threshold
    std::optional<double> share_beyond;  // fraction 0..1 of samples beyond the threshold
};

// A supporting or contradicting signal as measured: the evidence, and whether it held.
struct SignalEvidence {
    Evidence evidence;
    double weight = 0;
    std::string meaning;
    bool holds = false;
};

struct Verdict {
    const DiagnosisRule* rule = nullptr;
    double score = 0;  // 1 + supporting weights that hold - contradicting weights that hold
    Confidence confidence = Confidence::medium;
    std::vector<SignalEvidence> supporting;     // the rule's supports that could be measured
    std::vector<SignalEvidence> contradicting;  // the rule's against signals that could be measured
    std::string summary;                        // one sentence with the numbers that matter
    std::vector<Evidence> evidence;             // one per threshold, in the rule's order
    std::vector<std::string> details;           // e.g. GPU pairs and the link between them
    // Ordering key within a severity: the largest share of time (0..1) the fix could give back,
    // read off the evidence (the GPU's idle share, the profile share of the hot spot, the
    // share of samples with a saturated link). 0 where the evidence holds no time share.
    double expected_gain = 0;
    // The remedies printed: the rule's, or for a serving job those of remedies_for (a server's
    // host CPUs run the engine, not a data loader).
    std::vector<std::string> remedies;
};

struct InputSummary {
    TelemetryKind kind = TelemetryKind::nvidia_smi_dmon;
    std::string file;
    std::size_t samples = 0;  // rows: one per GPU per sample time; CPU rows; profile rows; GPUs
    std::vector<int> gpus;
};

struct SkippedRule {
    std::string rule;
    std::string reason;  // which input or field was missing
};

// Whether the capture can carry a verdict at all.
inline constexpr std::size_t min_capture_samples = 30;  // per GPU, steady state
inline constexpr double min_capture_seconds = 30;       // where the tools printed times
inline constexpr double idle_gpu_busy_pct = 5;          // below: no kernels to speak of
inline constexpr double idle_fb_used_pct = 25;          // and little memory held

struct GpuBusy {
    int gpu = 0;
    double busy_pct = 0;  // steady-state mean utilisation
    std::size_t samples = 0;
};

struct CaptureQuality {
    std::size_t samples_per_gpu = 0;    // steady-state samples of the job GPU with the fewest
    std::optional<double> duration_s;   // first to last sample time, where times were printed
    bool too_short = false;             // below min_capture_samples or min_capture_seconds
    bool idle = false;                  // no job seems to be running
    std::vector<std::string> phases;    // warm-up and tail phases left out, per GPU
    std::vector<GpuBusy> per_gpu;       // the job's GPUs, ascending
    std::vector<std::string> warnings;  // why the verdicts are weak
};

// What the job is, where diagnose can tell: a serving engine (from --workload's runtime.engine,
// the process table or the engine's own metrics) and the load it serves. A serving engine reads
// differently: its framebuffer use is the engine's pre-allocation, not memory pressure, and low
// utilisation means few requests (under-loaded), not a starved input pipeline; training remedies
// (checkpointing, 8-bit optimizers, ZeRO) never apply to it.
struct ServingContext {
    bool serving = false;       // an inference job: the workload says so, or an engine was detected
    bool training = false;      // the workload is a training job (never read as serving)
    std::string engine;         // "vllm", "sglang", "tensorrt-llm", ...; empty when unknown
    bool paged = false;         // the engine pre-allocates memory (is_paged_engine)
    std::string engine_source;  // how it is known: "workload W (runtime.engine)", "process ... in FILE"
    std::optional<double> gpu_memory_utilization;  // the workload's runtime.gpu_memory_utilization
    // The request rate the replica served, and where it comes from: the engine's metrics over the
    // capture (vllm:request_success_total), else the workload's inference.requests_per_s.
    std::optional<double> requests_per_s;
    std::string requests_source;
    std::optional<double> output_tokens_per_s;  // the engine's generation-token counter over the capture
    std::optional<double> prompt_tokens_per_s;
    std::optional<double> running_requests;   // mean of the engine's running-requests gauge
    std::optional<double> kv_cache_used_pct;  // mean of its KV-cache usage gauge, percent
    std::optional<double> tpot_s;             // mean time per output token over the capture
    std::optional<double> ttft_s;             // mean time to first token over the capture
    std::string metrics_source;               // the file the engine's metrics came from
    // What the replica could carry: gpusel's performance model's largest load meeting the
    // workload's SLO on the job's GPUs (with --workload and --gpu), else requests_per_s scaled by
    // the utilisation headroom (100 % / observed); carry_method says which. Absent without either.
    std::optional<double> carry_requests_per_s;
    std::string carry_method;
    bool carry_from_model = false;
    std::vector<std::string> notes;  // why a figure is missing, conflicts between sources
};

struct Diagnosis {
    // Plausible causes (confidence above unlikely): by confidence, then severity (error,
    // warning, info), then expected gain.
    std::vector<Verdict> verdicts;
    std::vector<Verdict> ruled_out;       // conditions held, but the evidence against outweighs
    std::vector<std::string> tell_apart;  // which capture would separate the top causes
    CaptureQuality capture;
    std::vector<InputSummary> inputs;
    std::vector<int> job_gpus;  // the GPUs the rules looked at
    // Mean GPU utilisation of the job's GPUs over the capture (the series the rules use), and
    // where it came from; absent without GPU utilisation.
    std::optional<double> gpu_busy_pct;
    std::string gpu_busy_source;
    std::vector<SkippedRule> not_evaluated;
    std::vector<std::string> notes;  // parser notes ("file: note") and assumptions
    ServingContext serving;
};

struct DiagnoseInputs {
    std::optional<GpuTelemetry> dmon;        // nvidia-smi dmon
    std::optional<GpuTelemetry> dcgm;        // dcgmi dmon
    std::optional<GpuTelemetry> query;       // nvidia-smi --query-gpu
    std::optional<GpuTelemetry> prometheus;  // DCGM exporter: a scrape or a query_range export
    std::optional<CpuTelemetry> cpu;
    std::optional<PerfProfile> perf;
    std::optional<Topology> topology;
    std::optional<GpuProcessTable> processes;  // nvidia-smi's process table: which engine holds the GPUs
    // The job's workload (--workload): whether it trains or serves, and with which engine. Optional.
    const Workload* workload = nullptr;
    // With workload and gpu: the performance model's capacity at the SLO gives what an
    // under-loaded replica could carry. Optional.
    const EfficiencyTable* efficiency = nullptr;
    // The GPU the job ran on, from the catalog (--gpu): framebuffer size and host link when the
    // telemetry does not carry them. Optional.
    const GpuSpec* gpu = nullptr;
};

Diagnosis diagnose(const DiagnoseInputs& inputs);

// What fixing the verdicts is worth for a workload, from the performance model (perf.hpp):
// - after_fix: the model's throughput on the job's GPUs with nothing outside them limiting
//   (the workload's data: section ignored), i.e. what removing the waits can reach at most;
// - now: after_fix scaled by the observed GPU utilisation over the utilisation the model
//   predicts (a GPU that computes half as often as it could delivers about half), never above
//   after_fix; absent without GPU utilisation in the telemetry; 0 for an idle capture (then no
//   ratio to now can be printed);
// - fastest: the fastest catalog GPU, at the same count, with at least the job GPU's memory (so
//   the job still fits as it does now), and its throughput under the same assumptions.
// Throughput: training tokens/s (samples/s for models without tokens), inference output
// tokens/s; whole job. `gpu` may be null: then `available` is false and `note` says why.
struct FixWorth {
    bool available = false;
    std::string note;  // why it is not available, or the assumptions it rests on
    std::string workload;
    std::string gpu;  // catalog id of the job's GPU
    int gpu_count = 0;
    std::string unit;  // "tokens/s", "samples/s", "output tokens/s"
    double after_fix_per_s = 0;
    double model_busy_share = 0;  // GPU utilisation the model predicts, 0..1
    std::optional<double> observed_busy_share;
    std::optional<double> now_per_s;
    std::string fastest_gpu;  // empty when no other GPU could be evaluated
    double fastest_per_s = 0;
};
FixWorth estimate_fix_worth(const Diagnosis& diagnosis, const Workload& workload, const GpuSpec* gpu,
                            const Catalog& catalog, const EfficiencyTable& efficiency);

// What the capture measured, as a `calibration:` block in the format of a workload file
// (docs/workload.md, `calibration`; docs/diagnose.md, "Writing a calibration"): a `speed` point
// per figure a serving engine's metrics give (output tokens/s over the capture at the mean
// running requests as batch; mean time per output token), each with its provenance in a comment
// (the file, the GPUs, what was measured), then, as comments, what was measured but is no
// calibration point (utilisation, framebuffer in use, the request rate). `gpu` is the catalog
// GPU of the points (--gpu). Throws UsageError when points exist but no GPU is named, and
// InputError (at the first input file) when the capture measured nothing a point can hold.
std::string calibration_yaml(const Diagnosis& diagnosis, const GpuSpec* gpu);

}  // namespace gpusel
