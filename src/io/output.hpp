#pragma once
// Writing results (io layer): standard output or a file, whole or not at all.
//
// Contract (docs/reliability.md, "Outputs"):
//  - Standard output ("-" or no -o): the content is written, flushed and checked; a failed
//    write (full disk, closed stdout, EPIPE when SIGPIPE is ignored) throws OutputError.
//  - A file is written through a temporary file in the same directory
//    (".NAME.gpusel-XXXXXX.tmp", created O_CREAT|O_EXCL, mode 0666 & ~umask), every write
//    checked, fsync'd, closed, then published with rename(2) (--force) or with a no-replace
//    rename / link(2) (otherwise), and the directory fsync'd. On any failure the temporary
//    file is removed and OutputError says why (strerror); the target is untouched.
//  - An existing target is never replaced without `force` (OutputError, exit 4). With force,
//    a symbolic link is kept and the file it names is replaced (atomically, in that file's
//    directory); a dangling link is replaced by the new file.
//  - A path that is the file standard output already writes to (/dev/stdout, /proc/self/fd/1,
//    or `-o out.csv > out.csv`) is written as standard output.
//  - A target that is the same file as an input (same device and inode, so hard and symbolic
//    links are caught) is refused even with force: UsageError (exit 2), because the command
//    line itself is wrong (docs/reference/pitfalls.md §5).
//  - A directory target is refused (OutputError), and so are block devices and sockets. An
//    existing character device or FIFO (/dev/null, a pipe from the shell's >(...)) is written
//    in place: there is nothing to replace, so no temporary file and no --force are needed.
//  - Content is bytes: text and binary (XLSX) alike; nothing is translated.

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace gpusel {

struct OutputTarget {
    std::string path;                 // "" or "-": standard output
    bool force = false;               // replace an existing file
    std::vector<std::string> inputs;  // files this run read ("-" ignored): never overwritten

    bool is_standard_output() const { return path.empty() || path == "-"; }
    std::string display_name() const;  // "standard output" or the path
};

// Refuses a target that cannot or must not be written, before any work is done: an input
// file (UsageError), an existing file without force, a directory, a missing parent directory
// (OutputError). write_output() checks again; call this early so that a long computation is
// not thrown away. Standard output always passes.
void check_output_target(const OutputTarget& target);

// Writes `content` whole to `target` (see the contract above); `standard_output` is the stream
// used when the target is standard output. Throws OutputError or UsageError.
void write_output(const OutputTarget& target, std::string_view content, std::ostream& standard_output);

// Several outputs of one run (e.g. CSV and JSON): each add() writes a temporary file at once;
// commit() publishes them in order, standard output last. A failure before the first file is
// published leaves every target as it was; a failure later leaves the files published so far
// (each whole) and the rest untouched. The destructor removes every temporary file not yet
// published, so an exception anywhere leaves none behind.
class OutputBatch {
public:
    explicit OutputBatch(std::ostream& standard_output);
    ~OutputBatch();
    OutputBatch(const OutputBatch&) = delete;
    OutputBatch& operator=(const OutputBatch&) = delete;

    void add(const OutputTarget& target, std::string_view content);
    void commit();

private:
    struct Staged;
    std::ostream& m_standard_output;
    std::vector<std::unique_ptr<Staged>> m_staged;
};

// Flushes `stream` and throws OutputError("cannot write to <name>: <strerror>") if it failed.
void flush_and_check(std::ostream& stream, std::string_view name);

// Process-wide set-up for a command-line program, called once at the start of main:
//  - a closed standard descriptor (0, 1 or 2) is re-opened on /dev/null in the wrong direction,
//    so that writes to a closed stdout still fail (exit 4) and no file opened later can take
//    descriptor 1 and receive the report by accident;
//  - SIGXFSZ is ignored, so that exceeding the file size limit (ulimit -f) makes write() fail
//    with EFBIG and the temporary file is removed, instead of the process being killed;
//  - SIGPIPE keeps its default: `gpusel ... | head` ends quietly with the signal, as other
//    Unix filters do. When the caller ignores SIGPIPE, EPIPE is an ordinary write error (exit 4).
void prepare_process_for_output();

}  // namespace gpusel
