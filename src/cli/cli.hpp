#pragma once
// The command line. run() parses arguments, calls the core, renders, and maps every error to
// an exit code: 0 ok, 1 check failed / nothing feasible, 2 usage, 3 input, 4 output, 70 internal.

#include <iosfwd>
#include <string>
#include <vector>

namespace gpusel::cli {

int run(int argc, char** argv);
// `args` excludes the program name. `stdout_is_tty` decides colour (with NO_COLOR, --no-color).
int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool stdout_is_tty = false);

}  // namespace gpusel::cli
