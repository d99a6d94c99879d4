#include "io/output.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <ostream>
#include <random>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "base/error.hpp"

namespace gpusel {

namespace {

std::string error_text(int error) {
    return error == 0 ? std::string("write error") : std::strerror(error);
}

[[noreturn]] void fail(const OutputTarget& target, std::string_view reason) {
    throw OutputError(fmt::format("cannot write '{}': {}", target.path, reason));
}

[[noreturn]] void fail_errno(const OutputTarget& target, std::string_view doing, int error) {
    fail(target, doing.empty() ? error_text(error) : fmt::format("{}: {}", doing, error_text(error)));
}

bool same_file(const struct stat& a, const struct stat& b) {
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

// How a target is written, decided from what is at its path now.
enum class Route {
    standard_output,  // "-", or a path that is the file standard output already writes to
    in_place,         // an existing character device or FIFO: nothing to replace
    new_file,         // nothing there: create it (never replacing one that appears meanwhile)
    replace_file,     // an existing regular file, with force
};

struct Plan {
    Route route = Route::new_file;
    std::filesystem::path file;  // the path to publish to (links resolved for replace_file)
};

Plan plan_target(const OutputTarget& target) {
    if (target.is_standard_output()) {
        return {Route::standard_output, {}};
    }
    if (target.path.back() == '/') {
        fail(target, "is a directory; give a file name");
    }
    struct stat status {};
    if (::stat(target.path.c_str(), &status) == 0) {
        // Same device and inode: catches the input given by another name, a hard link or a
        // symbolic link. Refused even with --force: the command line is wrong (exit 2).
        for (const std::string& input : target.inputs) {
            struct stat input_status {};
            if (input != "-" && ::stat(input.c_str(), &input_status) == 0 && same_file(status, input_status)) {
                throw UsageError(
                    fmt::format("-o '{}' is the input file '{}'; refusing to overwrite an input", target.path, input));
            }
        }
        struct stat stdout_status {};
        if (::fstat(STDOUT_FILENO, &stdout_status) == 0 && same_file(status, stdout_status)) {
            return {Route::standard_output, {}};  // /dev/stdout, /proc/self/fd/1, or the file stdout goes to
        }
        if (S_ISDIR(status.st_mode)) {
            fail(target, "is a directory; give a file name");
        }
        if (S_ISCHR(status.st_mode) || S_ISFIFO(status.st_mode)) {
            return {Route::in_place, target.path};
        }
        if (!S_ISREG(status.st_mode)) {
            fail(target, "is not a regular file (a block device or socket)");
        }
        if (!target.force) {
            fail(target, "file exists; use --force to replace it");
        }
        // A symbolic link stays; the file it names is replaced, in that file's directory.
        std::error_code error;
        std::filesystem::path resolved = std::filesystem::canonical(target.path, error);
        if (error) {
            fail(target, fmt::format("cannot resolve the path: {}", error.message()));
        }
        return {Route::replace_file, std::move(resolved)};
    }
    const int stat_error = errno;
    if (stat_error != ENOENT) {
        fail_errno(target, "", stat_error);
    }
    struct stat link_status {};
    if (::lstat(target.path.c_str(), &link_status) == 0) {
        // A dangling symbolic link: it names no file to keep, but it is not ours to remove.
        if (!target.force) {
            fail(target, "a symbolic link exists there (its target is missing); use --force to replace it");
        }
        return {Route::replace_file, target.path};
    }
    std::filesystem::path parent = std::filesystem::path(target.path).parent_path();
    if (parent.empty()) {
        parent = ".";
    }
    struct stat parent_status {};
    if (::stat(parent.c_str(), &parent_status) != 0) {
        fail_errno(target, fmt::format("directory '{}'", parent.string()), errno);
    }
    if (!S_ISDIR(parent_status.st_mode)) {
        fail(target, fmt::format("'{}' is not a directory", parent.string()));
    }
    return {Route::new_file, target.path};
}

// Writes all of `content` to `descriptor`; returns 0 or the errno of the failed write.
int write_all(int descriptor, std::string_view content) {
    while (!content.empty()) {
        const ssize_t written = ::write(descriptor, content.data(), content.size());
        if (written < 0) {
            if (errno == EINTR) {
                continue;
            }
            return errno;
        }
        if (written == 0) {
            return EIO;  // a write that makes no progress would loop forever
        }
        content.remove_prefix(static_cast<std::size_t>(written));
    }
    return 0;
}

std::string random_suffix() {
    static constexpr std::string_view alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
    thread_local std::mt19937 generator{std::random_device{}()};
    std::uniform_int_distribution<std::size_t> pick(0, alphabet.size() - 1);
    std::string suffix(6, 'x');
    for (char& c : suffix) {
        c = alphabet[pick(generator)];
    }
    return suffix;
}

// Flushes a directory entry (the rename) to disk. Filesystems that cannot sync a directory
// say EINVAL; that is not a failure of this write.
int sync_directory(const std::filesystem::path& directory) {
    const int descriptor = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (descriptor < 0) {
        return errno;
    }
    int result = 0;
    if (::fsync(descriptor) != 0 && errno != EINVAL) {
        result = errno;
    }
    ::close(descriptor);
    return result;
}

}  // namespace

std::string OutputTarget::display_name() const {
    return is_standard_output() ? std::string("standard output") : path;
}

void check_output_target(const OutputTarget& target) {
    plan_target(target);
}

void flush_and_check(std::ostream& stream, std::string_view name) {
    // A stream that already failed keeps the errno of its failed write (callers clear errno
    // before writing); a good one may fail now, in the flush.
    if (stream) {
        errno = 0;
        stream.flush();
    }
    if (!stream) {
        const int error = errno;
        throw OutputError(fmt::format("cannot write to {}: {}", name, error_text(error)));
    }
}

struct OutputBatch::Staged {
    OutputTarget target;
    Plan plan;
    std::string content;                   // standard output and in-place targets: written at commit
    std::filesystem::path temporary_file;  // files: written at add(), published at commit
    bool published = false;
};

OutputBatch::OutputBatch(std::ostream& standard_output) : m_standard_output(standard_output) {}

OutputBatch::~OutputBatch() {
    for (const auto& staged : m_staged) {
        if (!staged->temporary_file.empty() && !staged->published) {
            ::unlink(staged->temporary_file.c_str());
        }
    }
}

void OutputBatch::add(const OutputTarget& target, std::string_view content) {
    auto staged = std::make_unique<Staged>();
    staged->target = target;
    staged->plan = plan_target(target);
    if (staged->plan.route == Route::standard_output || staged->plan.route == Route::in_place) {
        staged->content = std::string(content);
        m_staged.push_back(std::move(staged));
        return;
    }
    // The temporary file lives in the target's directory: rename() cannot cross filesystems.
    const std::filesystem::path& file = staged->plan.file;
    std::filesystem::path directory = file.parent_path();
    if (directory.empty()) {
        directory = ".";
    }
    // Keep the name well below NAME_MAX (255) whatever the target's length.
    const std::string stem = file.filename().string().substr(0, 100);
    int descriptor = -1;
    for (int attempt = 0; attempt < 100 && descriptor < 0; ++attempt) {
        staged->temporary_file = directory / fmt::format(".{}.gpusel-{}.tmp", stem, random_suffix());
        // Mode 0666 is reduced by the umask, as for any file the user creates (mkstemp's 0600
        // would hide a purchase list from the finance team's group).
        descriptor = ::open(staged->temporary_file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
        if (descriptor < 0 && errno != EEXIST) {
            const int error = errno;
            staged->temporary_file.clear();
            fail_errno(target, fmt::format("cannot create a temporary file in '{}'", directory.string()), error);
        }
    }
    if (descriptor < 0) {
        staged->temporary_file.clear();
        fail(target, "cannot create a temporary file: too many name collisions");
    }
    // From here the destructor removes the temporary file on any failure.
    m_staged.push_back(std::move(staged));
    const Staged& added = *m_staged.back();
    int error = write_all(descriptor, content);
    // fsync before rename: otherwise a crash can publish the name with empty content (ext4
    // delayed allocation); close can report deferred errors (NFS), so both are checked.
    if (error == 0 && ::fsync(descriptor) != 0 && errno != EINVAL) {
        error = errno;
    }
    if (::close(descriptor) != 0 && error == 0 && errno != EINTR) {
        error = errno;
    }
    if (error != 0) {
        ::unlink(added.temporary_file.c_str());
        m_staged.pop_back();
        fail_errno(target, "", error);
    }
}

namespace {

// Publishes `temporary` as `target` without ever replacing a file that exists.
int publish_without_replacing(const std::filesystem::path& temporary, const std::filesystem::path& target) {
    if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, target.c_str(), RENAME_NOREPLACE) == 0) {
        return 0;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP) {
        return errno;
    }
    // Filesystems without RENAME_NOREPLACE (NFS, older kernels): link(2) fails with EEXIST too.
    if (::link(temporary.c_str(), target.c_str()) == 0) {
        ::unlink(temporary.c_str());
        return 0;
    }
    if (errno != EPERM && errno != ENOTSUP && errno != ENOSYS) {
        return errno;
    }
    // Neither (e.g. vfat): check, then rename. A file created in between would be replaced;
    // no atomic alternative exists on such a filesystem.
    struct stat status {};
    if (::lstat(target.c_str(), &status) == 0) {
        return EEXIST;
    }
    return ::rename(temporary.c_str(), target.c_str()) == 0 ? 0 : errno;
}

void write_in_place(const OutputTarget& target, std::string_view content) {
    const int descriptor = ::open(target.path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (descriptor < 0) {
        fail_errno(target, "", errno);
    }
    int error = write_all(descriptor, content);
    if (::close(descriptor) != 0 && error == 0 && errno != EINTR) {
        error = errno;
    }
    if (error != 0) {
        fail_errno(target, "", error);
    }
}

}  // namespace

void OutputBatch::commit() {
    // Files first: a failure there must not leave a report on stdout that claims success.
    for (const auto& staged : m_staged) {
        if (staged->published || staged->plan.route == Route::standard_output) {
            continue;
        }
        if (staged->plan.route == Route::in_place) {
            write_in_place(staged->target, staged->content);
            staged->published = true;
            continue;
        }
        const std::filesystem::path& file = staged->plan.file;
        int error = 0;
        if (staged->plan.route == Route::replace_file) {
            // rename(2) replaces atomically: readers see the old file or the new, never neither.
            error = ::rename(staged->temporary_file.c_str(), file.c_str()) == 0 ? 0 : errno;
        } else {
            error = publish_without_replacing(staged->temporary_file, file);
        }
        if (error == EEXIST) {
            fail(staged->target, "file exists; use --force to replace it");
        }
        if (error != 0) {
            fail_errno(staged->target, "", error);
        }
        staged->published = true;
        std::filesystem::path directory = file.parent_path();
        if (const int sync_error = sync_directory(directory.empty() ? std::filesystem::path(".") : directory)) {
            fail_errno(staged->target, "written, but its directory could not be synced", sync_error);
        }
    }
    for (const auto& staged : m_staged) {
        if (staged->published) {
            continue;
        }
        errno = 0;
        m_standard_output.write(staged->content.data(), static_cast<std::streamsize>(staged->content.size()));
        flush_and_check(m_standard_output, "standard output");
        staged->published = true;
    }
}

void write_output(const OutputTarget& target, std::string_view content, std::ostream& standard_output) {
    OutputBatch batch(standard_output);
    batch.add(target, content);
    batch.commit();
}

void prepare_process_for_output() {
    for (int descriptor = STDIN_FILENO; descriptor <= STDERR_FILENO; ++descriptor) {
        if (::fcntl(descriptor, F_GETFD) == -1 && errno == EBADF) {
            // The wrong direction on purpose: reading a closed stdin or writing a closed stdout
            // must still fail (EBADF), as it would have without this.
            const int opened = ::open("/dev/null", descriptor == STDIN_FILENO ? O_WRONLY : O_RDONLY);
            if (opened >= 0 && opened != descriptor) {
                ::dup2(opened, descriptor);
                ::close(opened);
            }
        }
    }
    std::signal(SIGXFSZ, SIG_IGN);
}

}  // namespace gpusel
