#pragma once
// A plain-text table for terminal output: columns padded to their widest cell, numbers
// right-aligned, two spaces between columns. Cells are UTF-8; width counts code points.

#include <string>
#include <vector>

namespace gpusel {

class TextTable {
public:
    enum class Align { left, right };
    void add_column(std::string header, Align align = Align::left);
    void add_row(std::vector<std::string> cells);
    // Each line starts with `indent` spaces; trailing spaces are trimmed.
    std::string render(int indent = 0) const;

private:
    std::vector<std::string> m_headers;
    std::vector<Align> m_aligns;
    std::vector<std::vector<std::string>> m_rows;
};

// Number of code points in a UTF-8 string (display width for the text gpusel prints).
std::size_t display_width(const std::string& text);

}  // namespace gpusel
