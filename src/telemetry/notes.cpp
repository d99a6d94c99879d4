#include "telemetry/notes.hpp"

#include <fmt/format.h>

namespace gpusel::telemetry_detail {

namespace {
constexpr std::size_t lines_shown = 3;
}

void NoteLog::add(const std::string& what, int line) {
    for (Entry& entry : m_entries) {
        if (entry.what == what) {
            if (entry.lines.size() < lines_shown) {
                entry.lines.push_back(line);
            }
            ++entry.count;
            return;
        }
    }
    m_entries.push_back(Entry{what, {line}, 1});
}

void NoteLog::add(const std::string& what) {
    for (const Entry& entry : m_entries) {
        if (entry.what == what) {
            return;
        }
    }
    m_entries.push_back(Entry{what, {}, 0});
}

std::vector<std::string> NoteLog::finish() const {
    std::vector<std::string> notes;
    for (const Entry& entry : m_entries) {
        if (entry.lines.empty()) {
            notes.push_back(entry.what);
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
        notes.push_back(fmt::format("{} ({})", entry.what, where));
    }
    return notes;
}

}  // namespace gpusel::telemetry_detail
