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

#include "gpusel/catalog.hpp"
#include "gpusel/models.hpp"
#include "gpusel/workload.hpp"

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

    // The exit code a subcommand wants (0 unless it found a failing check).
    int exit_code = 0;

    const Catalog& catalog();
    const ModelLibrary& models();
    LoadContext load_context() { return LoadContext{&catalog(), &models()}; }
    bool color() const;

private:
    std::optional<Catalog> m_catalog;
    std::optional<ModelLibrary> m_models;
};

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

// A catalog file checked the way --catalog uses it: merged over the catalog of this run (the
// built-in one and earlier --catalog files), so that an override giving only a price is valid.
// `ids` are the entries the file names, in file order. Throws InputError.
struct CheckedCatalogFile {
    Catalog merged;
    std::vector<std::string> ids;
};
CheckedCatalogFile check_catalog_file(Context& context, const std::string& path);

// Parses a CLI number strictly (no nan/inf/hex/leading zeros); throws UsageError naming the flag.
int parse_count_flag(const std::string& text, const std::string& flag, int min, int max);
double parse_number_flag(const std::string& text, const std::string& flag, double min, double max);

}  // namespace gpusel::cli
