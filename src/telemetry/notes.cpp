#include "telemetry/notes.hpp"

#include <fmt/format.h>

#include "base/text.hpp"

namespace gpusel::telemetry_detail {

namespace {
constexpr std::size_t lines_shown = 3;
}

NoteLog::Entry* NoteLog::entry(const std::string& what, bool& created) {
    created = false;
    if (const auto found = m_index.find(what); found != m_index.end()) {
        return &m_entries[found->second];
    }
    if (m_entries.size() == max_note_kinds) {
        ++m_left_out;
        return nullptr;
    }
    created = true;
    m_index.emplace(what, m_entries.size());
    m_entries.push_back(Entry{what, {}, 0});
    return &m_entries.back();
}

void NoteLog::add(const std::string& what, int line) {
    bool created = false;
    Entry* found = entry(what, created);
    if (found == nullptr) {
        return;
    }
    if (found->lines.size() < lines_shown) {
        found->lines.push_back(line);
    }
    ++found->count;
}

void NoteLog::add(const std::string& what) {
    bool created = false;
    entry(what, created);
}

std::vector<std::string> NoteLog::finish() const {
    std::vector<std::string> notes;
    for (const Entry& entry : m_entries) {
        if (entry.lines.empty()) {
            notes.push_back(printable_text(entry.what));
            continue;
        }
        std::string where = entry.lines.size() == 1 ? "line " : "lines ";
        for (std::size_t i = 0; i < entry.lines.size(); ++i) {
            where += (i == 0 ? "" : ", ") + std::to_string(entry.lines[i]);
        }
        const int rest = entry.count - static_cast<int>(entry.lines.size());
        if (rest > 0) {
            where += fmt::format(" and {} more", rest);
        }
        notes.push_back(fmt::format("{} ({})", printable_text(entry.what), where));
    }
    if (m_left_out > 0) {
        notes.push_back(fmt::format("{} more note{} of other kinds left out", m_left_out, m_left_out == 1 ? "" : "s"));
    }
    return notes;
}

}  // namespace gpusel::telemetry_detail
