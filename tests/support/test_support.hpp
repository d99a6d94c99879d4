#pragma once
// Helpers shared by the unit tests.

#include <string>
#include <vector>

#include "base/error.hpp"
#include "catalog/catalog.hpp"
#include "inputs/models.hpp"
#include "perf/perf.hpp"

namespace gpusel::test {

// The built-in catalog, model presets and efficiency factors, parsed once per test process.
inline const Catalog& catalog() {
    static const Catalog value = builtin_catalog();
    return value;
}
inline const ModelLibrary& models() {
    static const ModelLibrary value = builtin_models();
    return value;
}
inline const EfficiencyTable& efficiency() {
    static const EfficiencyTable value = builtin_efficiency();
    return value;
}

inline std::string source_path(const std::string& relative) {
    return std::string(GPUSEL_SOURCE_DIR) + "/" + relative;
}

// Runs `action`, which must throw InputError, and returns its diagnostics formatted as the CLI
// prints them. Returns {"<no error>"} when nothing was thrown.
template <typename Action>
std::vector<std::string> input_errors(Action&& action) {
    try {
        action();
    } catch (const InputError& error) {
        std::vector<std::string> lines;
        for (const Diagnostic& diagnostic : error.diagnostics()) {
            lines.push_back(format_diagnostic(diagnostic));
        }
        return lines;
    }
    return {"<no error>"};
}

}  // namespace gpusel::test
