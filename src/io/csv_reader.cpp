#include "io/csv_reader.hpp"

#include <fmt/format.h>

namespace gpusel {

namespace {

// Walks the text once, tracking line and column, so that every field and every error has the
// position a text editor shows (columns count bytes, as in the other loaders).
class CsvScanner {
public:
    CsvScanner(std::string_view text, const std::string& file_name) : m_text(text), m_file(file_name) {
        if (m_text.substr(0, 3) == "\xEF\xBB\xBF") {
            m_at = 3;  // the BOM is no character of the first field; columns count from after it
        }
    }

    std::vector<CsvRecord> records() {
        std::vector<CsvRecord> result;
        while (m_at < m_text.size()) {
            if (at_line_end()) {
                skip_line_end();  // an empty line is no record
                continue;
            }
            result.push_back(record());
        }
        return result;
    }

private:
    bool at_line_end() const {
        return m_text[m_at] == '\n' || (m_text[m_at] == '\r' && m_at + 1 < m_text.size() && m_text[m_at + 1] == '\n');
    }

    void skip_line_end() {
        m_at += m_text[m_at] == '\r' ? 2U : 1U;
        ++m_line;
        m_column = 1;
    }

    void advance() {
        ++m_at;
        ++m_column;
    }

    [[noreturn]] void fail(int line, int column, std::string message) const {
        throw InputError(Diagnostic{m_file, Position{line, column}, "", std::move(message)});
    }

    CsvRecord record() {
        CsvRecord result;
        result.line = m_line;
        while (true) {
            result.fields.push_back(field());
            if (m_at >= m_text.size()) {
                result.end_column = m_column;
                return result;
            }
            if (at_line_end()) {
                result.end_column = m_column;
                skip_line_end();
                return result;
            }
            advance();  // the comma
        }
    }

    CsvField field() {
        CsvField result;
        result.position = Position{m_line, m_column};
        if (m_at < m_text.size() && m_text[m_at] == '"') {
            advance();
            while (true) {
                if (m_at >= m_text.size()) {
                    fail(result.position.line, result.position.column,
                         "quoted field is not closed; a field that starts with \" ends with \"");
                }
                const char c = m_text[m_at];
                if (c == '"') {
                    if (m_at + 1 < m_text.size() && m_text[m_at + 1] == '"') {
                        result.text.push_back('"');
                        advance();
                        advance();
                        continue;
                    }
                    advance();
                    break;
                }
                if (c == '\n') {
                    result.text.push_back(c);
                    ++m_at;
                    ++m_line;
                    m_column = 1;
                    continue;
                }
                result.text.push_back(c);
                advance();
            }
            if (m_at < m_text.size() && m_text[m_at] != ',' && !at_line_end()) {
                fail(m_line, m_column,
                     "text after the closing quote of a field; expected a comma or the end of the line");
            }
            return result;
        }
        while (m_at < m_text.size() && m_text[m_at] != ',' && !at_line_end()) {
            if (m_text[m_at] == '"') {
                fail(m_line, m_column,
                     "a double quote inside an unquoted field; quote the whole field and double the quote");
            }
            result.text.push_back(m_text[m_at]);
            advance();
        }
        return result;
    }

    std::string_view m_text;
    const std::string& m_file;
    std::size_t m_at = 0;
    int m_line = 1;
    int m_column = 1;
};

}  // namespace

std::vector<CsvRecord> parse_csv_records(std::string_view text, const std::string& file_name) {
    return CsvScanner(text, file_name).records();
}

}  // namespace gpusel
