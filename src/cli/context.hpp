#pragma once
// State shared by the subcommands of one run: global options, streams, and the catalog and
// model library, loaded once on first use.

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "catalog/catalog.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "io/output.hpp"

namespace gpusel::cli {

struct Context {
    Context(std::ostream& output, std::ostream& error, bool tty) : out(output), err(error), stdout_is_tty(tty) {}

    std::ostream& out;
    std::ostream& err;
    bool stdout_is_tty = false;

    // Global options.
    std::vector<std::string> catalog_files;
    std::string models_file;
    bool no_color = false;
    bool quiet = false;
    bool force = false;
    bool offline = false;  // --offline: Hugging Face ids from the local cache only

    // The exit code a subcommand wants (0 unless it found a failing check).
    int exit_code = 0;

    const Catalog& catalog();
    const ModelLibrary& models();
    // The files the global options name (--catalog, --models), for OutputTarget::inputs.
    std::vector<std::string> option_input_files() const;
    LoadContext load_context() { return LoadContext{&catalog(), &models(), offline}; }
    bool color() const;

private:
    std::optional<Catalog> m_catalog;
    std::optional<ModelLibrary> m_models;
};

// The files loading `project` read, for OutputTarget::inputs: the project file, each workload's
// file (a workloads[].file entry, or the project file for an inline workload), and each model's
// source, which for a model.hf_config is the config file read (models.hpp). A preset's source
// is a citation that names no file here; output.cpp matches only existing files (device and
// inode), so such a name never matches an output.
std::vector<std::string> files_read_by(const Project& project);

// Loads FILE (a workload or project) for a command that writes `target` (plan, report). Adds
// FILE, the --catalog and --models files and, once loaded, files_read_by(project) to
// target.inputs, and refuses the target (check_output_target) before loading and again after,
// so that nothing is planned for an output that will be refused.
Project load_plan_input_for_output(Context& context, const std::string& file, OutputTarget& target);

// `--calibration FILE` of plan, perf and memory (calibration_option.cpp, docs/calibrate.md):
// adds the option to `command`; then appends the points of FILE's `calibration:` block (what
// `gpusel calibrate` writes) to the workload, or in a project to the one workload each point can
// calibrate (inference speeds to the inference workload, training speeds and memory to the
// training one). "" does nothing. Throws InputError (FILE:line:col) or UsageError.
void add_calibration_option(CLI::App* command, std::string& file);
void apply_calibration_option(Context& context, const std::string& file, Workload& workload);
void apply_calibration_option(Context& context, const std::string& file, Project& project);

// How an input path is named in output and messages: "<stdin>" for '-'.
std::string input_display_name(const std::string& path);

// Each subcommand lives in its own file and registers itself here.
void register_validate(CLI::App& app, Context& context);
void register_catalog(CLI::App& app, Context& context);
void register_models(CLI::App& app, Context& context);
void register_memory(CLI::App& app, Context& context);
void register_perf(CLI::App& app, Context& context);
void register_plan(CLI::App& app, Context& context);
void register_check(CLI::App& app, Context& context);
void register_diagnose(CLI::App& app, Context& context);
void register_verify(CLI::App& app, Context& context);
void register_report(CLI::App& app, Context& context);
void register_deploy(CLI::App& app, Context& context);
void register_calibrate(CLI::App& app, Context& context);

// A catalog file checked the way --catalog uses it: merged over the catalog of this run (the
// built-in one and earlier --catalog files), so that an override giving only a price is valid.
// `ids` are the entries the file names, in file order. Throws InputError.
struct CheckedCatalogFile {
    Catalog merged;
    std::vector<std::string> ids;  // of the GPUs and offers the file defines or overrides
    std::size_t gpus = 0;
    std::size_t offers = 0;
};
CheckedCatalogFile check_catalog_file(Context& context, const std::string& path);

// Parses a CLI number strictly (no nan/inf/hex/leading zeros); throws UsageError naming the flag.
int parse_count_flag(const std::string& text, const std::string& flag, int min, int max);

}  // namespace gpusel::cli
