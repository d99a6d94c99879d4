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

// Reads `text` one record at a time: the caller holds one record, not the file's worth of them
// (6 million empty rows were 6 million vectors of fields, gigabytes for a 42 MB file).
// `text` and `file_name` must outlive the reader.
class CsvRecordReader {
public:
    CsvRecordReader(std::string_view text, const std::string& file_name);
    // The next record into `record`, whose fields' storage is reused; false at the end of the
    // text (`record` is then unchanged). Throws InputError (file:line:col) for malformed quoting.
    bool next(CsvRecord& record);

private:
    bool at_line_end() const;
    void skip_line_end();
    void advance();
    void read_field(CsvField& field);
    [[noreturn]] void fail(int line, int column, std::string message) const;

    std::string_view m_text;
    const std::string& m_file;
    std::size_t m_at = 0;
    int m_line = 1;
    int m_column = 1;
};

// Splits `text` into records. Throws InputError (file:line:col) for malformed quoting.
std::vector<CsvRecord> parse_csv_records(std::string_view text, const std::string& file_name);

}  // namespace gpusel
