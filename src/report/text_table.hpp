#pragma once
// A plain-text table for terminal output: columns padded to their widest cell, numbers
// right-aligned, two spaces between columns. Cells are UTF-8; width counts code points, and
// ANSI SGR escape sequences ("\x1b[1m") count as zero width, so cells may be coloured.
//
// render_fitted() makes the table fit a terminal width: columns marked with set_wrap() are
// narrowed (their cells wrap onto continuation lines), and when that is not enough every row
// is printed as a block ("stacked": its key cells on one line, then "header value · ..."
// wrapped below), which fits any width of 24 columns or more.

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpusel {

class TextTable {
public:
    enum class Align { left, right };
    struct Column {
        Column(std::string header_text, Align alignment = Align::left)  // NOLINT(google-explicit-constructor)
            : header(std::move(header_text)), align(alignment) {}
        std::string header;
        Align align;
    };
    TextTable() = default;
    // A table with these columns, in order: what add_column() would add one by one.
    TextTable(std::initializer_list<Column> columns);
    void add_column(std::string header, Align align = Align::left);
    // Lets `column` wrap onto continuation lines, down to `min_width` code points (never below
    // its header's width), when render_fitted() needs room. Columns are narrowed in ascending
    // `priority` (each down to its minimum before the next is touched; equal priorities share
    // the narrowing, widest first). Words break at spaces; a word longer than the column is
    // cut, after a '-', '/' or ',' where one is near the cut.
    void set_wrap(std::size_t column, std::size_t min_width, int priority = 0);
    // The first `count` columns (default 1) head each row's block in the stacked layout.
    void set_key_columns(std::size_t count);
    // Wraps the header line in `start` … `end` (e.g. ANSI bold and reset); empty by default.
    void set_header_style(std::string start, std::string end);
    void add_row(std::vector<std::string> cells);
    // A line printed under the last row added, aligned with the second column (or indented by
    // three in the stacked layout). render_fitted() wraps it to the width; render() does not.
    // Requires at least one row.
    void add_note(std::string note);

    // Natural widths, nothing wrapped. Each line starts with `indent` spaces; trailing spaces
    // are trimmed.
    std::string render(int indent = 0) const;
    // No line wider than `max_width` code points (see above); max_width below 24 is treated as 24.
    std::string render_fitted(int indent, std::size_t max_width) const;
    // The stacked layout alone (see above), whatever the width.
    std::string render_stacked(int indent, std::size_t max_width) const;
    // Width of the widest header or row line of render(indent), notes not counted.
    std::size_t natural_width(int indent = 0) const;
    // True when render_fitted(indent, max_width) keeps the columns (narrowing wrappable ones)
    // instead of falling back to the stacked layout, and, when max_row_lines > 0, no row needs
    // more than that many lines.
    bool fits_as_columns(int indent, std::size_t max_width, std::size_t max_row_lines = 0) const;

private:
    std::vector<std::size_t> natural_widths() const;
    // Column widths that fit max_width, or nullopt when only the stacked layout does.
    std::optional<std::vector<std::size_t>> fitted_widths(int indent, std::size_t max_width) const;
    std::string render_with(int indent, const std::vector<std::size_t>& widths, std::size_t note_width) const;

    struct Row {
        std::vector<std::string> cells;
        std::vector<std::string> notes;
    };
    std::vector<std::string> m_headers;
    std::vector<Align> m_aligns;
    std::vector<std::size_t> m_wrap_min;  // 0 = never wraps
    std::vector<int> m_wrap_priority;
    std::size_t m_key_columns = 1;
    std::string m_header_start, m_header_end;
    std::vector<Row> m_rows;
};

// Display width of a UTF-8 string as gpusel prints it: one column per code point, zero for
// ANSI escape sequences.
std::size_t display_width(std::string_view text);

// Splits `text` into lines of at most `width` display columns, breaking at spaces. A lone
// separator ("·", "—", "–", "|") or "%" stays at the end of the line before a break, never
// starts one.
// A word wider than `width` is cut (see TextTable::set_wrap). Runs of spaces collapse to one;
// an empty text gives no lines. `width` 0 is treated as 1.
std::vector<std::string> wrap_text(std::string_view text, std::size_t width);

// Joins `items` with " · " into lines of at most `width` columns, keeping each item whole on
// one line where it fits: a line that continues ends with " ·". An item wider than `width`
// starts a line and wraps as wrap_text does.
std::vector<std::string> wrap_items(const std::vector<std::string>& items, std::size_t width);

}  // namespace gpusel
