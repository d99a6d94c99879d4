// gpusel diagnose [--dmon F] [--dcgm F] [--prom F] [--query F] [--cpu F] [--perf F] [--topo F]
//                 [--query-fields LIST] [--gpu ID] [--workload W] [--format text|json]

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "base/format.hpp"
#include "cli/context.hpp"
#include "diagnose/diagnose.hpp"
#include "io/json_output.hpp"
#include "report/text_table.hpp"

namespace gpusel::cli {

namespace {

struct DiagnoseOptions {
    std::string dmon, dcgm, prom, query, cpu, perf, topo;
    std::string query_fields;
    std::string gpu;
    std::string workload;
    std::string format = "text";
};

std::string display_name(const std::string& path) {
    return path == "-" ? "<stdin>" : path;
}

// Every number that reaches an output goes through here or json_number: a non-finite value
// (a division by an idle GPU's zero) prints as "—" / null, never as "inf" or "nan".
std::string number_text(double value) {
    return std::isfinite(value) ? fmt::format("{}", value) : "—";
}

nlohmann::ordered_json json_number(double value) {
    return std::isfinite(value) ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

std::string comparison(const Evidence& evidence) {
    return evidence.above ? ">" : "<";
}

nlohmann::ordered_json optional_number(const std::optional<double>& value) {
    return value ? json_number(*value) : nlohmann::ordered_json(nullptr);
}

bool has_problem_that_a_gpu_does_not_fix(const Diagnosis& diagnosis) {
    return std::any_of(diagnosis.verdicts.begin(), diagnosis.verdicts.end(), [](const Verdict& verdict) {
        return verdict.rule->severity != Severity::info && !verdict.rule->gpu_upgrade_helps;
    });
}

void render_fix_worth_text(const Diagnosis& diagnosis, const FixWorth& worth, std::ostream& out) {
    if (!worth.available) {
        out << fmt::format("\nworkload {}: {}\n", worth.workload, worth.note);
        return;
    }
    out << fmt::format("\nwhat the fixes are worth (workload {}, {} x {}):\n", worth.workload, worth.gpu_count,
                       worth.gpu);
    if (worth.now_per_s && worth.observed_busy_share && *worth.now_per_s > 0) {
        out << fmt::format("  now, at {:.0f} % GPU utilisation: about {}\n", *worth.observed_busy_share * 100,
                           format_rate(*worth.now_per_s, worth.unit));
        out << fmt::format("  with nothing outside the GPUs limiting: up to {} ({:.2f} x now)\n",
                           format_rate(worth.after_fix_per_s, worth.unit), worth.after_fix_per_s / *worth.now_per_s);
    } else if (worth.now_per_s) {
        // An idle capture: nothing is delivered now, so there is no "times now" to print.
        out << fmt::format("  now, at {:.0f} % GPU utilisation: nothing (no job seems to be running)\n",
                           worth.observed_busy_share.value_or(0) * 100);
        out << fmt::format("  with nothing outside the GPUs limiting: up to {}\n",
                           format_rate(worth.after_fix_per_s, worth.unit));
    } else {
        out << fmt::format("  with nothing outside the GPUs limiting: up to {}\n",
                           format_rate(worth.after_fix_per_s, worth.unit));
    }
    std::string before;
    if (has_problem_that_a_gpu_does_not_fix(diagnosis)) {
        before = "before the fixes above, no (a faster GPU would wait the same); after them, ";
    }
    if (worth.fastest_gpu.empty() || worth.fastest_gpu == worth.gpu) {
        out << fmt::format(
            "  a different GPU: {}no catalog GPU with at least this memory is predicted faster than {}\n", before,
            worth.gpu);
    } else {
        out << fmt::format(
            "  a different GPU: {}the fastest catalog GPU with at least this memory, {}, would reach {} "
            "({:.2f} x {})\n",
            before, worth.fastest_gpu, format_rate(worth.fastest_per_s, worth.unit),
            worth.fastest_per_s / worth.after_fix_per_s, worth.gpu);
    }
    out << "  (" << worth.note << ")\n";
}

std::string signal_text(const SignalEvidence& signal) {
    const Evidence& e = signal.evidence;
    return fmt::format("{} ({} {} {} {}, weight {})", signal.meaning, e.metric, number_text(e.mean), comparison(e),
                       number_text(e.threshold), number_text(signal.weight));
}

void render_evidence_table(const Verdict& verdict, std::ostream& out) {
    TextTable table;
    table.add_column("evidence");
    table.add_column("mean", TextTable::Align::right);
    table.add_column("p5", TextTable::Align::right);
    table.add_column("p95", TextTable::Align::right);
    table.add_column("threshold", TextTable::Align::right);
    table.add_column("beyond", TextTable::Align::right);
    table.add_column("samples", TextTable::Align::right);
    table.add_column("source");
    for (const Evidence& e : verdict.evidence) {
        table.add_row({e.metric, number_text(e.mean), e.p5 ? number_text(*e.p5) : "—",
                       e.p95 ? number_text(*e.p95) : "—", fmt::format("{} {}", comparison(e), number_text(e.threshold)),
                       e.share_beyond ? format_percent(*e.share_beyond) : "—",
                       e.samples > 0 ? std::to_string(e.samples) : "—", e.source});
    }
    out << table.render(2);
}

// Signals that held, for and against; the ones that did not hold are in the JSON.
void render_signals(const Verdict& verdict, std::ostream& out) {
    for (const auto* signals : {&verdict.supporting, &verdict.contradicting}) {
        const char* label = signals == &verdict.supporting ? "for" : "against";
        for (const SignalEvidence& signal : *signals) {
            if (signal.holds) {
                out << fmt::format("  {}: {}\n", label, signal_text(signal));
            }
        }
    }
}

void render_capture(const CaptureQuality& capture, std::ostream& out) {
    if (capture.per_gpu.empty()) {
        return;
    }
    out << fmt::format("\ncapture: {} steady sample{} per GPU{}\n", capture.samples_per_gpu,
                       capture.samples_per_gpu == 1 ? "" : "s",
                       capture.duration_s ? fmt::format(" over {:.0f} s", *capture.duration_s) : "");
    for (const std::string& warning : capture.warnings) {
        out << "  warning: " << warning << "\n";
    }
    for (const std::string& phase : capture.phases) {
        out << "  " << phase << "\n";
    }
}

void render_text(const Diagnosis& diagnosis, const std::optional<std::pair<std::string, FixWorth>>& workload,
                 Context& context) {
    std::ostream& out = context.out;
    std::size_t problems = 0;
    for (const Verdict& verdict : diagnosis.verdicts) {
        problems += verdict.rule->severity == Severity::info ? 0U : 1U;
    }
    std::string gpus;
    for (std::size_t i = 0; i < diagnosis.job_gpus.size(); ++i) {
        gpus += (i == 0 ? "" : ", ") + std::to_string(diagnosis.job_gpus[i]);
    }
    out << fmt::format("diagnose: {} finding{} to fix, from {} input{}{}\n", problems, problems == 1 ? "" : "s",
                       diagnosis.inputs.size(), diagnosis.inputs.size() == 1 ? "" : "s",
                       gpus.empty() ? "" : fmt::format(" (GPU{} {})", diagnosis.job_gpus.size() == 1 ? "" : "s", gpus));
    render_capture(diagnosis.capture, out);
    if (diagnosis.verdicts.empty()) {
        out << "\nNo rule could be evaluated with these inputs; see below for what each one needs.\n";
    }
    for (const Verdict& verdict : diagnosis.verdicts) {
        const DiagnosisRule& rule = *verdict.rule;
        out << fmt::format("\n[{}] {}: {} (rule {}), confidence {}\n", to_string(rule.severity), rule.bottleneck,
                           rule.finding, rule.id, to_string(verdict.confidence));
        out << "  " << verdict.summary << "\n";
        if (!verdict.evidence.empty()) {
            render_evidence_table(verdict, out);
        }
        render_signals(verdict, out);
        for (const std::string& detail : verdict.details) {
            out << "  " << detail << "\n";
        }
        out << "  remedies, largest expected gain first:\n";
        for (std::size_t i = 0; i < rule.remedies.size(); ++i) {
            out << fmt::format("    {}. {}\n", i + 1, rule.remedies[i]);
        }
        out << fmt::format("  a different GPU would help: {} ({})\n", rule.gpu_upgrade_helps ? "yes" : "no",
                           rule.upgrade_note);
    }
    if (!diagnosis.tell_apart.empty()) {
        out << "\nto tell the leading causes apart, capture:\n";
        for (const std::string& hint : diagnosis.tell_apart) {
            out << "  " << hint << "\n";
        }
    }
    if (!diagnosis.ruled_out.empty()) {
        out << "\nruled out (the conditions held, the evidence against outweighs them):\n";
        for (const Verdict& verdict : diagnosis.ruled_out) {
            out << fmt::format("  {} ({}): {}\n", verdict.rule->id, verdict.rule->bottleneck, verdict.summary);
            render_signals(verdict, out);
        }
    }
    if (workload) {
        render_fix_worth_text(diagnosis, workload->second, out);
    }
    if (context.quiet) {
        return;
    }
    if (!diagnosis.not_evaluated.empty()) {
        out << "\nnot evaluated:\n";
        for (const SkippedRule& skipped : diagnosis.not_evaluated) {
            out << fmt::format("  {}: {}\n", skipped.rule, skipped.reason);
        }
    }
    out << "\ninputs:\n";
    for (const InputSummary& input : diagnosis.inputs) {
        std::string gpu_list;
        for (std::size_t i = 0; i < input.gpus.size(); ++i) {
            gpu_list += (i == 0 ? "" : ", ") + std::to_string(input.gpus[i]);
        }
        out << fmt::format("  {}: {}, {} row{}{}\n", to_string(input.kind), input.file, input.samples,
                           input.samples == 1 ? "" : "s", gpu_list.empty() ? "" : ", GPUs " + gpu_list);
    }
    if (!diagnosis.notes.empty()) {
        out << "\nnotes:\n";
        for (const std::string& note : diagnosis.notes) {
            out << "  " << note << "\n";
        }
    }
}

nlohmann::ordered_json evidence_json(const Evidence& e) {
    nlohmann::ordered_json entry;
    entry["metric"] = e.metric;
    entry["mean"] = json_number(e.mean);
    entry["p5"] = optional_number(e.p5);
    entry["p95"] = optional_number(e.p95);
    entry["threshold"] = json_number(e.threshold);
    entry["share_beyond"] = optional_number(e.share_beyond);
    entry["comparison"] = comparison(e);
    entry["samples"] = e.samples;
    entry["source"] = e.source;
    return entry;
}

nlohmann::ordered_json signals_json(const std::vector<SignalEvidence>& signals) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const SignalEvidence& signal : signals) {
        nlohmann::ordered_json entry = evidence_json(signal.evidence);
        entry["holds"] = signal.holds;
        entry["weight"] = json_number(signal.weight);
        entry["meaning"] = signal.meaning;
        list.push_back(std::move(entry));
    }
    return list;
}

nlohmann::ordered_json verdict_json(const Verdict& verdict) {
    using json = nlohmann::ordered_json;
    const DiagnosisRule& rule = *verdict.rule;
    json item;
    item["bottleneck"] = rule.bottleneck;
    item["severity"] = std::string(to_string(rule.severity));
    item["rule"] = rule.id;
    json evidence = json::array();
    for (const Evidence& e : verdict.evidence) {
        evidence.push_back(evidence_json(e));
    }
    item["evidence"] = std::move(evidence);
    item["remedies"] = rule.remedies;
    item["gpu_upgrade_helps"] = rule.gpu_upgrade_helps;
    item["upgrade_note"] = rule.upgrade_note;
    item["finding"] = rule.finding;
    item["rationale"] = rule.rationale;
    item["summary"] = verdict.summary;
    item["details"] = verdict.details;
    item["expected_gain"] = json_number(verdict.expected_gain);
    item["confidence"] = std::string(to_string(verdict.confidence));
    item["score"] = json_number(verdict.score);
    item["supporting"] = signals_json(verdict.supporting);
    item["contradicting"] = signals_json(verdict.contradicting);
    return item;
}

nlohmann::ordered_json capture_json(const CaptureQuality& capture) {
    using json = nlohmann::ordered_json;
    json item;
    item["samples_per_gpu"] = capture.samples_per_gpu;
    item["duration_s"] = capture.duration_s ? json_number(*capture.duration_s) : json(nullptr);
    item["min_samples"] = min_capture_samples;
    item["min_duration_s"] = min_capture_seconds;
    item["too_short"] = capture.too_short;
    item["idle"] = capture.idle;
    json per_gpu = json::array();
    for (const GpuBusy& gpu : capture.per_gpu) {
        per_gpu.push_back(json{{"gpu", gpu.gpu}, {"busy_pct", json_number(gpu.busy_pct)}, {"samples", gpu.samples}});
    }
    item["per_gpu"] = std::move(per_gpu);
    item["phases"] = capture.phases;
    item["warnings"] = capture.warnings;
    return item;
}

void render_json(const Diagnosis& diagnosis, const std::optional<std::pair<std::string, FixWorth>>& workload,
                 Context& context) {
    using json = nlohmann::ordered_json;
    json document;
    document["format_version"] = 1;
    json verdicts = json::array();
    for (const Verdict& verdict : diagnosis.verdicts) {
        verdicts.push_back(verdict_json(verdict));
    }
    document["verdicts"] = std::move(verdicts);
    json inputs = json::array();
    for (const InputSummary& input : diagnosis.inputs) {
        json entry;
        entry["kind"] = std::string(to_string(input.kind));
        entry["file"] = input.file;
        entry["samples"] = input.samples;
        entry["gpus"] = input.gpus;
        inputs.push_back(std::move(entry));
    }
    document["inputs"] = std::move(inputs);
    document["job_gpus"] = diagnosis.job_gpus;
    json skipped = json::array();
    for (const SkippedRule& rule : diagnosis.not_evaluated) {
        skipped.push_back(json{{"rule", rule.rule}, {"reason", rule.reason}});
    }
    document["not_evaluated"] = std::move(skipped);
    document["notes"] = diagnosis.notes;
    if (workload) {
        const FixWorth& worth = workload->second;
        json item;
        item["name"] = worth.workload;
        item["available"] = worth.available;
        item["gpu"] = worth.gpu.empty() ? json(nullptr) : json(worth.gpu);
        item["gpu_count"] = worth.gpu_count;
        item["unit"] = worth.unit;
        item["now_per_s"] = optional_number(worth.now_per_s);
        item["after_fix_per_s"] = worth.available ? json_number(worth.after_fix_per_s) : json(nullptr);
        item["observed_busy_share"] = optional_number(worth.observed_busy_share);
        item["model_busy_share"] = worth.available ? json_number(worth.model_busy_share) : json(nullptr);
        item["fastest_gpu"] = worth.fastest_gpu.empty() ? json(nullptr) : json(worth.fastest_gpu);
        item["fastest_per_s"] = worth.fastest_gpu.empty() ? json(nullptr) : json_number(worth.fastest_per_s);
        item["note"] = worth.note;
        document["workload"] = std::move(item);
    } else {
        document["workload"] = nullptr;
    }
    json ruled_out = json::array();
    for (const Verdict& verdict : diagnosis.ruled_out) {
        ruled_out.push_back(verdict_json(verdict));
    }
    document["ruled_out"] = std::move(ruled_out);
    document["tell_apart"] = diagnosis.tell_apart;
    document["capture"] = capture_json(diagnosis.capture);
    // Input files are untrusted: invalid UTF-8 in a file name or command becomes U+FFFD rather
    // than an exception (dump_json).
    context.out << dump_json(document);
}

void run_diagnose(Context& context, const DiagnoseOptions& options) {
    const std::vector<const std::string*> paths = {&options.dmon, &options.dcgm, &options.prom, &options.query,
                                                   &options.cpu,  &options.perf, &options.topo};
    std::size_t given = 0;
    std::size_t from_stdin = 0;
    for (const std::string* path : paths) {
        given += path->empty() ? 0U : 1U;
        from_stdin += *path == "-" ? 1U : 0U;
    }
    if (given == 0) {
        throw UsageError("diagnose needs at least one input: --dmon, --dcgm, --prom, --query, --cpu, --perf or --topo");
    }
    if (from_stdin > 1) {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    if (!options.query_fields.empty() && options.query.empty()) {
        throw UsageError("--query-fields describes a --query file; pass --query too");
    }
    DiagnoseInputs inputs;
    if (!options.gpu.empty()) {
        inputs.gpu = context.catalog().find(options.gpu);
        if (inputs.gpu == nullptr) {
            const std::string suggestion = context.catalog().suggest(options.gpu);
            throw UsageError(fmt::format(
                "--gpu: unknown GPU '{}'{}", options.gpu,
                suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
        }
    }
    // A bad field list is a bad flag value (exit 2), checked before any file is read.
    std::vector<std::string> query_fields;
    if (!options.query_fields.empty()) {
        try {
            query_fields = split_query_fields(options.query_fields, "--query-fields");
        } catch (const InputError& error) {
            throw UsageError(format_diagnostic(error.diagnostics().front()));
        }
    }
    if (!options.dmon.empty()) {
        inputs.dmon = parse_nvidia_smi_dmon(read_telemetry_file(options.dmon), display_name(options.dmon));
    }
    if (!options.dcgm.empty()) {
        inputs.dcgm = parse_dcgmi_dmon(read_telemetry_file(options.dcgm), display_name(options.dcgm));
    }
    if (!options.prom.empty()) {
        inputs.prometheus = parse_prometheus(read_telemetry_file(options.prom), display_name(options.prom));
    }
    if (!options.query.empty()) {
        inputs.query =
            parse_nvidia_smi_query(read_telemetry_file(options.query), display_name(options.query), query_fields);
    }
    if (!options.cpu.empty()) {
        inputs.cpu = parse_cpu_report(read_telemetry_file(options.cpu), display_name(options.cpu));
    }
    if (!options.perf.empty()) {
        inputs.perf = parse_perf_report(read_telemetry_file(options.perf), display_name(options.perf));
    }
    if (!options.topo.empty()) {
        inputs.topology = parse_nvidia_smi_topo(read_telemetry_file(options.topo), display_name(options.topo));
    }
    const Diagnosis diagnosis = diagnose(inputs);
    std::optional<std::pair<std::string, FixWorth>> workload;
    if (!options.workload.empty()) {
        const Workload loaded = load_workload_file(options.workload, context.load_context());
        workload = std::make_pair(
            loaded.name, estimate_fix_worth(diagnosis, loaded, inputs.gpu, context.catalog(), builtin_efficiency()));
    }
    if (options.format == "json") {
        render_json(diagnosis, workload, context);
    } else {
        render_text(diagnosis, workload, context);
    }
}

}  // namespace

void register_diagnose(CLI::App& app, Context& context) {
    auto options = std::make_shared<DiagnoseOptions>();
    CLI::App* command =
        app.add_subcommand("diagnose", "Find what a running job waits for, from GPU and host telemetry");
    command->add_option("--dmon", options->dmon, "nvidia-smi dmon log (e.g. -s put -o DT)")->type_name("FILE");
    command->add_option("--dcgm", options->dcgm, "dcgmi dmon -e ... log")->type_name("FILE");
    command
        ->add_option("--prom", options->prom,
                     "DCGM exporter metrics: a /metrics scrape, or a Prometheus query_range JSON export")
        ->type_name("FILE");
    command->add_option("--query", options->query, "nvidia-smi --query-gpu=... --format=csv log")->type_name("FILE");
    command
        ->add_option("--query-fields", options->query_fields,
                     "The --query-gpu field list, for a --query file captured with csv,noheader")
        ->type_name("LIST");
    command->add_option("--cpu", options->cpu, "Host CPU report: mpstat, sar -u or top -b")->type_name("FILE");
    command->add_option("--perf", options->perf, "perf report --stdio of the data-loading process")->type_name("FILE");
    command->add_option("--topo", options->topo, "nvidia-smi topo -m")->type_name("FILE");
    command
        ->add_option("--gpu", options->gpu,
                     "Catalog id of the GPU, for memory size and PCIe link when the "
                     "telemetry lacks them")
        ->type_name("ID");
    command->add_option("--workload", options->workload, "Workload file: what each fix would be worth")->type_name("W");
    command->add_option("--format", options->format, "text or json")
        ->check(CLI::IsMember({"text", "json"}))
        ->type_name("F");
    command->footer(
        "\nExamples:\n"
        "  gpusel diagnose --dmon dmon.log --cpu mpstat.log\n"
        "  gpusel diagnose --dcgm dcgm.log --topo topo.txt --format json\n"
        "Capture commands and what each verdict means: docs/diagnose.md\n");
    command->callback([&context, options] { run_diagnose(context, *options); });
}

}  // namespace gpusel::cli
