#include "report/check_render.hpp"

#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/format.hpp"
#include "base/text.hpp"
#include "check/check.hpp"
#include "io/json_output.hpp"

namespace gpusel {

namespace {

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// Unit suffixes of evidence keys, longest first so that `_per_s` is not read as `_s`.
constexpr std::string_view unit_suffixes[] = {"_flops_per_s", "_usd_per_hour", "_per_s",  "_bytes", "_usd",
                                              "_fraction",    "_ratio",        "_months", "_watts", "_s"};

std::string_view unit_of(std::string_view key) {
    for (const std::string_view suffix : unit_suffixes) {
        if (ends_with(key, suffix) && key.size() > suffix.size()) {
            return suffix;
        }
    }
    return {};
}

// An evidence value: a unitless whole value is a count (a batch, a context length) and is written
// as an integer, since evidence holds every number as a double; any other number follows the
// JSON number policy of its key's unit.
nlohmann::ordered_json evidence_number(const std::string& path, std::string_view key, double value,
                                       std::vector<std::string>& notes) {
    if (unit_of(key).empty() && std::isfinite(value) && value == std::floor(value) && std::fabs(value) < 9e15) {
        return static_cast<long long>(std::llround(value));
    }
    return json_number(path, value, notes);
}

nlohmann::ordered_json position_value(int value) {
    return value > 0 ? nlohmann::ordered_json(value) : nlohmann::ordered_json(nullptr);
}

std::string location(const std::string& file, const Position& position) {
    if (position.line <= 0) {
        return file;
    }
    return position.column > 0 ? fmt::format("{}:{}:{}", file, position.line, position.column)
                               : fmt::format("{}:{}", file, position.line);
}

Money money_of(const CheckReport& report) {
    return Money{report.currency.code, report.currency.per_usd, report.currency.as_of};
}

std::string evidence_line(const Finding& finding, const Money& money) {
    std::vector<std::string> parts;
    for (const EvidenceItem& item : finding.evidence) {
        parts.push_back(evidence_label(item.key) + " " + format_evidence_value(item, money));
    }
    return fmt::format("{}", fmt::join(parts, " · "));
}

// "FILE:L:C: error: training: message [rule]"
std::string headline(const CheckReport& report, const Finding& finding) {
    return fmt::format("{}: {}: {}: {} [{}]", location(report.file, finding.position), to_string(finding.severity),
                       finding.role, finding.message, finding.rule);
}

std::string counts_words(const CheckReport& report) {
    const auto words = [](std::size_t count, const char* word) {
        return fmt::format("{} {}{}", count, word, count == 1 ? "" : "s");
    };
    return fmt::format("{}, {}, {}", words(report.count(FindingSeverity::error), "error"),
                       words(report.count(FindingSeverity::warning), "warning"),
                       words(report.count(FindingSeverity::note), "note"));
}

std::string verdict_line(const CheckReport& report) {
    return fmt::format("{}: check {}: {}", report.file, report.passed() ? "passed" : "failed", counts_words(report));
}

std::string github_command(FindingSeverity severity) {
    switch (severity) {
        case FindingSeverity::error:
            return "error";
        case FindingSeverity::warning:
            return "warning";
        case FindingSeverity::note:
            return "notice";
    }
    return "notice";
}

std::string github_annotation(std::string_view command, const std::string& file, const Position& position,
                              std::string_view title, std::string_view message) {
    std::string properties = "file=" + escape_github_property(file);
    if (position.line > 0) {
        properties += fmt::format(",line={}", position.line);
        if (position.column > 0) {
            properties += fmt::format(",col={}", position.column);
        }
    }
    properties += ",title=" + escape_github_property(title);
    return fmt::format("::{} {}::{}\n", command, properties, escape_github_data(message));
}

std::string xml_declaration() {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
}

}  // namespace

std::string evidence_label(std::string_view key) {
    const std::string_view unit = unit_of(key);
    std::string label(key.substr(0, key.size() - unit.size()));
    for (char& character : label) {
        if (character == '_') {
            character = ' ';
        }
    }
    return label;
}

std::string format_evidence_value(const EvidenceItem& item, const Money& money) {
    if (!item.number) {
        return item.text;
    }
    const double value = *item.number;
    const std::string_view unit = unit_of(item.key);
    if (unit == "_bytes") {
        return format_gb(value);
    }
    if (unit == "_usd_per_hour") {
        return money.cents(value) + "/h";
    }
    if (unit == "_usd") {
        return std::fabs(money.of(value)) < 100 ? money.cents(value) : money.whole(value);
    }
    if (unit == "_s") {
        return format_duration(value);
    }
    if (unit == "_flops_per_s") {
        return fmt::format("{:.0f} TFLOP/s", value / 1e12);
    }
    if (unit == "_per_s") {
        return value >= 100 ? fmt::format("{:.0f}/s", value) : fmt::format("{:.3g}/s", value);
    }
    if (unit == "_fraction") {
        return format_percent(value);
    }
    if (unit == "_watts") {
        return fmt::format("{:.0f} W", value);
    }
    if (unit == "_ratio") {
        return fmt::format("{:.2f}×", value);
    }
    if (unit == "_months") {
        return fmt::format("{:.3g} months", value);
    }
    return value == std::floor(value) && std::fabs(value) < 1e15 ? fmt::format("{:.0f}", value)
                                                                 : fmt::format("{:.4g}", value);
}

std::string escape_github_data(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char character : text) {
        switch (character) {
            case '%':
                out += "%25";
                break;
            case '\r':
                out += "%0D";
                break;
            case '\n':
                out += "%0A";
                break;
            default:
                out += character;
        }
    }
    return out;
}

std::string escape_github_property(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (const char character : escape_github_data(text)) {
        switch (character) {
            case ':':
                out += "%3A";
                break;
            case ',':
                out += "%2C";
                break;
            default:
                out += character;
        }
    }
    return out;
}

std::string render_check_text(const CheckReport& report) {
    std::string out;
    const ProposalPolicy& policy = report.policy;
    out += fmt::format("proposal {} ({})\n", report.proposal, report.file);
    out += fmt::format(
        "policy: memory headroom {} · max overspend {} and {} · missed deadline/SLO is {} · oversize {}{}\n",
        format_percent(policy.memory_headroom_fraction), format_percent(policy.max_overspend_fraction),
        money_of(report).whole(policy.min_saving_usd), policy.require_slo ? "an error" : "a warning",
        policy.warn_oversize ? "warned" : "not checked",
        policy.strict ? fmt::format(" · strict: warnings fail, quotes within {} of the catalog",
                                    format_percent(policy.max_price_gap_fraction))
                      : "");
    if (const Money money = money_of(report); !money.is_usd()) {
        out += "money in " + money.rate_note() + "; evidence and fixes converted from USD\n";
    }
    for (const std::string& line : report.summary) {
        out += "  " + line + "\n";
    }
    for (const Finding& finding : report.findings) {
        out += "\n" + headline(report, finding) + "\n";
        if (!finding.evidence.empty()) {
            out += "    evidence: " + evidence_line(finding, money_of(report)) + "\n";
        }
        if (!finding.fix.empty()) {
            out += "    fix: " + finding.fix + "\n";
        }
    }
    out += "\n" + verdict_line(report) + "\n";
    return out;
}

std::string render_check_json(const CheckReport& report) {
    nlohmann::ordered_json document;
    document["format_version"] = 1;
    document["proposal"] = report.proposal;
    document["passed"] = report.passed();
    document["findings"] = nlohmann::ordered_json::array();
    std::vector<std::string> notes;
    for (const Finding& finding : report.findings) {
        const std::string path = fmt::format("findings[{}].evidence.", document["findings"].size());
        nlohmann::ordered_json item;
        item["severity"] = std::string(to_string(finding.severity));
        item["rule"] = finding.rule;
        item["role"] = finding.role;
        item["file"] = report.file;
        item["line"] = position_value(finding.position.line);
        item["column"] = position_value(finding.position.column);
        item["message"] = finding.message;
        nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
        for (const EvidenceItem& entry : finding.evidence) {
            evidence[entry.key] = entry.number ? evidence_number(path + entry.key, entry.key, *entry.number, notes)
                                               : nlohmann::ordered_json(entry.text);
        }
        item["evidence"] = std::move(evidence);
        item["fix"] = finding.fix;
        item["field"] = finding.field;
        document["findings"].push_back(std::move(item));
    }
    document["summary"] = {{"errors", report.count(FindingSeverity::error)},
                           {"warnings", report.count(FindingSeverity::warning)},
                           {"notes", report.count(FindingSeverity::note)}};
    document["checked"] = report.summary;
    document["skipped"] = nlohmann::ordered_json::array();
    for (const SkippedCheck& skipped : report.skipped) {
        document["skipped"].push_back({{"role", skipped.role}, {"rule", skipped.rule}, {"reason", skipped.reason}});
    }
    // Another currency: the user's rate (messages and fixes are written in it; evidence stays in
    // USD, as its keys say). Absent for USD, so that USD documents are unchanged.
    if (const Money money = money_of(report); !money.is_usd()) {
        document["currency"] = {
            {"code", money.code}, {"per_usd", money.per_usd}, {"as_of", money.as_of}, {"source", "user-given"}};
    }
    if (!notes.empty()) {  // only when a number could not be computed: the usual document has none
        document["notes"] = notes;
    }
    return dump_json(document);
}

std::string render_check_github(const CheckReport& report) {
    std::string out;
    for (const Finding& finding : report.findings) {
        std::string message = finding.role + ": " + finding.message;
        if (!finding.evidence.empty()) {
            message += "\nevidence: " + evidence_line(finding, money_of(report));
        }
        if (!finding.fix.empty()) {
            message += "\nfix: " + finding.fix;
        }
        out += github_annotation(github_command(finding.severity), report.file, finding.position,
                                 fmt::format("gpusel {} ({})", finding.rule, finding.role), message);
    }
    out += "gpusel check: " + verdict_line(report) + "\n";
    return out;
}

std::string render_check_junit(const CheckReport& report) {
    struct Case {
        std::string role;
        std::string rule;
        std::vector<const Finding*> findings;
        const SkippedCheck* skipped = nullptr;
        bool failed() const {
            return std::any_of(findings.begin(), findings.end(),
                               [](const Finding* finding) { return finding->severity == FindingSeverity::error; });
        }
    };
    std::vector<Case> cases;
    for (const std::string& role : report.roles) {
        for (const std::string_view rule : check_rules()) {
            Case item{role, std::string(rule), {}, nullptr};
            for (const Finding& finding : report.findings) {
                if (finding.role == role && finding.rule == rule) {
                    item.findings.push_back(&finding);
                }
            }
            if (item.findings.empty()) {
                for (const SkippedCheck& skipped : report.skipped) {
                    if (skipped.role == role && skipped.rule == rule) {
                        item.skipped = &skipped;
                        break;
                    }
                }
            }
            cases.push_back(std::move(item));
        }
    }
    const auto failures = std::count_if(cases.begin(), cases.end(), [](const Case& item) { return item.failed(); });
    const auto skips =
        std::count_if(cases.begin(), cases.end(), [](const Case& item) { return item.skipped != nullptr; });
    const std::string suite = xml_escape(report.proposal);
    std::string out = xml_declaration();
    out += fmt::format("<testsuites name=\"gpusel check\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
                       cases.size(), failures, skips);
    out +=
        fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" file=\"{}\">\n",
                    suite, cases.size(), failures, skips, xml_escape(report.file));
    for (const Case& item : cases) {
        std::string attributes =
            fmt::format("name=\"{}\" classname=\"{}.{}\"", xml_escape(item.rule), suite, xml_escape(item.role));
        if (!item.findings.empty()) {
            attributes += fmt::format(" file=\"{}\"", xml_escape(report.file));
            if (item.findings.front()->position.line > 0) {
                attributes += fmt::format(" line=\"{}\"", item.findings.front()->position.line);
            }
        }
        if (item.findings.empty() && item.skipped == nullptr) {
            out += fmt::format("    <testcase {}/>\n", attributes);
            continue;
        }
        out += fmt::format("    <testcase {}>\n", attributes);
        if (item.skipped != nullptr) {
            out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(item.skipped->reason));
        }
        std::string details;
        for (const Finding* finding : item.findings) {
            details += headline(report, *finding) + "\n";
            if (!finding->evidence.empty()) {
                details += "evidence: " + evidence_line(*finding, money_of(report)) + "\n";
            }
            if (!finding->fix.empty()) {
                details += "fix: " + finding->fix + "\n";
            }
        }
        if (item.failed()) {
            const Finding* first =
                *std::find_if(item.findings.begin(), item.findings.end(),
                              [](const Finding* finding) { return finding->severity == FindingSeverity::error; });
            out += fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(item.rule),
                               xml_escape(first->message), xml_escape(details, XmlContext::content));
        } else if (!details.empty()) {
            out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(details, XmlContext::content));
        }
        out += "    </testcase>\n";
    }
    out += "  </testsuite>\n</testsuites>\n";
    return out;
}

std::string render_input_errors_json(const std::string& file, const std::vector<Diagnostic>& diagnostics) {
    nlohmann::ordered_json document;
    document["format_version"] = 1;
    document["proposal"] = nullptr;
    document["passed"] = false;
    document["findings"] = nlohmann::ordered_json::array();
    document["input_errors"] = nlohmann::ordered_json::array();
    for (const Diagnostic& diagnostic : diagnostics) {
        document["input_errors"].push_back({{"file", diagnostic.file.empty() ? file : diagnostic.file},
                                            {"line", position_value(diagnostic.position.line)},
                                            {"column", position_value(diagnostic.position.column)},
                                            {"path", diagnostic.path},
                                            {"message", diagnostic.message}});
    }
    return dump_json(document);
}

std::string render_input_errors_github(const std::vector<Diagnostic>& diagnostics) {
    std::string out;
    for (const Diagnostic& diagnostic : diagnostics) {
        const std::string message =
            diagnostic.path.empty() ? diagnostic.message : diagnostic.path + ": " + diagnostic.message;
        out += github_annotation("error", diagnostic.file, diagnostic.position, "gpusel: invalid input", message);
    }
    return out;
}

std::string render_input_errors_junit(const std::string& file, const std::vector<Diagnostic>& diagnostics) {
    std::string details;
    for (const Diagnostic& diagnostic : diagnostics) {
        details += format_diagnostic(diagnostic) + "\n";
    }
    const std::string first =
        diagnostics.empty() ? std::string("invalid input") : format_diagnostic(diagnostics.front());
    std::string out = xml_declaration();
    out += "<testsuites name=\"gpusel check\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n";
    out += fmt::format("  <testsuite name=\"{}\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" file=\"{}\">\n",
                       xml_escape(file), xml_escape(file));
    out += fmt::format("    <testcase name=\"load\" classname=\"input\" file=\"{}\">\n", xml_escape(file));
    out += fmt::format("      <failure type=\"input-error\" message=\"{}\">{}</failure>\n", xml_escape(first),
                       xml_escape(details, XmlContext::content));
    out += "    </testcase>\n  </testsuite>\n</testsuites>\n";
    return out;
}

}  // namespace gpusel
