#pragma once
// CSV output for spreadsheets and finance (io layer; docs/reliability.md, "CSV").
//
//  - RFC 4180: records end with CRLF; a field containing a comma, a double quote, CR or LF
//    (or starting or ending with a space, which some readers trim) is enclosed in double
//    quotes, and each double quote inside it is doubled. Every row has as many cells as the
//    first (the header); a row of another width is a programming error (std::logic_error).
//  - Formula injection (OWASP "CSV Injection", CWE-1236): a text cell whose first character
//    is = + - @ TAB CR LF or NUL is prefixed with a single quote and quoted, so a spreadsheet
//    shows it as text and never evaluates it. Numeric cells are never prefixed: they come from
//    format_fixed(), not from input text, and a negative number legitimately starts with '-'.
//  - Numbers: fixed notation with a '.' decimal point, no exponent, no thousands separator,
//    whatever the locale (fmt without L); -0 is written as 0. NaN and ±Inf are refused
//    (std::invalid_argument): the caller writes an empty cell for a value it does not have.
//  - UTF-8, optionally preceded by a byte order mark (for Excel), off by default.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpusel {

struct CsvOptions {
    bool byte_order_mark = false;  // start with EF BB BF
};

class CsvWriter {
public:
    explicit CsvWriter(CsvOptions options = {});

    CsvWriter& text(std::string_view value);                              // neutralised and quoted as needed
    CsvWriter& number(double value, int decimals);                        // format_fixed(value, decimals)
    CsvWriter& number(const std::optional<double>& value, int decimals);  // empty cell when absent
    CsvWriter& money(double usd);                                         // two decimals
    CsvWriter& money(const std::optional<double>& usd);
    CsvWriter& integer(std::int64_t value);
    CsvWriter& empty();  // a value that does not apply
    // Ends the row with CRLF. Throws std::logic_error when its width differs from the first row's.
    void end_row();

    // The document so far (complete rows only).
    const std::string& str() const { return m_document; }
    std::size_t rows() const { return m_rows; }

private:
    void cell(std::string_view encoded);

    std::string m_document;
    std::string m_row;
    std::size_t m_cells = 0;
    std::size_t m_width = 0;
    std::size_t m_rows = 0;
};

// One text cell as it appears in the file: neutralised, then quoted when needed.
std::string csv_text_cell(std::string_view value);

// True when a spreadsheet would treat `value` as a formula (its first character is one of
// = + - @ TAB CR LF NUL).
bool starts_like_formula(std::string_view value);

// `value` with exactly `decimals` (0..17) digits after the point, e.g. 1234.5 → "1234.50".
// Locale-independent, never an exponent, never "-0". Throws std::invalid_argument for NaN,
// ±Inf or decimals out of range.
std::string format_fixed(double value, int decimals);

}  // namespace gpusel
