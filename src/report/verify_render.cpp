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

}  // namespace

void render_verify_text(const VerifyResult& result, std::ostream& out, const VerifyStyle& style) {
    const Verification& verification = result.verification;
    std::size_t failed = 0;
    for (const GpuVerification& gpu : verification.gpus) {
        failed += gpu.passed() ? 0U : 1U;
    }
    out << fmt::format("verify: {} against {} ({}): {}\n", result.file, result.expected_id, result.expected_name,
                       failed == 0 ? fmt::format("passed, {} GPU{}", verification.gpus.size(),
                                                 verification.gpus.size() == 1 ? "" : "s")
                                   : fmt::format("FAILED, {} of {} GPU{}", failed, verification.gpus.size(),
                                                 verification.gpus.size() == 1 ? "" : "s"));
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
        TextTable table{{"check"}, {"status"}, {"expected"}, {"observed"}};
        for (const CheckResult& check : gpu.checks) {
            table.add_row({check.check, status_cell(check.status), check.expected.empty() ? "—" : check.expected,
                           check.observed.empty() ? "—" : check.observed});
        }
        out << table.render(2);
        for (const CheckResult& check : gpu.checks) {
            if (check.status == CheckStatus::pass || (style.quiet && check.status == CheckStatus::skip)) {
                continue;
            }
            out << fmt::format("  {} {}{}: {}\n", status_cell(check.status), check.check,
                               check.line > 0 ? fmt::format(" (line {})", check.line) : "", check.message);
        }
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
        json checks = json::array();
        for (const CheckResult& check : gpu.checks) {
            json entry;
            entry["check"] = check.check;
            entry["status"] = std::string(to_string(check.status));
            entry["expected"] = check.expected;
            entry["observed"] = check.observed;
            entry["message"] = check.message;
            entry["line"] = check.line > 0 ? json(check.line) : json(nullptr);
            checks.push_back(std::move(entry));
        }
        item["checks"] = std::move(checks);
        gpus.push_back(std::move(item));
    }
    document["gpus"] = std::move(gpus);
    document["notes"] = verification.notes;
    out << dump_json(document);
}

}  // namespace gpusel
