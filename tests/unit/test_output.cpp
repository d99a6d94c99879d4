#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.hpp"
#include "io/output.hpp"

namespace fs = std::filesystem;
using gpusel::OutputBatch;
using gpusel::OutputError;
using gpusel::OutputTarget;
using gpusel::UsageError;
using gpusel::write_output;

namespace {

// A fresh directory per test, removed afterwards.
class ScratchDirectory {
public:
    ScratchDirectory() {
        std::string pattern = (fs::temp_directory_path() / "gpusel-output-test-XXXXXX").string();
        REQUIRE(::mkdtemp(pattern.data()) != nullptr);
        m_path = pattern;
    }
    ~ScratchDirectory() {
        std::error_code ignored;
        fs::remove_all(m_path, ignored);
    }
    ScratchDirectory(const ScratchDirectory&) = delete;
    ScratchDirectory& operator=(const ScratchDirectory&) = delete;
    fs::path operator/(const std::string& name) const { return m_path / name; }
    const fs::path& path() const { return m_path; }

    // Every entry, hidden ones (temporary files) included, sorted.
    std::vector<std::string> listing() const {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator(m_path)) {
            names.push_back(entry.path().filename().string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }

private:
    fs::path m_path;
};

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

void write_file(const fs::path& path, const std::string& content) {
    std::ofstream out(path, std::ios::binary);
    out << content;
}

OutputTarget file_target(const fs::path& path, bool force = false, std::vector<std::string> inputs = {}) {
    return OutputTarget{path.string(), force, std::move(inputs)};
}

// Every byte value, so that nothing is translated (XLSX is a ZIP file).
std::string binary_content() {
    std::string content;
    for (int repeat = 0; repeat < 300; ++repeat) {
        for (int byte = 0; byte < 256; ++byte) {
            content.push_back(static_cast<char>(byte));
        }
    }
    return content;
}

// A stream whose every write fails, like std::cout on a full disk.
class FailingBuffer : public std::streambuf {
protected:
    int_type overflow(int_type) override { return traits_type::eof(); }
    std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

// Runs `body` in a child process and returns its exit status (or 128 + signal).
template <typename Body>
int in_child(Body body) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        ::_exit(body());
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace

TEST_CASE("a new file is created whole, byte for byte, with mode 0666 minus the umask", "[output]") {
    ScratchDirectory directory;
    const std::string content = binary_content();
    const mode_t previous = ::umask(022);
    write_output(file_target(directory / "plan.xlsx"), content, std::cout);
    ::umask(previous);
    CHECK(read_file(directory / "plan.xlsx") == content);
    CHECK(directory.listing() == std::vector<std::string>{"plan.xlsx"});
    struct stat status {};
    REQUIRE(::stat((directory / "plan.xlsx").c_str(), &status) == 0);
    CHECK((status.st_mode & 07777) == 0644);
}

TEST_CASE("an empty output still creates the file", "[output]") {
    ScratchDirectory directory;
    write_output(file_target(directory / "empty.csv"), "", std::cout);
    CHECK(fs::file_size(directory / "empty.csv") == 0);
    CHECK(directory.listing() == std::vector<std::string>{"empty.csv"});
}

TEST_CASE("an existing file is left untouched without --force", "[output]") {
    ScratchDirectory directory;
    write_file(directory / "plan.csv", "old content\n");
    CHECK_THROWS_MATCHES(write_output(file_target(directory / "plan.csv"), "new\n", std::cout), OutputError,
                         Catch::Matchers::Message("cannot write '" + (directory / "plan.csv").string() +
                                                  "': file exists; use --force to replace it"));
    CHECK(read_file(directory / "plan.csv") == "old content\n");
    CHECK(directory.listing() == std::vector<std::string>{"plan.csv"});
    CHECK_THROWS_AS(gpusel::check_output_target(file_target(directory / "plan.csv")), OutputError);
}

TEST_CASE("an existing file is replaced with --force", "[output]") {
    ScratchDirectory directory;
    write_file(directory / "plan.csv", "old content that is longer than the new one\n");
    write_output(file_target(directory / "plan.csv", true), "new\n", std::cout);
    CHECK(read_file(directory / "plan.csv") == "new\n");
    CHECK(directory.listing() == std::vector<std::string>{"plan.csv"});
}

TEST_CASE("a file that appears between staging and publishing is not replaced", "[output]") {
    ScratchDirectory directory;
    {
        OutputBatch batch(std::cout);
        batch.add(file_target(directory / "plan.csv"), "ours\n");
        write_file(directory / "plan.csv", "theirs\n");
        CHECK_THROWS_AS(batch.commit(), OutputError);
    }
    CHECK(read_file(directory / "plan.csv") == "theirs\n");
    CHECK(directory.listing() == std::vector<std::string>{"plan.csv"});
}

TEST_CASE("an input file is never overwritten, whatever name reaches it", "[output]") {
    ScratchDirectory directory;
    const fs::path input = directory / "workload.yaml";
    write_file(input, "name: x\n");
    fs::create_hard_link(input, directory / "hard-link.yaml");
    fs::create_symlink(input, directory / "soft-link.yaml");
    const std::vector<std::string> inputs{"-", input.string()};
    for (const std::string name : {"workload.yaml", "hard-link.yaml", "soft-link.yaml"}) {
        for (const bool force : {false, true}) {
            CAPTURE(name, force);
            CHECK_THROWS_AS(write_output(file_target(directory / name, force, inputs), "x\n", std::cout), UsageError);
            CHECK_THROWS_AS(gpusel::check_output_target(file_target(directory / name, force, inputs)), UsageError);
        }
    }
    // The same input reached through "./" and "..".
    const fs::path roundabout = directory / ".." / directory.path().filename() / "." / "workload.yaml";
    CHECK_THROWS_WITH(write_output(file_target(roundabout, true, inputs), "x\n", std::cout),
                      Catch::Matchers::Contains("refusing to overwrite an input"));
    CHECK(read_file(input) == "name: x\n");
    CHECK(directory.listing() == std::vector<std::string>{"hard-link.yaml", "soft-link.yaml", "workload.yaml"});
}

TEST_CASE("a directory is refused as a target", "[output]") {
    ScratchDirectory directory;
    fs::create_directory(directory / "out");
    for (const std::string& path : {(directory / "out").string(), (directory / "out").string() + "/"}) {
        for (const bool force : {false, true}) {
            CAPTURE(path, force);
            CHECK_THROWS_MATCHES(
                write_output(OutputTarget{path, force, {}}, "x", std::cout), OutputError,
                Catch::Matchers::Message("cannot write '" + path + "': is a directory; give a file name"));
        }
    }
    CHECK(fs::is_empty(directory / "out"));
    CHECK(directory.listing() == std::vector<std::string>{"out"});
}

TEST_CASE("a missing directory is reported and nothing is created", "[output]") {
    ScratchDirectory directory;
    const fs::path target = directory / "no-such-dir" / "plan.csv";
    CHECK_THROWS_MATCHES(
        write_output(file_target(target), "x", std::cout), OutputError,
        Catch::Matchers::Message("cannot write '" + target.string() + "': directory '" +
                                 (directory / "no-such-dir").string() + "': No such file or directory"));
    CHECK(directory.listing().empty());
}

TEST_CASE("with --force a symbolic link is kept and the file it names is replaced", "[output]") {
    ScratchDirectory directory;
    fs::create_directory(directory / "dated");
    write_file(directory / "dated" / "plan-2026-11.csv", "old\n");
    fs::create_symlink(fs::path("dated") / "plan-2026-11.csv", directory / "latest.csv");
    CHECK_THROWS_AS(write_output(file_target(directory / "latest.csv"), "new\n", std::cout), OutputError);
    write_output(file_target(directory / "latest.csv", true), "new\n", std::cout);
    CHECK(fs::is_symlink(directory / "latest.csv"));
    CHECK(read_file(directory / "dated" / "plan-2026-11.csv") == "new\n");
    CHECK(directory.listing() == std::vector<std::string>{"dated", "latest.csv"});
}

TEST_CASE("a write to /dev/full fails with the system's reason and leaves no temporary file", "[output]") {
    if (!fs::exists("/dev/full")) {
        WARN("/dev/full is missing on this system");
        return;
    }
    const auto gpusel_entries = [] {
        std::vector<std::string> names;
        for (const auto& entry : fs::directory_iterator("/dev")) {
            if (entry.path().filename().string().find("gpusel") != std::string::npos) {
                names.push_back(entry.path().string());
            }
        }
        return names;
    };
    CHECK_THROWS_MATCHES(write_output(OutputTarget{"/dev/full", false, {}}, "data\n", std::cout), OutputError,
                         Catch::Matchers::Message("cannot write '/dev/full': No space left on device"));
    CHECK_THROWS_AS(write_output(OutputTarget{"/dev/full", true, {}}, "data\n", std::cout), OutputError);
    CHECK(gpusel_entries().empty());
    CHECK(fs::is_character_file("/dev/full"));
}

TEST_CASE("a character device is written in place without --force", "[output]") {
    write_output(OutputTarget{"/dev/null", false, {}}, "discarded\n", std::cout);
    CHECK(fs::is_character_file("/dev/null"));
}

TEST_CASE("exceeding the file size limit fails cleanly and leaves no partial file", "[output]") {
    ScratchDirectory directory;
    write_file(directory / "existing.csv", "old\n");
    const std::string big(100000, 'x');
    // In a child: the limit and the signal disposition are process-wide.
    const auto attempt = [&](const fs::path& target, bool force) {
        return in_child([&] {
            std::signal(SIGXFSZ, SIG_IGN);
            const rlimit limit{4096, 4096};
            if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) {
                return 99;
            }
            try {
                write_output(file_target(target, force), big, std::cout);
                return 0;
            } catch (const OutputError& error) {
                return std::string(error.what()).find("File too large") != std::string::npos ? 4 : 5;
            } catch (...) {
                return 70;
            }
        });
    };
    CHECK(attempt(directory / "new.csv", false) == 4);
    CHECK(attempt(directory / "existing.csv", true) == 4);
    CHECK(directory.listing() == std::vector<std::string>{"existing.csv"});
    CHECK(read_file(directory / "existing.csv") == "old\n");
}

TEST_CASE("prepare_process_for_output makes SIGXFSZ an error, not a kill", "[output]") {
    ScratchDirectory directory;
    const fs::path target = directory / "big.csv";
    const int status = in_child([&] {
        gpusel::prepare_process_for_output();
        const rlimit limit{4096, 4096};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        try {
            write_output(file_target(target), std::string(100000, 'x'), std::cout);
            return 0;
        } catch (const OutputError&) {
            return 4;
        }
    });
    CHECK(status == 4);
    CHECK(directory.listing().empty());
}

TEST_CASE("a closed standard output stays unwritable and its descriptor is not reused", "[output]") {
    const int status = in_child([] {
        ::close(STDOUT_FILENO);
        gpusel::prepare_process_for_output();
        if (::write(STDOUT_FILENO, "x", 1) != -1 || errno != EBADF) {
            return 1;
        }
        const int descriptor = ::open("/dev/null", O_WRONLY);
        return descriptor == STDOUT_FILENO ? 2 : 0;
    });
    CHECK(status == 0);
}

TEST_CASE("standard output is written and checked", "[output]") {
    std::ostringstream out;
    write_output(OutputTarget{"-", false, {}}, "a,b\r\n", out);
    write_output(OutputTarget{"", false, {}}, "c\r\n", out);
    CHECK(out.str() == "a,b\r\nc\r\n");

    FailingBuffer failing;
    std::ostream broken(&failing);
    CHECK_THROWS_WITH(write_output(OutputTarget{"-", false, {}}, "lost", broken),
                      Catch::Matchers::StartsWith("cannot write to standard output: "));
}

TEST_CASE("a batch publishes every file, or none when staging fails", "[output]") {
    ScratchDirectory directory;
    std::ostringstream out;
    {
        OutputBatch batch(out);
        batch.add(file_target(directory / "plan.csv"), "csv\n");
        batch.add(OutputTarget{"-", false, {}}, "summary\n");
        batch.add(file_target(directory / "plan.json"), "{}\n");
        CHECK(out.str().empty());
        batch.commit();
    }
    CHECK(read_file(directory / "plan.csv") == "csv\n");
    CHECK(read_file(directory / "plan.json") == "{}\n");
    CHECK(out.str() == "summary\n");

    ScratchDirectory second;
    {
        OutputBatch batch(out);
        batch.add(file_target(second / "plan.csv"), "csv\n");
        CHECK(second.listing().size() == 1);  // the staged temporary file
        CHECK_THROWS_AS(batch.add(file_target(second / "missing" / "plan.json"), "{}\n"), OutputError);
    }
    CHECK(second.listing().empty());
}

TEST_CASE("display names", "[output]") {
    CHECK(OutputTarget{"-", false, {}}.display_name() == "standard output");
    CHECK(OutputTarget{"", false, {}}.display_name() == "standard output");
    CHECK(OutputTarget{"a.csv", false, {}}.display_name() == "a.csv");
}
