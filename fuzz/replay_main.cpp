// Replays fuzz inputs through the same harness functions as the libFuzzer targets, in the
// normal build (g++, no libFuzzer), so that the seed corpora and every crasher ever found run
// as ordinary ctest cases.
//
//   gpusel_fuzz_replay TARGET PATH...   PATH: a file, or a folder whose regular files are all run
//
// Exit 0 when every input kept the contract; a violation aborts (non-zero exit, the harness
// prints which contract); 2 on bad arguments or an unreadable or empty input set.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness.hpp"

namespace {

std::vector<std::filesystem::path> collect(const std::filesystem::path& path) {
    std::vector<std::filesystem::path> files;
    if (std::filesystem::is_directory(path)) {
        for (const auto& entry : std::filesystem::directory_iterator(path)) {
            if (entry.is_regular_file()) {
                files.push_back(entry.path());
            }
        }
        std::sort(files.begin(), files.end());
    } else {
        files.push_back(path);
    }
    return files;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: gpusel_fuzz_replay TARGET PATH...\n");
        return 2;
    }
    const gpusel::fuzz::Target* target = gpusel::fuzz::find_target(argv[1]);
    if (target == nullptr) {
        std::fprintf(stderr, "unknown fuzz target '%s'\n", argv[1]);
        return 2;
    }
    std::size_t replayed = 0;
    for (int i = 2; i < argc; ++i) {
        for (const std::filesystem::path& file : collect(argv[i])) {
            std::ifstream in(file, std::ios::binary);
            if (!in) {
                std::fprintf(stderr, "cannot read %s\n", file.c_str());
                return 2;
            }
            const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            std::fprintf(stderr, "%s: %s (%zu bytes)\n", argv[1], file.c_str(), bytes.size());
            target->run(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
            ++replayed;
        }
    }
    if (replayed == 0) {
        std::fprintf(stderr, "no inputs found\n");
        return 2;
    }
    std::printf("%s: %zu inputs replayed, contract kept\n", argv[1], replayed);
    return 0;
}
