#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include <unistd.h>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "cli/cli.hpp"
#include "cli/context.hpp"
#include "io/output.hpp"

namespace gpusel::cli {

const Catalog& Context::catalog() {
    if (!m_catalog) {
        Catalog catalog = builtin_catalog();
        for (const std::string& file : catalog_files) {
            merge_catalog_file(catalog, file);
        }
        m_catalog = std::move(catalog);
    }
    return *m_catalog;
}

const ModelLibrary& Context::models() {
    if (!m_models) {
        ModelLibrary library = builtin_models();
        if (!models_file.empty()) {
            merge_models_file(library, models_file);
        }
        m_models = std::move(library);
    }
    return *m_models;
}

std::vector<std::string> Context::option_input_files() const {
    std::vector<std::string> files = catalog_files;
    if (!models_file.empty()) {
        files.push_back(models_file);
    }
    return files;
}

std::string input_display_name(const std::string& path) {
    return path == "-" ? "<stdin>" : path;
}

std::vector<std::string> files_read_by(const Project& project) {
    std::vector<std::string> files;
    const auto add = [&](const std::string& file) {
        if (!file.empty() && std::find(files.begin(), files.end(), file) == files.end()) {
            files.push_back(file);
        }
    };
    add(project.file);
    for (const Workload& workload : project.workloads) {
        add(workload.file);
        add(workload.model.source);
    }
    return files;
}

Project load_plan_input_for_output(Context& context, const std::string& file, OutputTarget& target) {
    target.inputs.push_back(file);
    const std::vector<std::string> option_files = context.option_input_files();
    target.inputs.insert(target.inputs.end(), option_files.begin(), option_files.end());
    check_output_target(target);
    Project project = load_plan_input_file(file, context.load_context());
    // The files a project pulls in (workloads[].file, model.hf_config) are known only now.
    const std::vector<std::string> project_files = files_read_by(project);
    target.inputs.insert(target.inputs.end(), project_files.begin(), project_files.end());
    check_output_target(target);
    return project;
}

bool Context::color() const {
    const char* no_color_env = std::getenv("NO_COLOR");
    return stdout_is_tty && !no_color && (no_color_env == nullptr || *no_color_env == '\0');
}

int parse_count_flag(const std::string& text, const std::string& flag, int min, int max) {
    const ParsedNumber parsed = parse_integer(text);
    if (!parsed.value) {
        throw UsageError(fmt::format("{}: {}", flag, parsed.error));
    }
    if (*parsed.value < min || *parsed.value > max) {
        throw UsageError(fmt::format("{}: '{}' is out of range; expected {} to {}", flag, text, min, max));
    }
    return static_cast<int>(*parsed.value);
}

namespace {

constexpr const char* program_description =
    "gpusel: GPU sizing and selection advisor.\n"
    "Estimates memory, predicts speed, names the bottleneck and prices every option over the\n"
    "project's life, then prints a ranked procurement table with reasons.";

constexpr const char* program_footer =
    "\nExamples:\n"
    "  gpusel catalog list                         the GPUs gpusel knows, with prices\n"
    "  gpusel models show llama-3.1-8b             a model preset's architecture\n"
    "  gpusel models show Qwen/Qwen3-30B-A3B       a Hugging Face model: its config.json, cached or downloaded\n"
    "  gpusel memory examples/llama-finetune.yaml  will it fit? per-GPU memory on every catalog GPU\n"
    "  gpusel validate examples/*.yaml             check workload, project, proposal or catalog files\n"
    "  gpusel perf examples/chat-llama2-13b-int4.yaml --gpu L40   speed, P99 latency and bottleneck\n"
    "  gpusel catalog list --catalog quotes.yaml   with your negotiated prices\n"
    "  gpusel report examples/smart-support.yaml -o r.html   the plan as an HTML page with charts\n"
    "  gpusel deploy examples/chat-llama2-13b-int4.yaml --target vllm   launch the pick: vllm serve ...\n"
    "\nExit codes: 0 ok, 1 check failed or nothing feasible, 2 usage error, 3 input error,\n"
    "4 output error, 70 internal error. Documentation: docs/ (workload.md, catalog.md).";

void print_input_error(const InputError& error, std::ostream& err) {
    for (const Diagnostic& diagnostic : error.diagnostics()) {
        err << format_diagnostic(diagnostic) << "\n";
    }
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool stdout_is_tty) {
    Context context{out, err, stdout_is_tty};
    CLI::App app{program_description, "gpusel"};
    app.footer(program_footer);
    app.set_version_flag("--version", std::string("gpusel ") + GPUSEL_VERSION);
    app.add_option("--catalog", context.catalog_files,
                   "Extra catalog file (repeatable); later files add entries or override them by id")
        ->type_name("FILE");
    app.add_option("--models", context.models_file, "Extra model presets file")->type_name("FILE");
    app.add_flag("--offline", context.offline,
                 "Resolve Hugging Face ids (model: {hf: ORG/NAME}) from the local cache only, as HF_HUB_OFFLINE=1");
    app.add_flag("--no-color", context.no_color, "Never colour the output (NO_COLOR is honoured too)");
    app.add_flag("--quiet", context.quiet, "Print only the result, no assumptions or hints");
    app.add_flag("--force", context.force, "Overwrite an existing -o file");
    app.require_subcommand(1);
    app.fallthrough();

    // The order of --help: the decision first, then its parts, then the tools around it.
    register_plan(app, context);
    register_report(app, context);
    register_memory(app, context);
    register_perf(app, context);
    register_check(app, context);
    register_deploy(app, context);
    register_diagnose(app, context);
    register_calibrate(app, context);
    register_verify(app, context);
    register_validate(app, context);
    register_catalog(app, context);
    register_models(app, context);

    std::vector<std::string> reversed(args.rbegin(), args.rend());
    try {
        // CLI11 reports a mistyped command as "A subcommand is required"; name it instead.
        for (const std::string& arg : args) {
            if (arg.empty() || arg[0] == '-') {
                if (arg == "--catalog" || arg == "--models") {
                    break;  // the next word is a file, not a command
                }
                continue;
            }
            std::vector<std::string> commands;
            for (const CLI::App* sub : app.get_subcommands({})) {
                commands.push_back(sub->get_name());
            }
            if (std::find(commands.begin(), commands.end(), arg) == commands.end()) {
                throw UsageError(fmt::format("unknown command '{}'{}; commands: {}", arg, did_you_mean(arg, commands),
                                             fmt::join(commands, ", ")));
            }
            break;
        }
        try {
            app.parse(reversed);
        } catch (const CLI::CallForHelp&) {
            out << app.help();
            return 0;
        } catch (const CLI::CallForAllHelp&) {
            out << app.help("", CLI::AppFormatMode::All);
            return 0;
        } catch (const CLI::CallForVersion&) {
            out << "gpusel " << GPUSEL_VERSION << "\n";
            return 0;
        } catch (const CLI::ParseError& error) {
            // CLI11 reports help on a subcommand through the same exception with code 0.
            if (error.get_exit_code() == 0) {
                const CLI::App* target = &app;
                for (const CLI::App* sub = &app; !sub->get_subcommands().empty();) {
                    sub = sub->get_subcommands().front();
                    target = sub;
                }
                out << target->help();
                return 0;
            }
            throw UsageError(error.what());
        }
        return context.exit_code;
    } catch (const UsageError& error) {
        err << "gpusel: error: " << error.what() << "\n"
            << "Run 'gpusel --help' for usage.\n";
        return 2;
    } catch (const InputError& error) {
        print_input_error(error, err);
        return 3;
    } catch (const OutputError& error) {
        err << "gpusel: error: " << error.what() << "\n";
        return 4;
    } catch (const std::bad_alloc&) {
        err << "gpusel: internal error: out of memory\n";
        return 70;
    } catch (const std::exception& error) {
        err << "gpusel: internal error: " << error.what() << "\n";
        return 70;
    }
}

int run(int argc, char** argv) {
    prepare_process_for_output();
    std::vector<std::string> args;
    for (int i = 1; i < argc; ++i) {
        args.emplace_back(argv[i]);
    }
    const int code = run(args, std::cout, std::cerr, ::isatty(STDOUT_FILENO) == 1);
    // Whatever a command printed is only delivered once this flush succeeds (docs/reference/pitfalls.md §5:
    // without it, a full disk or a closed stdout exits 0 with the report lost). A lost report
    // is exit 4 also when the command found a failing check (1): the caller saw no findings.
    // Usage, input and internal errors keep their code; 4 has been reported already.
    if (code == 0 || code == 1) {
        try {
            flush_and_check(std::cout, "standard output");
            errno = 0;
            if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) {
                throw OutputError(fmt::format("cannot write to standard output: {}",
                                              errno != 0 ? std::strerror(errno) : "write error"));
            }
        } catch (const OutputError& error) {
            std::cerr << "gpusel: error: " << error.what() << "\n";
            return 4;
        }
    }
    return code;
}

}  // namespace gpusel::cli
