#pragma once
// Collects "skipped a line" style notes without letting a long log flood the output: each kind
// of note is reported once, with the first few line numbers and a count of the rest.

#include <string>
#include <vector>

namespace gpusel::telemetry_detail {

class NoteLog {
public:
    void add(const std::string& what, int line);
    void add(const std::string& what);  // once, without a line
    std::vector<std::string> finish() const;

private:
    struct Entry {
        std::string what;
        std::vector<int> lines;  // first few
        int count = 0;
    };
    std::vector<Entry> m_entries;
};

}  // namespace gpusel::telemetry_detail
