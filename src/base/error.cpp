#include "base/error.hpp"

#include <fmt/format.h>

#include "base/text.hpp"

namespace gpusel {

std::string format_diagnostic(const Diagnostic& diagnostic) {
    std::string text = diagnostic.file;
    if (diagnostic.position.line > 0) {
        text += fmt::format(":{}:{}", diagnostic.position.line, diagnostic.position.column);
    }
    if (!text.empty()) {
        text += ": ";
    }
    if (!diagnostic.path.empty()) {
        text += diagnostic.path + ": ";
    }
    return text + diagnostic.message;
}

namespace {
std::string summary(const std::vector<Diagnostic>& diagnostics) {
    return diagnostics.empty() ? std::string("invalid input") : format_diagnostic(diagnostics.front());
}
}  // namespace

namespace {
// Messages quote input (yaml-cpp quotes a lone byte of a multi-byte character; telemetry
// parsers quote cells of files that are not checked as UTF-8), and file names are the
// user's bytes. Every diagnostic is made printable UTF-8 here, once for all loaders
// (fuzz/regressions/yaml/escape-of-multibyte-character.yaml,
// fuzz/regressions/telemetry/dmon-header-invalid-utf8.txt).
std::vector<Diagnostic> printable(std::vector<Diagnostic> diagnostics) {
    for (Diagnostic& diagnostic : diagnostics) {
        diagnostic.file = printable_text(diagnostic.file);
        diagnostic.path = printable_text(diagnostic.path);
        diagnostic.message = printable_text(diagnostic.message);
    }
    return diagnostics;
}
}  // namespace

InputError::InputError(std::vector<Diagnostic> diagnostics) : InputError(printable(std::move(diagnostics)), 0) {}

InputError::InputError(std::vector<Diagnostic> printable_diagnostics, int)
    : std::runtime_error(summary(printable_diagnostics)), m_diagnostics(std::move(printable_diagnostics)) {}

InputError::InputError(Diagnostic diagnostic) : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

}  // namespace gpusel
