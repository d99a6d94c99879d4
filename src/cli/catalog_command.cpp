// gpusel catalog list | show ID | validate FILE

#include <algorithm>

#include <fmt/format.h>

#include "cli/context.hpp"
#include "gpusel/error.hpp"
#include "gpusel/format.hpp"
#include "gpusel/text_table.hpp"
#include "gpusel/yaml.hpp"

namespace gpusel::cli {

namespace {

std::string tflops_cell(const GpuSpec& gpu, Precision precision) {
    const double flops = gpu.peak_flops_per_s(precision);
    return flops > 0 ? fmt::format("{:.0f}", flops / 1e12) : "—";
}

std::string optional_usd(const std::optional<double>& usd) { return usd ? format_usd(*usd) : "—"; }

std::string optional_hourly(const std::optional<double>& usd) {
    return usd ? fmt::format("{:.2f}", *usd) : "—";
}

void print_list(Context& context) {
    const Catalog& catalog = context.catalog();
    TextTable table;
    table.add_column("id");
    table.add_column("memory", TextTable::Align::right);
    table.add_column("bandwidth", TextTable::Align::right);
    table.add_column("bf16 TF", TextTable::Align::right);
    table.add_column("fp8 TF", TextTable::Align::right);
    table.add_column("power", TextTable::Align::right);
    table.add_column("link");
    table.add_column("segment");
    table.add_column("new $", TextTable::Align::right);
    table.add_column("cloud $/h", TextTable::Align::right);
    for (const GpuSpec& gpu : catalog.gpus()) {
        table.add_row({gpu.id, format_gb(gpu.memory_bytes), format_bandwidth(gpu.memory_bandwidth_bytes_per_s),
                       tflops_cell(gpu, Precision::bf16), tflops_cell(gpu, Precision::fp8),
                       fmt::format("{:.0f} W", gpu.power_watts),
                       gpu.has_gpu_interconnect() ? fmt::format("{}×{}", gpu.interconnect.kind, gpu.interconnect.domain_size)
                                                  : fmt::format("pcie{}", gpu.host_link_generation),
                       std::string(to_string(gpu.segment)), optional_usd(gpu.price.new_usd),
                       optional_hourly(gpu.cloud.on_demand_usd_per_hour)});
    }
    context.out << table.render();
    if (!context.quiet) {
        context.out << fmt::format("\n{} GPUs · prices as of {} · TF = dense TFLOPS · `gpusel catalog show ID` for sources\n",
                                   catalog.gpus().size(), catalog.as_of.empty() ? "unknown" : catalog.as_of);
    }
}

void print_show(Context& context, const std::string& id) {
    const Catalog& catalog = context.catalog();
    const GpuSpec* gpu = catalog.find(id);
    if (gpu == nullptr) {
        const std::string suggestion = catalog.suggest(id);
        throw UsageError(fmt::format("unknown GPU '{}'{}", id,
                                     suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                        : ", did you mean '" + suggestion + "'?"));
    }
    std::ostream& out = context.out;
    out << fmt::format("{} — {}\n", gpu->id, gpu->name);
    out << fmt::format("  vendor {} · architecture {} · compute capability {} · {} · {} · released {}\n", gpu->vendor,
                       gpu->architecture, gpu->compute_capability, to_string(gpu->segment), to_string(gpu->form_factor),
                       gpu->released.empty() ? "?" : gpu->released);
    out << fmt::format("  memory {} ({}) {} · bandwidth {} · ECC {}\n", format_gb(gpu->memory_bytes),
                       format_gib(gpu->memory_bytes), gpu->memory_type, format_bandwidth(gpu->memory_bandwidth_bytes_per_s),
                       gpu->ecc ? "yes" : "no");
    std::vector<std::string> rates;
    for (const Precision precision : all_precisions) {
        if (gpu->supports(precision)) {
            rates.push_back(fmt::format("{} {:g}", to_string(precision), gpu->peak_flops_per_s(precision) / 1e12));
        }
    }
    out << "  dense TFLOPS: " << fmt::format("{}", fmt::join(rates, " · ")) << "\n";
    out << fmt::format("  power {:.0f} W · host link PCIe {} x{}", gpu->power_watts, gpu->host_link_generation,
                       gpu->host_link_lanes);
    if (gpu->has_gpu_interconnect()) {
        out << fmt::format(" · {} {} bidirectional, {} GPUs per domain", gpu->interconnect.kind,
                           format_bandwidth(gpu->interconnect.bidirectional_bytes_per_s), gpu->interconnect.domain_size);
    }
    out << "\n";
    out << fmt::format("  price: new {} · used {} · server share {} (as of {})\n", optional_usd(gpu->price.new_usd),
                       optional_usd(gpu->price.used_usd), optional_usd(gpu->price.server_share_usd),
                       gpu->price.as_of.empty() ? "?" : gpu->price.as_of);
    out << fmt::format("  cloud $/GPU-h: on-demand {} · spot {} · reserved 1y {} ({}, as of {})\n",
                       optional_hourly(gpu->cloud.on_demand_usd_per_hour), optional_hourly(gpu->cloud.spot_usd_per_hour),
                       optional_hourly(gpu->cloud.reserved_1y_usd_per_hour),
                       gpu->cloud.provider.empty() ? "?" : gpu->cloud.provider,
                       gpu->cloud.as_of.empty() ? "?" : gpu->cloud.as_of);
    out << "  sources:\n";
    for (const std::string& source : gpu->sources) {
        out << "    - " << source << "\n";
    }
    if (!gpu->notes.empty()) {
        out << "  notes: " << gpu->notes << "\n";
    }
}

void validate_file(Context& context, const std::string& path) {
    const CheckedCatalogFile checked = check_catalog_file(context, path);
    // Warnings about the entries of this file only, not about the catalog it extends.
    std::size_t shown = 0;
    for (const CatalogWarning& warning : audit_catalog(checked.merged)) {
        const bool in_file = std::any_of(checked.ids.begin(), checked.ids.end(), [&](const std::string& id) {
            return checked.merged.find(id) == checked.merged.find(warning.id);
        });
        if (in_file) {
            context.err << fmt::format("{}: warning: {}: {}\n", path, warning.id, warning.message);
            ++shown;
        }
    }
    context.out << fmt::format("{}: valid catalog, {} GPUs, {} warnings\n", path, checked.ids.size(), shown);
}

}  // namespace

CheckedCatalogFile check_catalog_file(Context& context, const std::string& path) {
    CheckedCatalogFile checked{context.catalog(), {}};
    // Read once: the path may be standard input.
    const std::string text = read_input_file(path);
    merge_catalog_text(checked.merged, text, path);
    // The merge succeeded, so the file is a mapping whose `gpus` is a list of entries with ids.
    const YamlNode root = parse_yaml_text(text, path);
    if (const YamlNode* gpus = root.find("gpus")) {
        for (const YamlNode& entry : gpus->items) {
            if (const YamlNode* id = entry.find("id")) {
                checked.ids.push_back(id->scalar);
            }
        }
    }
    return checked;
}

void register_catalog(CLI::App& app, Context& context) {
    CLI::App* command = app.add_subcommand("catalog", "List, show or validate GPU catalog entries");
    command->require_subcommand(1);
    command->footer("\nExamples:\n  gpusel catalog list\n  gpusel catalog show H100-SXM5\n"
                    "  gpusel catalog validate my-prices.yaml\n");
    command->add_subcommand("list", "One line per GPU: memory, bandwidth, dense BF16/FP8 TFLOPS, power, prices")
        ->callback([&context] { print_list(context); });
    auto id = std::make_shared<std::string>();
    CLI::App* show = command->add_subcommand("show", "Every field of one entry, with its sources");
    show->add_option("id", *id, "Catalog id (case-insensitive)")->required()->type_name("ID");
    show->callback([&context, id] { print_show(context, *id); });
    auto file = std::make_shared<std::string>();
    CLI::App* validate = command->add_subcommand(
        "validate", "Check a catalog file: required fields, units, ranges, unique ids, sources; warn on stale prices");
    validate->add_option("file", *file, "Catalog YAML file")->required()->type_name("FILE");
    validate->callback([&context, file] { validate_file(context, *file); });
}

}  // namespace gpusel::cli
