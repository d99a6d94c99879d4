#include "io/csv.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace gpusel {

bool starts_like_formula(std::string_view value) {
    if (value.empty()) {
        return false;
    }
    // OWASP CSV Injection: = + - @ TAB CR; ASVS 5.0 1.2.10 adds NUL; LF is included because
    // some importers strip a leading line break and evaluate what follows.
    switch (value.front()) {
        case '=':
        case '+':
        case '-':
        case '@':
        case '\t':
        case '\r':
        case '\n':
        case '\0':
            return true;
        default:
            return false;
    }
}

std::string csv_text_cell(std::string_view value) {
    const bool neutralise = starts_like_formula(value);
    const bool quote = neutralise || value.find_first_of(",\"\r\n") != std::string_view::npos ||
                       (!value.empty() && (value.front() == ' ' || value.back() == ' '));
    if (!quote) {
        return std::string(value);
    }
    std::string cell;
    cell.reserve(value.size() + 4);
    cell.push_back('"');
    if (neutralise) {
        cell.push_back('\'');
    }
    for (const char c : value) {
        if (c == '"') {
            cell.push_back('"');
        }
        cell.push_back(c);
    }
    cell.push_back('"');
    return cell;
}

std::string format_fixed(double value, int decimals) {
    if (!std::isfinite(value)) {
        throw std::invalid_argument("format_fixed: value is not finite");
    }
    if (decimals < 0 || decimals > 17) {
        throw std::invalid_argument("format_fixed: decimals out of range");
    }
    // fmt without the L specifier ignores the locale (docs/reference/pitfalls.md §3.3); 'f' never uses an exponent.
    std::string text = fmt::format("{:.{}f}", value, decimals);
    // Values that round to zero (-0.0, -0.001 at two decimals) print as "-0.00"; a spreadsheet
    // would show "-0.00" as a distinct value.
    if (text.front() == '-' && text.find_first_not_of("-0.") == std::string::npos) {
        text.erase(0, 1);
    }
    return text;
}

CsvWriter::CsvWriter(CsvOptions options) {
    if (options.byte_order_mark) {
        m_document = "\xEF\xBB\xBF";
    }
}

void CsvWriter::cell(std::string_view encoded) {
    if (m_cells > 0) {
        m_row.push_back(',');
    }
    m_row.append(encoded);
    ++m_cells;
}

CsvWriter& CsvWriter::text(std::string_view value) {
    cell(csv_text_cell(value));
    return *this;
}

CsvWriter& CsvWriter::number(double value, int decimals) {
    cell(format_fixed(value, decimals));
    return *this;
}

CsvWriter& CsvWriter::number(const std::optional<double>& value, int decimals) {
    return value ? number(*value, decimals) : empty();
}

CsvWriter& CsvWriter::money(double usd) {
    return number(usd, 2);
}

CsvWriter& CsvWriter::money(const std::optional<double>& usd) {
    return number(usd, 2);
}

CsvWriter& CsvWriter::integer(std::int64_t value) {
    cell(fmt::format("{}", value));
    return *this;
}

CsvWriter& CsvWriter::empty() {
    cell("");
    return *this;
}

void CsvWriter::end_row() {
    if (m_cells == 0) {
        throw std::logic_error("CSV row without cells");
    }
    if (m_rows == 0) {
        m_width = m_cells;
    } else if (m_cells != m_width) {
        throw std::logic_error(fmt::format("CSV row {} has {} cells, the header has {}", m_rows + 1, m_cells, m_width));
    }
    // A row of one empty cell would be an empty line, which readers skip: quote it.
    if (m_cells == 1 && m_row.empty()) {
        m_row = "\"\"";
    }
    m_document += m_row;
    m_document += "\r\n";
    m_row.clear();
    m_cells = 0;
    ++m_rows;
}

}  // namespace gpusel
