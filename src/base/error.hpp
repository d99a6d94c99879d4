#pragma once
// Error types of each layer. The CLI maps each type to one exit code
// (../docs/ARCHITECTURE.md): UsageError 2, InputError 3, OutputError 4, anything else 70.

#include <stdexcept>
#include <string>
#include <vector>

namespace gpusel {

// A position in an input file, 1-based. line == 0 means "no position known".
struct Position {
    int line = 0;
    int column = 0;
};

// One problem found in an input file. Rendered as
// "file:line:col: path: message" (parts that are unknown are left out).
struct Diagnostic {
    std::string file;
    Position position;
    std::string path;     // e.g. "training.lora.rank" or "gpus[3].memory"
    std::string message;  // one sentence, lower case start, no trailing period
};

std::string format_diagnostic(const Diagnostic& diagnostic);

// Bad input: a file that cannot be read, parsed or validated. Holds every problem
// found in the file, in file order. File, path and message are made printable UTF-8
// (printable_text in text.hpp): invalid bytes and control characters become \xNN.
class InputError : public std::runtime_error {
public:
    explicit InputError(std::vector<Diagnostic> diagnostics);
    explicit InputError(Diagnostic diagnostic);
    const std::vector<Diagnostic>& diagnostics() const { return m_diagnostics; }

private:
    InputError(std::vector<Diagnostic> printable_diagnostics, int);
    std::vector<Diagnostic> m_diagnostics;
};

// Bad command line: unknown option, invalid option value, wrong argument count.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An output could not be written (or was refused, e.g. overwrite without --force).
class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

}  // namespace gpusel
