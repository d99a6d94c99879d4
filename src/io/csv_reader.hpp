#pragma once
// Reading CSV files (io layer): RFC 4180 records with the position of every field, for
// importers that must point at the cell a problem is in (docs/reliability.md, "Bad input").
//
//  - Fields are separated by commas; records end with LF or CRLF (a lone CR is data).
//  - A field that starts with a double quote is quoted: it ends at the next lone quote, "" is
//    one quote, and commas and line breaks inside it are data (SkyPilot's GpuInfo holds a
//    Python dict with commas). After the closing quote only a comma or the record end may
//    follow.
//  - A double quote inside an unquoted field, text after a closing quote and an unclosed quote
//    are errors: InputError at file:line:col of the offending character, nothing is guessed.
//  - A UTF-8 byte order mark at the start is skipped; an empty line (no characters at all) is
//    no record (pandas skips them too); a last record without a line end is a record.
//  - Bytes are passed through: the caller checks the encoding if it needs to.

#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"

namespace gpusel {

struct CsvField {
    std::string text;   // unquoted, "" undoubled
    Position position;  // 1-based line and byte column of the field's first character (its quote)
};

struct CsvRecord {
    std::vector<CsvField> fields;
    int line = 0;        // the line the record starts on
    int end_column = 0;  // the column just after the record's last character, for "missing field" messages
};

// Splits `text` into records. Throws InputError (file:line:col) for malformed quoting.
std::vector<CsvRecord> parse_csv_records(std::string_view text, const std::string& file_name);

}  // namespace gpusel
