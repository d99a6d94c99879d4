// gpusel catalog list | show ID | validate FILE | import skypilot FILE -o OUT

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include <sys/stat.h>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/format.hpp"
#include "base/text.hpp"
#include "catalog/skypilot_import.hpp"
#include "cli/context.hpp"
#include "cost/offer_selection.hpp"
#include "cost/price_sanity.hpp"
#include "inputs/cost_assumptions.hpp"
#include "io/output.hpp"
#include "io/yaml.hpp"
#include "report/catalog_render.hpp"

namespace gpusel::cli {

namespace {

void show_catalog_entry(Context& context, const std::string& id) {
    const Catalog& catalog = context.catalog();
    const GpuSpec* gpu = catalog.find(id);
    if (gpu == nullptr) {
        const std::string suggestion = catalog.suggest(id);
        throw UsageError(fmt::format(
            "unknown GPU '{}'{}", id,
            suggestion.empty() ? "; `gpusel catalog list` shows the ids" : ", did you mean '" + suggestion + "'?"));
    }
    render_catalog_show(catalog, *gpu, context.out);
}

void validate_file(Context& context, const std::string& path) {
    const CheckedCatalogFile checked = check_catalog_file(context, path);
    // Warnings about the entries of this file only, not about the catalog it extends.
    const auto in_file = [&](const std::string& warned) {
        return std::any_of(checked.ids.begin(), checked.ids.end(), [&](const std::string& id) {
            return equals_ignore_case(id, warned) ||
                   (checked.merged.find(id) != nullptr && checked.merged.find(id) == checked.merged.find(warned));
        });
    };
    std::size_t shown = 0;
    for (const CatalogWarning& warning : audit_catalog(checked.merged)) {
        if (in_file(warning.id)) {
            context.err << fmt::format("{}: warning: {}: {}\n", path, warning.id, warning.message);
            ++shown;
        }
    }
    for (const PriceFinding& finding : price_sanity_findings(checked.merged, builtin_cost_assumptions().price_sanity)) {
        if (in_file(finding.offer_id)) {
            context.err << fmt::format(
                "{}: warning: {}: price sanity ({}): {}; correct it, or say why in the "
                "offer's notes (with the word 'sanity')\n",
                path, finding.offer_id, finding.rule, finding.message);
            ++shown;
        }
    }
    context.out << fmt::format("{}: valid catalog, {} GPUs, {} offers, {} warnings\n", path, checked.gpus,
                               checked.offers, shown);
}

// A SkyPilot AWS vms.csv is about 4 MB and grows with every instance family; the YAML limit
// (max_input_bytes) would refuse it within a year.
constexpr std::size_t max_skypilot_csv_bytes = 64u << 20;

struct ImportFlags {
    std::string file;
    std::string provider;
    std::string as_of;
    std::string output;
    std::vector<std::string> regions;
    std::vector<std::string> instance_types;
};

// UTC, so that the same file gives the same month on every machine.
std::string utc_date(std::time_t time, const char* format) {
    std::tm parts{};
    gmtime_r(&time, &parts);
    char text[32];
    const std::size_t length = std::strftime(text, sizeof text, format, &parts);
    return std::string(text, length);
}

// Today, or the day SOURCE_DATE_EPOCH names (reproducible builds' convention; the golden tests
// set it so that the sources line does not change every day).
std::string import_date() {
    if (const char* epoch = std::getenv("SOURCE_DATE_EPOCH"); epoch != nullptr && *epoch != '\0') {
        return utc_date(static_cast<std::time_t>(parse_count_flag(epoch, "SOURCE_DATE_EPOCH", 0, 2147483647)),
                        "%Y-%m-%d");
    }
    return utc_date(std::time(nullptr), "%Y-%m-%d");
}

void run_import_skypilot(const ImportFlags& flags, Context& context) {
    const SkypilotPath parts = skypilot_path_parts(flags.file);
    const std::string provider = flags.provider.empty() ? parts.cloud : flags.provider;
    if (provider.empty()) {
        throw UsageError(
            fmt::format("cannot tell the provider of '{}': the path does not end in <vN>/<cloud>/vms.csv; "
                        "pass --provider ID (aws, gcp, lambda, runpod, ...)",
                        flags.file));
    }
    if (!valid_provider_id(provider)) {
        throw UsageError(
            fmt::format("{}: '{}' is not a provider id; write lower-case letters, digits and '-', e.g. aws",
                        flags.provider.empty() ? "the path's cloud folder" : "--provider", provider));
    }
    if (!flags.as_of.empty() && !valid_year_month(flags.as_of)) {
        throw UsageError(fmt::format("--as-of: '{}' is not a month; write YYYY-MM, e.g. 2026-11", flags.as_of));
    }
    if (flags.as_of.empty() && (flags.file == "-" || flags.file.empty())) {
        throw UsageError("--as-of YYYY-MM is required when the file is standard input (it has no date)");
    }
    OutputTarget target{flags.output, context.force, {flags.file}};
    const std::vector<std::string> option_files = context.option_input_files();
    target.inputs.insert(target.inputs.end(), option_files.begin(), option_files.end());
    check_output_target(target);
    const std::string text = read_input_file(flags.file, max_skypilot_csv_bytes);

    SkypilotImportOptions options;
    options.provider = provider;
    options.schema_version = parts.schema_version;
    options.cloud = parts.cloud;
    options.as_of = flags.as_of;
    options.imported_on = import_date();
    options.source_path = flags.file == "-" ? std::string("standard input") : flags.file;
    options.regions = flags.regions;
    options.instance_types = flags.instance_types;
    if (options.as_of.empty()) {
        // The CSV carries no date; the file's modification time is when SkyPilot last fetched it.
        struct stat status {};
        if (::stat(flags.file.c_str(), &status) != 0) {
            throw UsageError(fmt::format("cannot read the date of '{}'; pass --as-of YYYY-MM", flags.file));
        }
        options.as_of = utc_date(status.st_mtime, "%Y-%m");
        context.err << fmt::format(
            "{}: warning: the file carries no date; as_of {} is its modification month (pass "
            "--as-of YYYY-MM to state it)\n",
            flags.file, options.as_of);
    }
    const SkypilotImportResult result = import_skypilot_csv(text, flags.file, options, context.catalog());
    write_output(target, result.yaml, context.out);
    for (const ImportWarning& warning : result.warnings) {
        context.err << fmt::format("{}{}: warning: {}{}\n", flags.file,
                                   warning.line > 0 ? fmt::format(":{}", warning.line) : std::string(),
                                   warning.offer_id.empty() ? std::string() : warning.offer_id + ": ", warning.message);
    }
    if (result.warnings_not_kept > 0) {
        context.err << fmt::format("{}: {} more warnings not shown\n", flags.file, result.warnings_not_kept);
    }
    if (!context.quiet) {
        context.err << skypilot_import_summary(result, flags.file, target.display_name());
    }
}

void register_import(CLI::App& catalog, Context& context) {
    CLI::App* import =
        catalog.add_subcommand("import", "Turn another tool's price catalog into a user catalog file of offers");
    import->require_subcommand(1);
    auto flags = std::make_shared<ImportFlags>();
    CLI::App* skypilot = import->add_subcommand(
        "skypilot", "Rental offers (USD per instance-hour, on-demand and spot) from a SkyPilot vms.csv, v7 or v8");
    skypilot
        ->add_option("file", flags->file,
                     "SkyPilot catalog, e.g. ~/.sky/catalogs/v8/aws/vms.csv ('-' reads standard input)")
        ->required()
        ->type_name("FILE");
    skypilot
        ->add_option("--provider", flags->provider,
                     "Provider id of the offers (default: the cloud folder of the path, e.g. aws)")
        ->type_name("ID");
    skypilot
        ->add_option("--as-of", flags->as_of,
                     "Month of the prices (default: the file's modification month, with a warning)")
        ->type_name("YYYY-MM");
    skypilot
        ->add_option("--regions", flags->regions,
                     "Import only rows of these regions: globs, comma-separated or repeated, e.g. 'us-*,eu-west-1'")
        ->delimiter(',')
        ->allow_extra_args(false)  // one value per --regions, so that a following FILE stays the file
        ->type_name("GLOB");
    skypilot
        ->add_option("--instance-types", flags->instance_types,
                     "Import only these instance types: globs as for --regions, e.g. 'p5.*,p4d.*'")
        ->delimiter(',')
        ->allow_extra_args(false)
        ->type_name("GLOB");
    skypilot
        ->add_option("-o,--output", flags->output,
                     "Write the catalog YAML to FILE (required; '-' for standard output; whole or not at all; "
                     "--force to replace)")
        ->required()
        ->type_name("FILE");
    skypilot->footer(
        "\nExamples:\n"
        "  gpusel catalog import skypilot ~/.sky/catalogs/v8/aws/vms.csv --as-of 2026-11 -o offers-aws.yaml\n"
        "  gpusel plan workload.yaml --catalog offers-aws.yaml\n"
        "  gpusel catalog import skypilot gcp.csv --provider gcp --as-of 2026-11 -o -   (to standard output)\n"
        "\nOne offer per instance type, one price line per region; GPU rows only, whole GPUs only. Rows that\n"
        "cannot be priced or mapped to a catalog GPU are skipped with the reason; nothing is guessed.\n"
        "The output is read back as --catalog will read it before it is written; one that would pass a catalog\n"
        "file's limits (4 MiB, 200000 values) is refused: import part of the file with --regions or\n"
        "--instance-types.\n"
        "Rules: docs/catalog.md, \"Importing a SkyPilot catalog\".");
    skypilot->callback([flags, &context] { run_import_skypilot(*flags, context); });
}

}  // namespace

CheckedCatalogFile check_catalog_file(Context& context, const std::string& path) {
    CheckedCatalogFile checked{context.catalog(), {}, 0, 0};
    // Read once: the path may be standard input.
    const std::string text = read_input_file(path);
    merge_catalog_text(checked.merged, text, path);
    // The merge succeeded, so the file is a mapping whose `gpus` is a list of entries with ids.
    const YamlNode root = parse_yaml_text(text, path);
    for (const char* list : {"gpus", "purchase", "rental"}) {
        const YamlNode* entries = root.find(list);
        for (const YamlNode& entry : entries != nullptr ? entries->items : std::vector<YamlNode>{}) {
            if (const YamlNode* id = entry.find("id")) {
                checked.ids.push_back(id->scalar);
                ++(std::string_view(list) == "gpus" ? checked.gpus : checked.offers);
            }
        }
    }
    return checked;
}

void register_catalog(CLI::App& app, Context& context) {
    CLI::App* command = app.add_subcommand("catalog", "List, show, validate or import GPU catalog entries");
    command->require_subcommand(1);
    command->footer(
        "\nExamples:\n  gpusel catalog list\n  gpusel catalog show H100-SXM5\n"
        "  gpusel catalog validate my-prices.yaml\n"
        "  gpusel catalog import skypilot ~/.sky/catalogs/v8/aws/vms.csv --as-of 2026-11 -o offers-aws.yaml\n");
    command
        ->add_subcommand("list", "One line per GPU: memory, bandwidth, dense BF16/FP8 TFLOPS, power, cheapest offers")
        ->callback([&context] { render_catalog_list(context.catalog(), context.out, CatalogStyle{context.quiet}); });
    auto id = std::make_shared<std::string>();
    CLI::App* show = command->add_subcommand(
        "show", "Every field of one GPU, its offers (units, providers, prices, dates) and sources");
    show->add_option("id", *id, "Catalog id (case-insensitive)")->required()->type_name("ID");
    show->callback([&context, id] { show_catalog_entry(context, *id); });
    auto file = std::make_shared<std::string>();
    CLI::App* validate = command->add_subcommand("validate",
                                                 "Check a catalog file: required fields, units, ranges, unique ids, "
                                                 "references, sources; warn on stale, converted or implausible prices "
                                                 "(docs/cost-model.md, \"Price sanity rules\")");
    validate->add_option("file", *file, "Catalog YAML file")->required()->type_name("FILE");
    validate->callback([&context, file] { validate_file(context, *file); });
    register_import(*command, context);
}

}  // namespace gpusel::cli
