#include "report/diagnose_render.hpp"

#include <algorithm>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "base/text.hpp"
#include "io/json_output.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

// Text that can carry bytes of an input file (notes quote labels and column names; sources and
// file names are paths) is printed through printable_text: control characters and invalid
// UTF-8 come out as \xNN, so that no input can move the cursor, ring the bell or start a line
// a CI log reads as a command (docs/reliability.md).

using Json = nlohmann::ordered_json;

// Every number in the text goes through here: a non-finite value (a division by an idle GPU's
// zero) prints as "—", never as "inf" or "nan"; in JSON json_number() writes it as null.
std::string number_text(double value) {
    return std::isfinite(value) ? fmt::format("{}", value) : "—";
}

std::string comparison(const Evidence& evidence) {
    return evidence.above ? ">" : "<";
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
    TextTable table{{"evidence"},
                    {"mean", TextTable::Align::right},
                    {"p5", TextTable::Align::right},
                    {"p95", TextTable::Align::right},
                    {"threshold", TextTable::Align::right},
                    {"beyond", TextTable::Align::right},
                    {"samples", TextTable::Align::right},
                    {"source"}};
    for (const Evidence& e : verdict.evidence) {
        table.add_row({e.metric, number_text(e.mean), e.p5 ? number_text(*e.p5) : "—",
                       e.p95 ? number_text(*e.p95) : "—", fmt::format("{} {}", comparison(e), number_text(e.threshold)),
                       e.share_beyond ? format_percent(*e.share_beyond) : "—",
                       e.samples > 0 ? std::to_string(e.samples) : "—", printable_text(e.source)});
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
        out << "  warning: " << printable_text(warning) << "\n";
    }
    for (const std::string& phase : capture.phases) {
        out << "  " << printable_text(phase) << "\n";
    }
}

Json evidence_json(const Evidence& e, const std::string& path, std::vector<std::string>& notes) {
    Json entry;
    entry["metric"] = e.metric;
    entry["mean"] = json_number(path + ".mean", e.mean, notes);
    entry["p5"] = json_number(path + ".p5", e.p5, notes);
    entry["p95"] = json_number(path + ".p95", e.p95, notes);
    entry["threshold"] = json_number(path + ".threshold", e.threshold, notes);
    entry["share_beyond"] = json_number(path + ".share_beyond", e.share_beyond, notes);
    entry["comparison"] = comparison(e);
    entry["samples"] = e.samples;
    entry["source"] = e.source;
    return entry;
}

Json signals_json(const std::vector<SignalEvidence>& signals, const std::string& path,
                  std::vector<std::string>& notes) {
    Json list = Json::array();
    for (const SignalEvidence& signal : signals) {
        const std::string at = fmt::format("{}[{}]", path, list.size());
        Json entry = evidence_json(signal.evidence, at, notes);
        entry["holds"] = signal.holds;
        entry["weight"] = json_number(at + ".weight", signal.weight, notes);
        entry["meaning"] = signal.meaning;
        list.push_back(std::move(entry));
    }
    return list;
}

Json verdict_json(const Verdict& verdict, const std::string& path, std::vector<std::string>& notes) {
    const DiagnosisRule& rule = *verdict.rule;
    Json item;
    item["bottleneck"] = std::string(to_string(rule.bottleneck));
    item["severity"] = std::string(to_string(rule.severity));
    item["rule"] = rule.id;
    Json evidence = Json::array();
    for (const Evidence& e : verdict.evidence) {
        evidence.push_back(evidence_json(e, fmt::format("{}.evidence[{}]", path, evidence.size()), notes));
    }
    item["evidence"] = std::move(evidence);
    item["remedies"] = verdict.remedies;
    item["gpu_upgrade_helps"] = rule.gpu_upgrade_helps;
    item["upgrade_note"] = rule.upgrade_note;
    item["finding"] = rule.finding;
    item["rationale"] = rule.rationale;
    item["summary"] = verdict.summary;
    item["details"] = verdict.details;
    item["expected_gain"] = json_number(path + ".expected_gain", verdict.expected_gain, notes);
    item["confidence"] = std::string(to_string(verdict.confidence));
    item["score"] = json_number(path + ".score", verdict.score, notes);
    item["supporting"] = signals_json(verdict.supporting, path + ".supporting", notes);
    item["contradicting"] = signals_json(verdict.contradicting, path + ".contradicting", notes);
    return item;
}

Json verdicts_json(const std::vector<Verdict>& verdicts, const std::string& path, std::vector<std::string>& notes) {
    Json list = Json::array();
    for (const Verdict& verdict : verdicts) {
        list.push_back(verdict_json(verdict, fmt::format("{}[{}]", path, list.size()), notes));
    }
    return list;
}

Json capture_json(const CaptureQuality& capture, std::vector<std::string>& notes) {
    Json item;
    item["samples_per_gpu"] = capture.samples_per_gpu;
    item["duration_s"] = json_number("capture.duration_s", capture.duration_s, notes);
    item["min_samples"] = min_capture_samples;
    item["min_duration_s"] = min_capture_seconds;
    item["too_short"] = capture.too_short;
    item["idle"] = capture.idle;
    Json per_gpu = Json::array();
    for (const GpuBusy& gpu : capture.per_gpu) {
        const std::string at = fmt::format("capture.per_gpu[{}].busy_pct", per_gpu.size());
        per_gpu.push_back(
            Json{{"gpu", gpu.gpu}, {"busy_pct", json_number(at, gpu.busy_pct, notes)}, {"samples", gpu.samples}});
    }
    item["per_gpu"] = std::move(per_gpu);
    item["phases"] = capture.phases;
    item["warnings"] = capture.warnings;
    return item;
}

Json serving_json(const ServingContext& serving, std::vector<std::string>& notes) {
    if (!serving.serving) {
        return Json(nullptr);
    }
    Json item;
    item["engine"] = serving.engine.empty() ? Json(nullptr) : Json(serving.engine);
    item["engine_source"] = serving.engine_source;
    item["paged"] = serving.paged;
    item["gpu_memory_utilization"] =
        json_number("serving.gpu_memory_utilization", serving.gpu_memory_utilization, notes);
    item["requests_per_s"] = json_number("serving.requests_per_s", serving.requests_per_s, notes);
    item["requests_source"] = serving.requests_source;
    item["carry_requests_per_s"] = json_number("serving.carry_requests_per_s", serving.carry_requests_per_s, notes);
    item["carry_source"] = !serving.carry_requests_per_s ? Json(nullptr)
                           : serving.carry_from_model    ? Json("performance-model")
                                                         : Json("utilisation-headroom");
    item["carry_method"] = serving.carry_method;
    item["output_tokens_per_s"] = json_number("serving.output_tokens_per_s", serving.output_tokens_per_s, notes);
    item["prompt_tokens_per_s"] = json_number("serving.prompt_tokens_per_s", serving.prompt_tokens_per_s, notes);
    item["running_requests"] = json_number("serving.running_requests", serving.running_requests, notes);
    item["kv_cache_used_pct"] = json_number("serving.kv_cache_used_pct", serving.kv_cache_used_pct, notes);
    item["tpot_s"] = json_number("serving.tpot_s", serving.tpot_s, notes);
    item["ttft_s"] = json_number("serving.ttft_s", serving.ttft_s, notes);
    item["metrics_source"] = serving.metrics_source.empty() ? Json(nullptr) : Json(serving.metrics_source);
    return item;
}

void render_serving_text(const ServingContext& serving, std::ostream& out) {
    if (!serving.serving) {
        return;
    }
    out << fmt::format("\nserving: {}{}\n", serving.engine.empty() ? "an inference workload" : serving.engine,
                       serving.engine_source.empty() ? "" : ", from " + printable_text(serving.engine_source));
    if (serving.paged) {
        out << "  it pre-allocates its memory: framebuffer use is not read as memory pressure\n";
    }
    std::vector<std::string> figures;
    if (serving.output_tokens_per_s) {
        figures.push_back(fmt::format("{:g} output tokens/s", *serving.output_tokens_per_s));
    }
    if (serving.running_requests) {
        figures.push_back(fmt::format("{:g} running requests on average", *serving.running_requests));
    }
    if (serving.tpot_s) {
        figures.push_back(fmt::format("{:g} ms per output token", *serving.tpot_s * 1000));
    }
    if (serving.ttft_s) {
        figures.push_back(fmt::format("{:g} ms to the first token", *serving.ttft_s * 1000));
    }
    if (!figures.empty()) {
        std::string line;
        for (const std::string& figure : figures) {
            line += (line.empty() ? "" : ", ") + figure;
        }
        out << "  the engine's metrics (" << printable_text(serving.metrics_source) << "): " << line << "\n";
    }
}

Json inputs_json(const std::vector<InputSummary>& inputs) {
    Json list = Json::array();
    for (const InputSummary& input : inputs) {
        Json entry;
        entry["kind"] = std::string(to_string(input.kind));
        entry["file"] = input.file;
        entry["samples"] = input.samples;
        entry["gpus"] = input.gpus;
        list.push_back(std::move(entry));
    }
    return list;
}

Json fix_worth_json(const FixWorth& worth, std::vector<std::string>& notes) {
    Json item;
    item["name"] = worth.workload;
    item["available"] = worth.available;
    item["gpu"] = worth.gpu.empty() ? Json(nullptr) : Json(worth.gpu);
    item["gpu_count"] = worth.gpu_count;
    item["unit"] = worth.unit;
    item["now_per_s"] = json_number("workload.now_per_s", worth.now_per_s, notes);
    item["after_fix_per_s"] =
        worth.available ? json_number("workload.after_fix_per_s", worth.after_fix_per_s, notes) : Json(nullptr);
    item["observed_busy_share"] = json_number("workload.observed_busy_share", worth.observed_busy_share, notes);
    item["model_busy_share"] =
        worth.available ? json_number("workload.model_busy_share", worth.model_busy_share, notes) : Json(nullptr);
    item["fastest_gpu"] = worth.fastest_gpu.empty() ? Json(nullptr) : Json(worth.fastest_gpu);
    item["fastest_per_s"] =
        worth.fastest_gpu.empty() ? Json(nullptr) : json_number("workload.fastest_per_s", worth.fastest_per_s, notes);
    item["note"] = worth.note;
    return item;
}

}  // namespace

void render_diagnose_text(const DiagnoseResult& result, std::ostream& out, const DiagnoseStyle& style) {
    const Diagnosis& diagnosis = result.diagnosis;
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
    render_serving_text(diagnosis.serving, out);
    if (diagnosis.verdicts.empty()) {
        out << "\nNo rule could be evaluated with these inputs; see below for what each one needs.\n";
    }
    for (const Verdict& verdict : diagnosis.verdicts) {
        const DiagnosisRule& rule = *verdict.rule;
        out << fmt::format("\n[{}] {}: {} (rule {}), confidence {}\n", to_string(rule.severity),
                           to_string(rule.bottleneck), rule.finding, rule.id, to_string(verdict.confidence));
        out << "  " << printable_text(verdict.summary) << "\n";
        if (!verdict.evidence.empty()) {
            render_evidence_table(verdict, out);
        }
        render_signals(verdict, out);
        for (const std::string& detail : verdict.details) {
            out << "  " << printable_text(detail) << "\n";
        }
        out << "  remedies, largest expected gain first:\n";
        for (std::size_t i = 0; i < verdict.remedies.size(); ++i) {
            out << fmt::format("    {}. {}\n", i + 1, verdict.remedies[i]);
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
            out << fmt::format("  {} ({}): {}\n", verdict.rule->id, to_string(verdict.rule->bottleneck),
                               printable_text(verdict.summary));
            render_signals(verdict, out);
        }
    }
    if (result.fix_worth) {
        render_fix_worth_text(diagnosis, *result.fix_worth, out);
    }
    if (style.quiet) {
        return;
    }
    if (!diagnosis.not_evaluated.empty()) {
        out << "\nnot evaluated:\n";
        for (const SkippedRule& skipped : diagnosis.not_evaluated) {
            out << fmt::format("  {}: {}\n", skipped.rule, printable_text(skipped.reason));
        }
    }
    out << "\ninputs:\n";
    for (const InputSummary& input : diagnosis.inputs) {
        std::string gpu_list;
        for (std::size_t i = 0; i < input.gpus.size(); ++i) {
            gpu_list += (i == 0 ? "" : ", ") + std::to_string(input.gpus[i]);
        }
        out << fmt::format("  {}: {}, {} row{}{}\n", to_string(input.kind), printable_text(input.file), input.samples,
                           input.samples == 1 ? "" : "s", gpu_list.empty() ? "" : ", GPUs " + gpu_list);
    }
    if (!diagnosis.notes.empty()) {
        out << "\nnotes:\n";
        for (const std::string& note : diagnosis.notes) {
            out << "  " << printable_text(note) << "\n";
        }
    }
}

void render_diagnose_json(const DiagnoseResult& result, std::ostream& out) {
    const Diagnosis& diagnosis = result.diagnosis;
    std::vector<std::string> notes = diagnosis.notes;
    Json document;
    document["format_version"] = 1;
    document["verdicts"] = verdicts_json(diagnosis.verdicts, "verdicts", notes);
    document["inputs"] = inputs_json(diagnosis.inputs);
    document["job_gpus"] = diagnosis.job_gpus;
    Json skipped = Json::array();
    for (const SkippedRule& rule : diagnosis.not_evaluated) {
        skipped.push_back(Json{{"rule", rule.rule}, {"reason", rule.reason}});
    }
    document["not_evaluated"] = std::move(skipped);
    document["notes"] = nullptr;  // keeps its place; filled last, when every number has been seen
    document["workload"] = result.fix_worth ? fix_worth_json(*result.fix_worth, notes) : Json(nullptr);
    document["ruled_out"] = verdicts_json(diagnosis.ruled_out, "ruled_out", notes);
    document["tell_apart"] = diagnosis.tell_apart;
    document["capture"] = capture_json(diagnosis.capture, notes);
    document["serving"] = serving_json(diagnosis.serving, notes);
    document["notes"] = notes;
    // Input files are untrusted: invalid UTF-8 in a file name or command becomes U+FFFD rather
    // than an exception (dump_json).
    out << dump_json(document);
}

}  // namespace gpusel
