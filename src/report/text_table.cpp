#include "report/text_table.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace gpusel {

namespace {

constexpr std::size_t minimum_fitted_width = 24;
constexpr std::size_t column_gap = 2;
constexpr std::size_t stacked_indent = 3;

// One printed character: its bytes and its display width (0 for an escape sequence).
struct Glyph {
    std::string_view bytes;
    std::size_t width = 1;
};

// ECMA-48 control sequence: ESC '[' parameter/intermediate bytes, then a final byte 0x40-0x7E.
std::size_t escape_length(std::string_view text, std::size_t at) {
    if (at + 1 >= text.size() || text[at] != '\x1b' || text[at + 1] != '[') {
        return 0;
    }
    std::size_t end = at + 2;
    while (end < text.size()) {
        const auto byte = static_cast<unsigned char>(text[end]);
        ++end;
        if (byte >= 0x40 && byte <= 0x7e) {
            return end - at;
        }
    }
    return end - at;
}

std::vector<Glyph> glyphs(std::string_view text) {
    std::vector<Glyph> out;
    std::size_t at = 0;
    while (at < text.size()) {
        if (const std::size_t escape = escape_length(text, at); escape > 0) {
            out.push_back({text.substr(at, escape), 0});
            at += escape;
            continue;
        }
        std::size_t end = at + 1;
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xc0) == 0x80) {
            ++end;
        }
        out.push_back({text.substr(at, end - at), 1});
        at = end;
    }
    return out;
}

// Words that read wrong at the start of a line: separators, and a unit after its number.
bool is_separator(std::string_view word) {
    return word == "·" || word == "—" || word == "–" || word == "|" || word == "%";
}

// Cuts a word wider than `width` into pieces; a cut lands after '-', '/' or ',' when one lies
// in the second half of the piece, so that "A100-80GB-SXM4" breaks as "A100-80GB-" "SXM4".
std::vector<std::string> cut_word(std::string_view word, std::size_t width) {
    const std::vector<Glyph> all = glyphs(word);
    std::vector<std::string> pieces;
    std::size_t start = 0;
    while (start < all.size()) {
        std::size_t end = start;
        std::size_t used = 0;
        std::size_t last_break = 0;
        while (end < all.size() && used + all[end].width <= width) {
            used += all[end].width;
            const std::string_view bytes = all[end].bytes;
            ++end;
            if (bytes == "-" || bytes == "/" || bytes == ",") {
                last_break = end;
            }
        }
        if (end == start) {
            end = start + 1;  // a glyph wider than the width: take it anyway
        }
        if (end < all.size() && last_break > start && (last_break - start) * 2 >= (end - start)) {
            end = last_break;
        }
        std::string piece;
        for (std::size_t i = start; i < end; ++i) {
            piece += all[i].bytes;
        }
        pieces.push_back(std::move(piece));
        start = end;
    }
    return pieces;
}

std::string trim_right(std::string line) {
    line.erase(line.find_last_not_of(' ') + 1);
    return line;
}

std::string spaces(std::size_t count) {
    return std::string(count, ' ');
}

}  // namespace

std::size_t display_width(std::string_view text) {
    std::size_t width = 0;
    for (const Glyph& glyph : glyphs(text)) {
        width += glyph.width;
    }
    return width;
}

std::vector<std::string> wrap_text(std::string_view text, std::size_t width) {
    width = std::max<std::size_t>(width, 1);
    std::vector<std::string> words;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t start = text.find_first_not_of(' ', at);
        if (start == std::string_view::npos) {
            break;
        }
        const std::size_t end = std::min(text.find(' ', start), text.size());
        const std::string_view word = text.substr(start, end - start);
        if (is_separator(word) && !words.empty()) {
            words.back() += " ";
            words.back() += word;
        } else {
            words.emplace_back(word);
        }
        at = end;
    }
    std::vector<std::string> lines;
    std::string line;
    std::size_t line_width = 0;
    for (const std::string& word : words) {
        const std::size_t word_width = display_width(word);
        if (!line.empty() && line_width + 1 + word_width <= width) {
            line += " " + word;
            line_width += 1 + word_width;
            continue;
        }
        if (!line.empty()) {
            lines.push_back(std::move(line));
            line.clear();
            line_width = 0;
        }
        if (word_width <= width) {
            line = word;
            line_width = word_width;
            continue;
        }
        std::vector<std::string> pieces = cut_word(word, width);
        line = std::move(pieces.back());
        line_width = display_width(line);
        pieces.pop_back();
        lines.insert(lines.end(), pieces.begin(), pieces.end());
    }
    if (!line.empty()) {
        lines.push_back(std::move(line));
    }
    return lines;
}

std::vector<std::string> wrap_items(const std::vector<std::string>& items, std::size_t width) {
    width = std::max<std::size_t>(width, 1);
    constexpr std::string_view separator = " ·";
    std::vector<std::string> lines;
    std::string line;
    std::size_t line_width = 0;
    for (std::size_t i = 0; i < items.size(); ++i) {
        const std::size_t item_width = display_width(items[i]);
        // Room for the item, and for " ·" after it unless it is the last.
        const std::size_t needed = item_width + (i + 1 < items.size() ? separator.size() - 1 : 0);
        if (!line.empty() && line_width + 1 + needed <= width) {
            line += " " + items[i];
            line_width += 1 + item_width;
        } else {
            if (!line.empty()) {
                lines.push_back(line);
            }
            if (needed <= width) {
                line = items[i];
                line_width = item_width;
            } else {
                std::vector<std::string> wrapped = wrap_text(items[i], width > 2 ? width - 2 : width);
                line = wrapped.back();
                wrapped.pop_back();
                lines.insert(lines.end(), wrapped.begin(), wrapped.end());
                line_width = display_width(line);
            }
        }
        if (i + 1 < items.size()) {
            line += separator;
            line_width += display_width(separator);
        }
    }
    if (!line.empty()) {
        lines.push_back(line);
    }
    return lines;
}

TextTable::TextTable(std::initializer_list<Column> columns) {
    for (const Column& column : columns) {
        add_column(column.header, column.align);
    }
}

void TextTable::add_column(std::string header, Align align) {
    m_headers.push_back(std::move(header));
    m_aligns.push_back(align);
    m_wrap_min.push_back(0);
    m_wrap_priority.push_back(0);
}

void TextTable::set_wrap(std::size_t column, std::size_t min_width, int priority) {
    m_wrap_min.at(column) = std::max<std::size_t>(min_width, 1);
    m_wrap_priority.at(column) = priority;
}

void TextTable::set_key_columns(std::size_t count) {
    m_key_columns = std::max<std::size_t>(count, 1);
}

void TextTable::set_header_style(std::string start, std::string end) {
    m_header_start = std::move(start);
    m_header_end = std::move(end);
}

void TextTable::add_row(std::vector<std::string> cells) {
    cells.resize(m_headers.size());
    m_rows.push_back({std::move(cells), {}});
}

void TextTable::add_note(std::string note) {
    if (m_rows.empty()) {
        throw std::logic_error("TextTable::add_note before any row");
    }
    m_rows.back().notes.push_back(std::move(note));
}

std::vector<std::size_t> TextTable::natural_widths() const {
    std::vector<std::size_t> widths(m_headers.size());
    for (std::size_t column = 0; column < m_headers.size(); ++column) {
        widths[column] = display_width(m_headers[column]);
        for (const Row& row : m_rows) {
            widths[column] = std::max(widths[column], display_width(row.cells[column]));
        }
    }
    return widths;
}

std::size_t TextTable::natural_width(int indent) const {
    const std::vector<std::size_t> widths = natural_widths();
    std::size_t total = static_cast<std::size_t>(std::max(indent, 0));
    for (std::size_t column = 0; column < widths.size(); ++column) {
        total += widths[column] + (column > 0 ? column_gap : 0);
    }
    return total;
}

std::optional<std::vector<std::size_t>> TextTable::fitted_widths(int indent, std::size_t max_width) const {
    max_width = std::max(max_width, minimum_fitted_width);
    std::vector<std::size_t> widths = natural_widths();
    std::size_t total = natural_width(indent);
    // Narrow one column at a time: the first priority that still has room, and within it the
    // widest column, so that columns of equal priority wrap evenly instead of one being crushed.
    while (total > max_width) {
        std::size_t widest = widths.size();
        for (std::size_t column = 0; column < widths.size(); ++column) {
            const std::size_t floor = std::max(m_wrap_min[column], display_width(m_headers[column]));
            if (m_wrap_min[column] == 0 || widths[column] <= floor) {
                continue;
            }
            if (widest == widths.size() || m_wrap_priority[column] < m_wrap_priority[widest] ||
                (m_wrap_priority[column] == m_wrap_priority[widest] && widths[column] > widths[widest])) {
                widest = column;
            }
        }
        if (widest == widths.size()) {
            return std::nullopt;
        }
        --widths[widest];
        --total;
    }
    return widths;
}

bool TextTable::fits_as_columns(int indent, std::size_t max_width, std::size_t max_row_lines) const {
    const std::optional<std::vector<std::size_t>> widths = fitted_widths(indent, max_width);
    if (!widths) {
        return false;
    }
    if (max_row_lines == 0) {
        return true;
    }
    for (const Row& row : m_rows) {
        for (std::size_t column = 0; column < row.cells.size(); ++column) {
            if (display_width(row.cells[column]) > (*widths)[column] &&
                wrap_text(row.cells[column], (*widths)[column]).size() > max_row_lines) {
                return false;
            }
        }
    }
    return true;
}

std::string TextTable::render(int indent) const {
    return render_with(indent, natural_widths(), 0);
}

std::string TextTable::render_with(int indent, const std::vector<std::size_t>& widths, std::size_t note_width) const {
    const std::size_t margin = static_cast<std::size_t>(std::max(indent, 0));
    std::string out;
    const auto emit = [&](const std::vector<std::string>& cells, bool header) {
        std::vector<std::vector<std::string>> cell_lines(cells.size());
        std::size_t height = 1;
        for (std::size_t column = 0; column < cells.size(); ++column) {
            if (display_width(cells[column]) <= widths[column]) {
                cell_lines[column] = {cells[column]};
            } else {
                cell_lines[column] = wrap_text(cells[column], widths[column]);
            }
            height = std::max(height, cell_lines[column].size());
        }
        for (std::size_t line_index = 0; line_index < height; ++line_index) {
            std::string line = spaces(margin);
            for (std::size_t column = 0; column < cells.size(); ++column) {
                const std::string empty;
                const std::string& text =
                    line_index < cell_lines[column].size() ? cell_lines[column][line_index] : empty;
                const std::size_t pad = widths[column] - std::min(widths[column], display_width(text));
                if (column > 0) {
                    line += spaces(column_gap);
                }
                if (m_aligns[column] == Align::right) {
                    line += spaces(pad) + text;
                } else {
                    line += text + spaces(pad);
                }
            }
            line = trim_right(std::move(line));
            if (header && !m_header_start.empty()) {
                line = spaces(margin) + m_header_start + line.substr(margin) + m_header_end;
            }
            out += line + "\n";
        }
    };
    emit(m_headers, true);
    const std::size_t note_margin = margin + (widths.empty() ? 0 : widths[0] + column_gap);
    for (const Row& row : m_rows) {
        emit(row.cells, false);
        for (const std::string& note : row.notes) {
            if (note_width == 0) {
                out += trim_right(spaces(note_margin) + note) + "\n";
                continue;
            }
            // Notes start under the second column when that leaves a readable measure.
            const bool under_second = note_width >= note_margin + 20;
            const std::size_t start = under_second ? note_margin : margin + stacked_indent;
            for (const std::string& line : wrap_text(note, note_width - start)) {
                out += spaces(start) + line + "\n";
            }
        }
    }
    return out;
}

std::string TextTable::render_fitted(int indent, std::size_t max_width) const {
    max_width = std::max(max_width, minimum_fitted_width);
    if (const std::optional<std::vector<std::size_t>> widths = fitted_widths(indent, max_width)) {
        return render_with(indent, *widths, max_width);
    }
    return render_stacked(indent, max_width);
}

std::string TextTable::render_stacked(int indent, std::size_t max_width) const {
    const std::size_t margin = static_cast<std::size_t>(std::max(indent, 0));
    const std::size_t body = std::max<std::size_t>(max_width - std::min(max_width, margin + stacked_indent), 8);
    const std::size_t key_width = std::max<std::size_t>(max_width - std::min(max_width, margin), 8);
    std::string out;
    for (const Row& row : m_rows) {
        std::string key;
        std::vector<std::string> details;
        for (std::size_t column = 0; column < row.cells.size(); ++column) {
            const std::string& cell = row.cells[column];
            if (cell.empty()) {
                continue;
            }
            if (column < m_key_columns) {
                key += (key.empty() ? "" : "  ") + cell;
            } else {
                details.push_back(m_headers[column] + " " + cell);
            }
        }
        // Wrapping collapses runs of spaces; a line that fits keeps the two between key cells.
        const std::vector<std::string> key_lines =
            display_width(key) <= key_width ? std::vector<std::string>{key} : wrap_text(key, key_width);
        for (const std::string& line : key_lines) {
            out += spaces(margin) + line + "\n";
        }
        for (const std::string& line : wrap_items(details, body)) {
            out += spaces(margin + stacked_indent) + line + "\n";
        }
        for (const std::string& note : row.notes) {
            for (const std::string& line : wrap_text(note, body)) {
                out += spaces(margin + stacked_indent) + line + "\n";
            }
        }
    }
    return out;
}

}  // namespace gpusel
