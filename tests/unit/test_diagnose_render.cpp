// The `diagnose` renderers on hand-built diagnoses.

#include <catch2/catch.hpp>

#include <limits>
#include <sstream>

#include "report/diagnose_render.hpp"

TEST_CASE("render::diagnose text: no rule evaluated, inputs listed unless quiet", "[render][diagnose]") {
    gpusel::DiagnoseResult result;
    result.diagnosis.inputs.push_back({gpusel::TelemetryKind::nvidia_smi_dmon, "dmon.log", 3, {0, 1}});
    result.diagnosis.not_evaluated.push_back({"pcie-saturated", "no PCIe counters"});
    const std::string head =
        "diagnose: 0 findings to fix, from 1 input\n"
        "\n"
        "No rule could be evaluated with these inputs; see below for what each one needs.\n";
    std::ostringstream quiet;
    gpusel::render_diagnose_text(result, quiet, gpusel::DiagnoseStyle{true});
    CHECK(quiet.str() == head);
    std::ostringstream full;
    gpusel::render_diagnose_text(result, full, gpusel::DiagnoseStyle{false});
    CHECK(full.str() == head +
                            "\n"
                            "not evaluated:\n"
                            "  pcie-saturated: no PCIe counters\n"
                            "\n"
                            "inputs:\n"
                            "  nvidia-smi-dmon: dmon.log, 3 rows, GPUs 0, 1\n");
}

TEST_CASE("render::diagnose json: a value not computed is null with a note", "[render][diagnose][json]") {
    gpusel::DiagnoseResult result;
    result.diagnosis.capture.duration_s = std::numeric_limits<double>::quiet_NaN();
    std::ostringstream out;
    gpusel::render_diagnose_json(result, out);
    CHECK_THAT(out.str(), Catch::Matchers::Contains("\"duration_s\": null,"));
    CHECK_THAT(out.str(),
               Catch::Matchers::Contains(
                   "\"notes\": [\n"
                   "    \"capture.duration_s: the computed value is not a finite number (nan); written as null\"\n"
                   "  ],"));
}

TEST_CASE("render::diagnose text escapes what came from the inputs", "[render][diagnose]") {
    // A note quoting a Prometheus label: a line break that would start a GitHub annotation, a
    // BEL, a byte that is not UTF-8.
    gpusel::DiagnoseResult result;
    result.diagnosis.inputs.push_back({gpusel::TelemetryKind::prometheus_text, "m\x1b[2J", 1, {0}});
    result.diagnosis.notes.push_back("m: host 'a\n::error::x' \a\xff");
    std::ostringstream text;
    gpusel::render_diagnose_text(result, text, gpusel::DiagnoseStyle{false});
    CHECK_THAT(text.str(), Catch::Matchers::EndsWith("inputs:\n"
                                                     "  prometheus-text: m\\x1b[2J, 1 row, GPUs 0\n"
                                                     "\n"
                                                     "notes:\n"
                                                     "  m: host 'a\\x0a::error::x' \\x07\\xff\n"));
    std::ostringstream json;
    CHECK_NOTHROW(gpusel::render_diagnose_json(result, json));  // invalid UTF-8 becomes U+FFFD
    CHECK_THAT(json.str(), Catch::Matchers::Contains("\"m: host 'a\\n::error::x' \\u0007\xEF\xBF\xBD\""));
}
