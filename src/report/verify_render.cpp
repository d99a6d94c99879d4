#include "report/verify_render.hpp"

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/json_output.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

std::string device_text(const GpuVerification& gpu) {
    return gpu.pci_device_id ? fmt::format("0x{:04X}", *gpu.pci_device_id) : "";
}

std::string status_cell(CheckStatus status) {
    std::string text(to_string(status));
    return status == CheckStatus::fail ? "FAIL" : text;
}

void render_check_table(const std::vector<CheckResult>& checks, std::ostream& out, const VerifyStyle& style) {
    TextTable table{{"check"}, {"status"}, {"expected"}, {"observed"}};
    for (const CheckResult& check : checks) {
        table.add_row({check.check, status_cell(check.status), check.expected.empty() ? "—" : check.expected,
                       check.observed.empty() ? "—" : check.observed});
    }
    out << table.render(2);
    for (const CheckResult& check : checks) {
        if (check.status == CheckStatus::pass || (style.quiet && check.status == CheckStatus::skip)) {
            continue;
        }
        out << fmt::format("  {} {}{}: {}\n", status_cell(check.status), check.check,
                           check.line > 0 ? fmt::format(" (line {})", check.line) : "", check.message);
    }
}

// The plan's pick, the node checks it implies with the smoke-test result, then the smoke test
// to run and its band.
void render_acceptance_text(const Acceptance& acceptance, std::ostream& out, const VerifyStyle& style) {
    const PlanAssumption& plan = acceptance.plan;
    out << fmt::format("\nplan {}, role {} ({}): {} × {}, {} per node, TP {} × PP {}, {}\n", plan.file, plan.role,
                       plan.workload, plan.count, plan.gpu, plan.gpus_per_node, plan.tensor_parallel,
                       plan.pipeline_parallel, plan.precision);
    std::vector<CheckResult> checks = acceptance.checks;
    if (acceptance.result) {
        checks.push_back(*acceptance.result);
    }
    render_check_table(checks, out, style);
    const SmokeTest& smoke = acceptance.smoke;
    if (smoke.kind.empty()) {
        out << fmt::format("smoke test: none; {}\n", smoke.basis);
        return;
    }
    out << fmt::format(
        "smoke test ({}): predicted {:.0f}, band {}\n", smoke.figure, smoke.predicted,
        smoke.high > 0 ? fmt::format("{:.0f}-{:.0f}", smoke.low, smoke.high) : fmt::format(">= {:.0f}", smoke.low));
    out << "  " << smoke.command << "\n";
    out << "  " << smoke.basis << "\n";
    if (!acceptance.result && !smoke.result_key.empty()) {
        out << "  then: gpusel verify --plan " << plan.file << " ... --result smoke.json\n";
    }
}

JsonDocument check_json(const CheckResult& check) {
    JsonDocument entry;
    entry["check"] = check.check;
    entry["status"] = std::string(to_string(check.status));
    entry["expected"] = check.expected;
    entry["observed"] = check.observed;
    entry["message"] = check.message;
    entry["line"] = check.line > 0 ? JsonDocument(check.line) : JsonDocument(nullptr);
    return entry;
}

JsonDocument checks_json(const std::vector<CheckResult>& checks) {
    JsonDocument list = JsonDocument::array();
    for (const CheckResult& check : checks) {
        list.push_back(check_json(check));
    }
    return list;
}

JsonDocument acceptance_json(const Acceptance& acceptance) {
    const PlanAssumption& plan = acceptance.plan;
    const SmokeTest& smoke = acceptance.smoke;
    std::vector<std::string> notes;
    JsonDocument json;
    json["plan"] = plan.file;
    json["role"] = plan.role;
    json["workload"] = plan.workload;
    json["gpu"] = plan.gpu;
    json["count"] = plan.count;
    json["gpus_per_node"] = plan.gpus_per_node;
    json["layout"] = {{"tensor_parallel", plan.tensor_parallel},
                      {"pipeline_parallel", plan.pipeline_parallel},
                      {"data_parallel", plan.data_parallel}};
    json["precision"] = plan.precision;
    json["passed"] = acceptance.passed();
    json["checks"] = checks_json(acceptance.checks);
    JsonDocument test;
    test["kind"] = smoke.kind.empty() ? JsonDocument(nullptr) : JsonDocument(smoke.kind);
    test["command"] = smoke.command.empty() ? JsonDocument(nullptr) : JsonDocument(smoke.command);
    test["figure"] = smoke.figure;
    test["predicted"] = json_number("predicted", smoke.predicted, notes);
    test["low"] = json_number("low", smoke.low, notes);
    test["high"] = smoke.high > 0 ? json_number("high", smoke.high, notes) : JsonDocument(nullptr);
    test["basis"] = smoke.basis;
    test["result"] = acceptance.result ? check_json(*acceptance.result) : JsonDocument(nullptr);
    json["smoke_test"] = std::move(test);
    return json;
}

}  // namespace

void render_verify_text(const VerifyResult& result, std::ostream& out, const VerifyStyle& style) {
    const Verification& verification = result.verification;
    std::size_t failed = 0;
    for (const GpuVerification& gpu : verification.gpus) {
        failed += gpu.passed() ? 0U : 1U;
    }
    const Acceptance* acceptance = verification.acceptance ? &*verification.acceptance : nullptr;
    const std::string gpus =
        fmt::format("{} GPU{}", verification.gpus.size(), verification.gpus.size() == 1 ? "" : "s");
    std::string verdict;
    if (verification.passed()) {
        verdict = "passed, " + gpus;
    } else if (acceptance != nullptr && !acceptance->passed()) {
        verdict = failed == 0 ? fmt::format("FAILED the plan's acceptance ({} passed)", gpus)
                              : fmt::format("FAILED, {} of {} and the plan's acceptance", failed, gpus);
    } else {
        verdict = fmt::format("FAILED, {} of {}", failed, gpus);
    }
    out << fmt::format("verify: {} against {} ({}){}: {}\n", result.file, result.expected_id, result.expected_name,
                       acceptance != nullptr
                           ? fmt::format(" as planned in {} (role {})", acceptance->plan.file, acceptance->plan.role)
                           : "",
                       verdict);
    if (!verification.driver_version.empty()) {
        out << fmt::format("driver {}{}\n", verification.driver_version,
                           verification.cuda_version.empty() ? "" : ", CUDA " + verification.cuda_version);
    }
    for (const GpuVerification& gpu : verification.gpus) {
        std::string title = gpu.bus_id.empty() ? "GPU (no bus id in the report)" : "GPU " + gpu.bus_id;
        if (!gpu.product_name.empty()) {
            title += " " + gpu.product_name;
        }
        const std::string device = device_text(gpu);
        if (!device.empty() || !gpu.identified_as.empty()) {
            title += fmt::format(" ({}{}{})", device.empty() ? "" : "device " + device,
                                 !device.empty() && !gpu.identified_as.empty() ? ": " : "", gpu.identified_as);
        }
        out << "\n" << title << "\n";
        render_check_table(gpu.checks, out, style);
    }
    if (acceptance != nullptr) {
        render_acceptance_text(*acceptance, out, style);
    }
    if (!verification.notes.empty() && !style.quiet) {
        out << "\nnotes:\n";
        for (const std::string& note : verification.notes) {
            out << "  " << note << "\n";
        }
    }
}

void render_verify_json(const VerifyResult& result, std::ostream& out) {
    using json = nlohmann::ordered_json;
    const Verification& verification = result.verification;
    json document;
    document["format_version"] = 1;
    document["file"] = result.file;
    document["expect"] = verification.expected_id;
    document["passed"] = verification.passed();
    document["driver_version"] = verification.driver_version;
    document["cuda_version"] = verification.cuda_version;
    json gpus = json::array();
    for (const GpuVerification& gpu : verification.gpus) {
        json item;
        item["bus_id"] = gpu.bus_id;
        item["product_name"] = gpu.product_name;
        item["pci_device_id"] = gpu.pci_device_id ? json(device_text(gpu)) : json(nullptr);
        item["identified_as"] = gpu.identified_as.empty() ? json(nullptr) : json(gpu.identified_as);
        item["passed"] = gpu.passed();
        item["checks"] = checks_json(gpu.checks);
        gpus.push_back(std::move(item));
    }
    document["gpus"] = std::move(gpus);
    if (verification.acceptance) {
        document["acceptance"] = acceptance_json(*verification.acceptance);
    }
    document["notes"] = verification.notes;
    out << dump_json(document);
}

}  // namespace gpusel
