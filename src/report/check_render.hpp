#pragma once
// Renderers of a CheckReport: text for people, JSON for scripts, GitHub workflow commands and
// JUnit XML for CI systems. Each returns the whole document; none recomputes.

#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "base/money.hpp"
#include "check/check.hpp"

namespace gpusel {

enum class CheckFormat { text, json, github, junit };

std::string render_check_text(const CheckReport& report);
// JSON format 1 (../shared/spec/cli.md `check`): format_version, proposal, passed, findings
// [{severity, rule, role, file, line, column, message, evidence{}, fix, field}], summary.
std::string render_check_json(const CheckReport& report);
// GitHub Actions workflow commands: one `::error|warning|notice file=…,line=…,col=…,title=…::`
// line per finding, then a plain summary line.
std::string render_check_github(const CheckReport& report);
// JUnit XML: one test case per rule per role; errors are failures, warnings and notes go to
// system-out, rules not evaluated are skipped.
std::string render_check_junit(const CheckReport& report);

// A proposal that could not be loaded, in the machine formats (json, github, junit), so that
// CI shows the positions; the CLI also prints the diagnostics to standard error and exits 3.
std::string render_input_errors_json(const std::string& file, const std::vector<Diagnostic>& diagnostics);
std::string render_input_errors_github(const std::vector<Diagnostic>& diagnostics);
std::string render_input_errors_junit(const std::string& file, const std::vector<Diagnostic>& diagnostics);

// Escaping, per actions/toolkit packages/core/src/command.ts: data (the message) gets
// % → %25, CR → %0D, LF → %0A; property values additionally : → %3A and , → %2C.
std::string escape_github_data(std::string_view text);
std::string escape_github_property(std::string_view text);

// Evidence as a person reads it: "total 95.3 GB", "deadline 14 d", "saving $12,400".
std::string format_evidence_value(const EvidenceItem& item, const Money& money = {});
std::string evidence_label(std::string_view key);

}  // namespace gpusel
