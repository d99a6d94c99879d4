#include "io/csv_reader.hpp"

#include <fmt/format.h>

namespace gpusel {

// Walks the text once, tracking line and column, so that every field and every error has the
// position a text editor shows (columns count bytes, as in the other loaders).
CsvRecordReader::CsvRecordReader(std::string_view text, const std::string& file_name)
    : m_text(text), m_file(file_name) {
    if (m_text.substr(0, 3) == "\xEF\xBB\xBF") {
        m_at = 3;  // the BOM is no character of the first field; columns count from after it
    }
}

bool CsvRecordReader::next(CsvRecord& record) {
    while (m_at < m_text.size() && at_line_end()) {
        skip_line_end();  // an empty line is no record
    }
    if (m_at >= m_text.size()) {
        return false;
    }
    record.line = m_line;
    std::size_t count = 0;
    while (true) {
        // Fields are overwritten in place so that their strings keep their capacity: a file of
        // millions of rows allocates about once per column, not once per cell.
        if (count == record.fields.size()) {
            record.fields.emplace_back();
        }
        read_field(record.fields[count++]);
        if (m_at >= m_text.size() || at_line_end()) {
            record.fields.resize(count);
            record.end_column = m_column;
            if (m_at < m_text.size()) {
                skip_line_end();
            }
            return true;
        }
        advance();  // the comma
    }
}

bool CsvRecordReader::at_line_end() const {
    return m_text[m_at] == '\n' || (m_text[m_at] == '\r' && m_at + 1 < m_text.size() && m_text[m_at + 1] == '\n');
}

void CsvRecordReader::skip_line_end() {
    m_at += m_text[m_at] == '\r' ? 2U : 1U;
    ++m_line;
    m_column = 1;
}

void CsvRecordReader::advance() {
    ++m_at;
    ++m_column;
}

void CsvRecordReader::fail(int line, int column, std::string message) const {
    throw InputError(Diagnostic{m_file, Position{line, column}, "", std::move(message)});
}

void CsvRecordReader::read_field(CsvField& field) {
    field.text.clear();
    field.position = Position{m_line, m_column};
    if (m_at < m_text.size() && m_text[m_at] == '"') {
        advance();
        while (true) {
            if (m_at >= m_text.size()) {
                fail(field.position.line, field.position.column,
                     "quoted field is not closed; a field that starts with \" ends with \"");
            }
            const char c = m_text[m_at];
            if (c == '"') {
                if (m_at + 1 < m_text.size() && m_text[m_at + 1] == '"') {
                    field.text.push_back('"');
                    advance();
                    advance();
                    continue;
                }
                advance();
                break;
            }
            if (c == '\n') {
                field.text.push_back(c);
                ++m_at;
                ++m_line;
                m_column = 1;
                continue;
            }
            field.text.push_back(c);
            advance();
        }
        if (m_at < m_text.size() && m_text[m_at] != ',' && !at_line_end()) {
            fail(m_line, m_column, "text after the closing quote of a field; expected a comma or the end of the line");
        }
        return;
    }
    while (m_at < m_text.size() && m_text[m_at] != ',' && !at_line_end()) {
        if (m_text[m_at] == '"') {
            fail(m_line, m_column,
                 "a double quote inside an unquoted field; quote the whole field and double the quote");
        }
        field.text.push_back(m_text[m_at]);
        advance();
    }
}

std::vector<CsvRecord> parse_csv_records(std::string_view text, const std::string& file_name) {
    std::vector<CsvRecord> records;
    CsvRecordReader reader(text, file_name);
    CsvRecord record;
    while (reader.next(record)) {
        records.push_back(record);
    }
    return records;
}

}  // namespace gpusel
