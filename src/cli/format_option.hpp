#pragma once
// --format bound to an enum: every command that has one names its formats once, in a table, and
// a name not in it is a usage error "--format: 'NAME' is not one of A, B" raised while parsing.

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace gpusel::cli {

template <class Format>
using FormatNames = std::vector<std::pair<std::string, Format>>;

// Adds --format to `command`, writing the Format whose name is given into `format` (which keeps
// its value as the default when the flag is absent). The help shows `description` and FORMAT.
template <class Format>
CLI::Option* add_format_option(CLI::App* command, Format& format, FormatNames<Format> names,
                               const std::string& description) {
    // CLI11 parses an enum from its underlying integer: the transform swaps the name for it.
    CLI::Validator by_name(
        [names](std::string& value) -> std::string {
            std::vector<std::string> known;
            for (const auto& [name, id] : names) {
                if (name == value) {
                    value = std::to_string(static_cast<int>(id));
                    return {};
                }
                known.push_back(name);
            }
            return fmt::format("'{}' is not one of {}", value, fmt::join(known, ", "));
        },
        "", "format");
    return command->add_option("--format", format, description)->transform(by_name)->type_name("FORMAT");
}

}  // namespace gpusel::cli
