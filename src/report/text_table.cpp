#include "gpusel/text_table.hpp"

#include <algorithm>

namespace gpusel {

std::size_t display_width(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xc0) != 0x80;
    }));
}

void TextTable::add_column(std::string header, Align align) {
    m_headers.push_back(std::move(header));
    m_aligns.push_back(align);
}

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(m_headers.size());
    m_rows.push_back(std::move(cells));
}

std::string TextTable::render(int indent) const {
    std::vector<std::size_t> widths(m_headers.size());
    for (std::size_t column = 0; column < m_headers.size(); ++column) {
        widths[column] = display_width(m_headers[column]);
        for (const auto& row : m_rows) {
            widths[column] = std::max(widths[column], display_width(row[column]));
        }
    }
    std::string out;
    const auto emit = [&](const std::vector<std::string>& cells) {
        std::string line(static_cast<std::size_t>(std::max(indent, 0)), ' ');
        for (std::size_t column = 0; column < cells.size(); ++column) {
            const std::size_t pad = widths[column] - display_width(cells[column]);
            if (column > 0) {
                line += "  ";
            }
            if (m_aligns[column] == Align::right) {
                line += std::string(pad, ' ') + cells[column];
            } else {
                line += cells[column] + std::string(pad, ' ');
            }
        }
        line.erase(line.find_last_not_of(' ') + 1);
        out += line + "\n";
    };
    emit(m_headers);
    for (const auto& row : m_rows) {
        emit(row);
    }
    return out;
}

}  // namespace gpusel
