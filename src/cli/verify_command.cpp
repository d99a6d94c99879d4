// gpusel verify SMI_Q_FILE --expect ID [--nvlink FILE] [--format text|json]

#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/error.hpp"
#include "cli/context.hpp"
#include "io/json_output.hpp"
#include "report/text_table.hpp"
#include "verify/verify.hpp"

namespace gpusel::cli {

namespace {

struct VerifyOptions {
    std::string file;
    std::string expect;
    std::string nvlink;
    std::string format = "text";
};

std::string display_name(const std::string& path) { return path == "-" ? "<stdin>" : path; }

std::string device_text(const GpuVerification& gpu) {
    return gpu.pci_device_id ? fmt::format("0x{:04X}", *gpu.pci_device_id) : "";
}

std::string status_cell(CheckStatus status) {
    std::string text(to_string(status));
    return status == CheckStatus::fail ? "FAIL" : text;
}

void render_text(const Verification& verification, const GpuSpec& expected, const std::string& file, Context& context) {
    std::ostream& out = context.out;
    std::size_t failed = 0;
    for (const GpuVerification& gpu : verification.gpus) {
        failed += gpu.passed() ? 0U : 1U;
    }
    out << fmt::format("verify: {} against {} ({}): {}\n", file, expected.id, expected.name,
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
        TextTable table;
        table.add_column("check");
        table.add_column("status");
        table.add_column("expected");
        table.add_column("observed");
        for (const CheckResult& check : gpu.checks) {
            table.add_row({check.check, status_cell(check.status), check.expected.empty() ? "—" : check.expected,
                           check.observed.empty() ? "—" : check.observed});
        }
        out << table.render(2);
        for (const CheckResult& check : gpu.checks) {
            if (check.status == CheckStatus::pass || (context.quiet && check.status == CheckStatus::skip)) {
                continue;
            }
            out << fmt::format("  {} {}{}: {}\n", status_cell(check.status), check.check,
                               check.line > 0 ? fmt::format(" (line {})", check.line) : "", check.message);
        }
    }
    if (!verification.notes.empty() && !context.quiet) {
        out << "\nnotes:\n";
        for (const std::string& note : verification.notes) {
            out << "  " << note << "\n";
        }
    }
}

void render_json(const Verification& verification, const std::string& file, Context& context) {
    using json = nlohmann::ordered_json;
    json document;
    document["format_version"] = 1;
    document["file"] = file;
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
    context.out << dump_json(document);
}

void run_verify(Context& context, const VerifyOptions& options) {
    const GpuSpec* expected = context.catalog().find(options.expect);
    if (expected == nullptr) {
        const std::string suggestion = context.catalog().suggest(options.expect);
        throw UsageError(fmt::format("--expect: unknown GPU '{}'{}", options.expect,
                                     suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                        : ", did you mean '" + suggestion + "'?"));
    }
    if (expected->vendor != "nvidia") {
        throw UsageError(fmt::format("--expect: {} is not an NVIDIA part (vendor {}); verify reads nvidia-smi -q reports",
                                     expected->id, expected->vendor));
    }
    if (options.file == "-" && options.nvlink == "-") {
        throw UsageError("only one input can be read from standard input ('-')");
    }
    const std::string file = display_name(options.file);
    const std::string text = read_telemetry_file(options.file);
    const SmiReport report = parse_nvidia_smi_q(text, file);
    // nvlink -s output may be appended to the report, or come in its own file.
    std::vector<NvlinkGpu> nvlink = parse_nvidia_smi_nvlink(text, file);
    if (!options.nvlink.empty()) {
        const std::string nvlink_file = display_name(options.nvlink);
        nvlink = parse_nvidia_smi_nvlink(read_telemetry_file(options.nvlink), nvlink_file);
        if (nvlink.empty()) {
            throw InputError(Diagnostic{nvlink_file, {1, 1}, {}, "no 'GPU N: ... (UUID: ...)' line; expected `nvidia-smi nvlink -s` output"});
        }
    }
    const Verification verification = verify_gpus(report, nvlink, *expected);
    if (options.format == "json") {
        render_json(verification, file, context);
    } else {
        render_text(verification, *expected, file, context);
    }
    if (!verification.passed()) {
        context.exit_code = 1;
    }
}

}  // namespace

void register_verify(CLI::App& app, Context& context) {
    auto options = std::make_shared<VerifyOptions>();
    CLI::App* command = app.add_subcommand("verify", "Acceptance checks of delivered GPUs against the catalog entry");
    command->add_option("file", options->file, "nvidia-smi -q output ('-' reads standard input)")->required()->type_name("SMI_Q_FILE");
    command->add_option("--expect", options->expect, "Catalog id of the part that was ordered")->required()->type_name("ID");
    command->add_option("--nvlink", options->nvlink, "nvidia-smi nvlink -s output, for the NVLink check")->type_name("FILE");
    command->add_option("--format", options->format, "text or json")->check(CLI::IsMember({"text", "json"}))->type_name("F");
    command->footer("\nExamples:\n"
                    "  nvidia-smi -q > node1.txt; nvidia-smi nvlink -s >> node1.txt\n"
                    "  gpusel verify node1.txt --expect H100-SXM5\n"
                    "Exit code 1 when a check fails. Checks and tolerances: docs/diagnose.md\n");
    command->callback([&context, options] { run_verify(context, *options); });
}

}  // namespace gpusel::cli
