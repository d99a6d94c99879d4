#include "gpusel/error.hpp"

#include <fmt/format.h>

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

InputError::InputError(std::vector<Diagnostic> diagnostics)
    : std::runtime_error(summary(diagnostics)), m_diagnostics(std::move(diagnostics)) {}

InputError::InputError(Diagnostic diagnostic)
    : InputError(std::vector<Diagnostic>{std::move(diagnostic)}) {}

}  // namespace gpusel
