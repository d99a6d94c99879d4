#pragma once
// Renderers of `gpusel diagnose`: the terminal view and JSON format 1 of a Diagnosis and, when a
// workload was given, what the fixes would be worth. Pure functions of the result: they format
// what diagnose() and estimate_fix_worth() computed and never recompute. Text output escapes
// what came from the inputs (printable_text); JSON output is valid UTF-8 whatever the inputs.

#include <iosfwd>
#include <optional>

#include "diagnose/diagnose.hpp"

namespace gpusel {

enum class DiagnoseFormat { text, json };

struct DiagnoseResult {
    Diagnosis diagnosis;
    std::optional<FixWorth> fix_worth;  // --workload given
};

struct DiagnoseStyle {
    bool quiet = false;  // --quiet: no "not evaluated", inputs or notes blocks
};

// A headline, the capture quality, each verdict with its evidence table, signals, remedies and
// whether a GPU would help; what tells the leading causes apart, the ruled-out causes, what the
// fixes are worth; then, unless quiet, the rules not evaluated, the inputs and the notes.
// A number that is not finite prints as "—".
void render_diagnose_text(const DiagnoseResult& result, std::ostream& out, const DiagnoseStyle& style);

// JSON format 1 (docs/diagnose.md). Numbers follow the one JSON number policy
// (io/json_output.hpp); a value that is not finite is null with an entry in "notes".
void render_diagnose_json(const DiagnoseResult& result, std::ostream& out);

}  // namespace gpusel
