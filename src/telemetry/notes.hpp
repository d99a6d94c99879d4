#pragma once
// Collects "skipped a line" style notes without letting a long log flood the output: each kind
// of note is reported once, with the first few line numbers and a count of the rest, and at
// most max_note_kinds kinds are kept (a hostile file can make every line a different note).
// Notes are printable: bytes from the input that are not (control characters, invalid UTF-8)
// come out as \xNN, whoever wrote the note.

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace gpusel::telemetry_detail {

inline constexpr std::size_t max_note_kinds = 50;

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
    // The entry of `what`, created when there is room; nullptr when max_note_kinds are taken.
    Entry* entry(const std::string& what, bool& created);

    std::vector<Entry> m_entries;
    std::unordered_map<std::string, std::size_t> m_index;  // what -> its entry: linear in the notes added
    std::size_t m_left_out = 0;                            // notes of kinds beyond max_note_kinds
};

}  // namespace gpusel::telemetry_detail
