#pragma once
// Renderers of `gpusel verify`: the terminal view and JSON format 1 of the acceptance checks of
// delivered GPUs. Pure functions of the result: they format what verify_gpus() decided.

#include <iosfwd>
#include <string>

#include "verify/verify.hpp"

namespace gpusel {

enum class VerifyFormat { text, json };

struct VerifyResult {
    Verification verification;
    std::string file;         // as the user named it ("<stdin>" for '-')
    std::string expected_id;  // the catalog entry that was ordered
    std::string expected_name;
};

struct VerifyStyle {
    bool quiet = false;  // --quiet: no skipped checks explained, no notes
};

// A verdict line, the driver, then per GPU a table of checks (expected, observed) and a line
// for each check that did not pass; notes unless quiet.
void render_verify_text(const VerifyResult& result, std::ostream& out, const VerifyStyle& style);

// JSON format 1 (docs/diagnose.md, "verify").
void render_verify_json(const VerifyResult& result, std::ostream& out);

}  // namespace gpusel
