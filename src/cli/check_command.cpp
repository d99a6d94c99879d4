// gpusel check PROPOSAL [--format text|json|github|junit] [-o FILE]: the CI gate for purchase
// proposals. Exit 0 when no finding is an error, 1 when one is, 3 when the proposal is invalid.

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "check/check.hpp"
#include "cli/context.hpp"
#include "cli/format_option.hpp"
#include "io/output.hpp"
#include "perf/perf.hpp"
#include "report/check_render.hpp"

namespace gpusel::cli {

namespace {

struct CheckOptions {
    std::string proposal_file;
    CheckFormat format = CheckFormat::text;
    std::string output;
    bool strict = false;
};

std::string render(CheckFormat format, const CheckReport& report) {
    switch (format) {
        case CheckFormat::json:
            return render_check_json(report);
        case CheckFormat::github:
            return render_check_github(report);
        case CheckFormat::junit:
            return render_check_junit(report);
        case CheckFormat::text:
            break;
    }
    return render_check_text(report);
}

// "Rules: unknown-role, ..., layout (docs/ci.md: when each fires)." from check_rules(), the list
// the checker evaluates, so the help names every rule; wrapped at 100 columns like the footer.
std::string rules_help() {
    std::string sentence = "Rules:";
    const std::vector<std::string_view>& rules = check_rules();
    for (std::size_t i = 0; i < rules.size(); ++i) {
        sentence += fmt::format(" {}{}", rules[i], i + 1 < rules.size() ? "," : "");
    }
    sentence += " (docs/ci.md: when each fires).";
    constexpr std::size_t help_width = 100;
    std::string text;
    std::string line;
    std::size_t start = 0;
    while (start < sentence.size()) {
        const std::size_t end = std::min(sentence.find(' ', start), sentence.size());
        const std::string_view word(sentence.data() + start, end - start);
        if (!line.empty() && line.size() + 1 + word.size() > help_width) {
            text += line + "\n";
            line.clear();
        }
        line += line.empty() ? std::string(word) : " " + std::string(word);
        start = end + 1;
    }
    return text + line + "\n";
}

void run_check(Context& context, const CheckOptions& options) {
    OutputTarget target;
    target.path = options.output;
    target.force = context.force;
    target.inputs = {options.proposal_file};
    const std::vector<std::string> option_files = context.option_input_files();
    target.inputs.insert(target.inputs.end(), option_files.begin(), option_files.end());
    check_output_target(target);

    Proposal proposal;
    try {
        proposal = load_proposal_file(options.proposal_file, context.load_context());
    } catch (const InputError& error) {
        // CI reads the machine formats: they say what is wrong and where, too. The diagnostics
        // also go to standard error and the exit code is 3 (app.cpp).
        std::string document;
        if (options.format == CheckFormat::json) {
            document = render_input_errors_json(options.proposal_file, error.diagnostics());
        } else if (options.format == CheckFormat::github) {
            document = render_input_errors_github(error.diagnostics());
        } else if (options.format == CheckFormat::junit) {
            document = render_input_errors_junit(options.proposal_file, error.diagnostics());
        }
        if (!document.empty()) {
            write_output(target, document, context.out);
        }
        throw;
    }
    if (options.strict) {
        proposal.policy.strict = true;
    }
    const std::vector<std::string> project_files = files_read_by(proposal.project);
    target.inputs.insert(target.inputs.end(), project_files.begin(), project_files.end());
    check_output_target(target);
    const std::vector<HardwareAssessment> assessments =
        assess_proposal(proposal, context.catalog(), builtin_efficiency());
    const CheckReport report = judge_proposal(proposal, assessments);
    write_output(target, render(options.format, report), context.out);
    context.exit_code = report.passed() ? 0 : 1;
}

}  // namespace

void register_check(CLI::App& app, Context& context) {
    auto options = std::make_shared<CheckOptions>();
    CLI::App* command = app.add_subcommand(
        "check", "Judge a purchase proposal against its workloads and policy (CI gate: exit 1 on any error finding)");
    command
        ->add_option("proposal", options->proposal_file,
                     "Proposal file (format 1: proposal, workload, hardware, policy)")
        ->required()
        ->type_name("PROPOSAL");
    add_format_option(command, options->format,
                      FormatNames<CheckFormat>{{"text", CheckFormat::text},
                                               {"json", CheckFormat::json},
                                               {"github", CheckFormat::github},
                                               {"junit", CheckFormat::junit}},
                      "text (default), json (format_version 1), github (workflow-command annotations) or junit (XML)");
    command
        ->add_option("-o,--output", options->output,
                     "Write the result to FILE (whole or not at all; --force to replace)")
        ->type_name("FILE");
    command->add_flag("--strict", options->strict,
                      "Every warning fails (exit 1), and a quoted price more than policy.max_price_gap (50 %) from "
                      "the catalog's is an error; the same as policy.strict: true");
    command->footer(
        "\nExamples:\n"
        "  gpusel check examples/proposals/good.yaml                           findings with evidence and fixes\n"
        "  gpusel check proposal.yaml --format github                          annotations on the PR's lines\n"
        "  gpusel check proposal.yaml --format junit -o gpusel-check.xml       a test report for GitLab/Jenkins\n"
        "  gpusel check proposal.yaml --format json | jq '.findings[].rule'    for scripts\n"
        "  gpusel check proposal.yaml --strict                                 warnings fail too (release gate)\n"
        "\n" +
        rules_help() +
        "Exit codes: 0 no error finding (warnings and notes allowed, unless --strict), 1 an error finding\n"
        "(or, with --strict, a warning), 2 usage error, 3 invalid proposal or workload (file:line:col on\n"
        "standard error), 4 output error.\n");
    command->callback([&context, options] { run_check(context, *options); });
}

}  // namespace gpusel::cli
