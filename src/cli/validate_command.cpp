// gpusel validate FILE...: loads each file as what its keys say it is and reports every error.

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"

namespace gpusel::cli {

namespace {

std::string_view kind_label(DocumentKind kind) {
    switch (kind) {
        case DocumentKind::workload:
            return "workload";
        case DocumentKind::project:
            return "project";
        case DocumentKind::proposal:
            return "proposal";
        case DocumentKind::catalog:
            return "catalog";
        case DocumentKind::models:
            return "model presets";
    }
    return "?";
}

// Loads one file; returns a one-line summary on success.
std::string validate_one(const std::string& path, Context& context) {
    const DocumentKind kind = detect_document_kind(path);
    const std::string shown = input_display_name(path);
    switch (kind) {
        case DocumentKind::workload: {
            const Workload workload = load_workload_file(path, context.load_context());
            return fmt::format("{}: valid workload '{}' ({}, {})", shown, workload.name, to_string(workload.kind),
                               workload.model_label);
        }
        case DocumentKind::project: {
            const Project project = load_project_file(path, context.load_context());
            return fmt::format("{}: valid project '{}' ({} workloads)", shown, project.name, project.workloads.size());
        }
        case DocumentKind::proposal: {
            const Proposal proposal = load_proposal_file(path, context.load_context());
            return fmt::format("{}: valid proposal '{}' ({} hardware lines)", shown, proposal.name,
                               proposal.hardware.size());
        }
        case DocumentKind::catalog: {
            const CheckedCatalogFile checked = check_catalog_file(context, path);
            return fmt::format("{}: valid catalog ({} GPUs)", shown, checked.ids.size());
        }
        case DocumentKind::models: {
            ModelLibrary library;
            merge_models_file(library, path);
            return fmt::format("{}: valid {} ({} models)", shown, kind_label(kind), library.models().size());
        }
    }
    return {};
}

}  // namespace

void register_validate(CLI::App& app, Context& context) {
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* command = app.add_subcommand(
        "validate",
        "Check workload, project, proposal or catalog files; report every error (exit 0 when all are valid)");
    command->add_option("files", *files, "Files to check ('-' = stdin); the kind is detected from the top-level keys")
        ->required()
        ->type_name("FILE");
    command->footer(
        "\nExamples:\n"
        "  gpusel validate examples/smart-support.yaml\n"
        "  git diff --name-only -- '*.yaml' | xargs gpusel validate     (in CI)\n"
        "\nErrors read file:line:col: field: message; exit code 3 when any file is invalid.");
    command->callback([files, &context] {
        bool all_valid = true;
        for (const std::string& path : *files) {
            try {
                const std::string summary = validate_one(path, context);
                if (!context.quiet) {
                    context.out << summary << "\n";
                }
            } catch (const InputError& error) {
                all_valid = false;
                for (const Diagnostic& diagnostic : error.diagnostics()) {
                    context.err << format_diagnostic(diagnostic) << "\n";
                }
            }
        }
        if (!all_valid) {
            context.exit_code = 3;
        }
    });
}

}  // namespace gpusel::cli
