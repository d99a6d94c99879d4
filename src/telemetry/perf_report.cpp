// perf report --stdio: the flat profile (one row per symbol), with or without --children, -n
// and a call graph (-g), whose indented lines are skipped.

#include <algorithm>

#include <fmt/format.h>

#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

enum class Column { overhead, children, self, samples, period, command, shared_object, symbol, other };

// "# Overhead  Command  Shared Object  Symbol" -> columns. Multi-word names are joined.
std::vector<Column> header_columns(std::string_view header) {
    std::vector<Column> columns;
    const std::vector<Token> tokens = split_whitespace(header);
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view word = tokens[i].text;
        if (word == "Overhead") {
            columns.push_back(Column::overhead);
        } else if (word == "Children") {
            columns.push_back(Column::children);
        } else if (word == "Self") {
            columns.push_back(Column::self);
        } else if (word == "Samples") {
            columns.push_back(Column::samples);
        } else if (word == "Period") {
            columns.push_back(Column::period);
        } else if (word == "Command") {
            columns.push_back(Column::command);
        } else if (word == "Shared" && i + 1 < tokens.size() && tokens[i + 1].text == "Object") {
            columns.push_back(Column::shared_object);
            ++i;
        } else if (word == "Symbol") {
            columns.push_back(Column::symbol);
        } else {
            columns.push_back(Column::other);
        }
    }
    return columns;
}

bool is_numeric_column(Column column) {
    return column == Column::overhead || column == Column::children || column == Column::self ||
           column == Column::samples || column == Column::period;
}

// "42.86%" -> 42.86
std::optional<double> parse_percent(std::string_view text) {
    if (!ends_with(text, "%")) {
        return std::nullopt;
    }
    return parse_decimal(text.substr(0, text.size() - 1));
}

// perf abbreviates large sample counts: "1K", "12M" (tools/perf/util/hist.c, "Samples: %lu%c").
std::optional<double> parse_count(std::string_view text) {
    double factor = 1;
    if (!text.empty() && (text.back() == 'K' || text.back() == 'M' || text.back() == 'G')) {
        factor = text.back() == 'K' ? 1e3 : text.back() == 'M' ? 1e6 : 1e9;
        text.remove_suffix(1);
    }
    const std::optional<double> value = parse_decimal(text);
    return value ? std::optional<double>(*value * factor) : std::nullopt;
}

bool is_mode_marker(std::string_view text) {
    return text.size() == 3 && text[0] == '[' && text[2] == ']' && text[1] != ' ';
}

// A '#' comment line: "# Samples: N of event '...'" gives the total and the event; a column
// header ("# Overhead ...", "# Children ...") replaces `columns`. Other comments say nothing.
void read_comment_line(const Line& line, std::string_view content, const std::string& file, PerfProfile& profile,
                       std::vector<Column>& columns, bool& saw_header) {
    const std::string_view body = trim(content.substr(1));
    if (starts_with(body, "Overhead") || starts_with(body, "Children")) {
        columns = header_columns(body);
        saw_header = true;
        return;
    }
    if (!starts_with(body, "Samples:")) {
        return;
    }
    // "# Samples: 56  of event 'syscalls:sys_enter_connect'"
    const std::vector<Token> tokens = split_whitespace(body);
    if (tokens.size() >= 2) {
        // diagnose converts the count to an integer: it must be one perf can hold (u64).
        const std::optional<double> count = parse_count(tokens[1].text);
        if (!count || *count < 0 || *count >= max_counter_reading) {
            throw input_error(file, line.number, static_cast<int>(tokens[1].column + (body.data() - line.text.data())),
                              fmt::format("'Samples:' {} is not a sample count", quote(tokens[1].text)));
        }
        profile.total_samples = count;
    }
    const std::size_t quote_open = body.find('\'');
    const std::size_t quote_close = body.rfind('\'');
    if (quote_open != std::string_view::npos && quote_close > quote_open) {
        profile.event = std::string(body.substr(quote_open + 1, quote_close - quote_open - 1));
    }
}

// The share and count cells at the front of a row, into `symbol`; returns the index of the first
// token after them.
std::size_t read_share_cells(const std::vector<Token>& tokens, const std::vector<Column>& columns, const Line& line,
                             const std::string& file, PerfSymbol& symbol) {
    std::size_t at = 0;
    for (const Column column : columns) {
        if (!is_numeric_column(column)) {
            continue;
        }
        const Token& cell = tokens[at++];
        const bool is_count = column == Column::samples || column == Column::period;
        const std::optional<double> value = is_count ? parse_count(cell.text) : parse_percent(cell.text);
        if (!value || *value < 0) {
            throw input_error(file, line.number, cell.column,
                              fmt::format("{} is not a {}", quote(cell.text), is_count ? "count" : "percentage"));
        }
        // perf keeps sample counts and periods in u64 (tools/perf/util/hist.h, struct he_stat).
        if (is_count && *value >= max_counter_reading) {
            throw input_error(file, line.number, cell.column,
                              fmt::format("{} is larger than perf can count (2^64)", quote(cell.text)));
        }
        if (!is_count) {
            checked_share(*value, 100, "", cell.text, file, line.number, cell.column);
        }
        switch (column) {
            case Column::overhead:
            case Column::self:
                symbol.self_pct = *value;
                break;
            case Column::children:
                symbol.children_pct = *value;
                break;
            case Column::samples:
                symbol.samples = *value;
                break;
            default:
                break;
        }
    }
    return at;
}

// The rest of a row from token `at`: command and shared object (single words, except a command
// with spaces), then "[.]" or "[k]" and the symbol, which may contain spaces
// ("operator new(unsigned long)").
void read_names(const std::vector<Token>& tokens, std::size_t at, const std::vector<Column>& columns, const Line& line,
                PerfSymbol& symbol) {
    std::optional<std::size_t> marker;
    for (std::size_t i = at; i < tokens.size(); ++i) {
        if (is_mode_marker(tokens[i].text)) {
            marker = i;
            break;
        }
    }
    const std::size_t words_end = marker.value_or(tokens.size());
    const bool has_command = std::find(columns.begin(), columns.end(), Column::command) != columns.end();
    const bool has_object = std::find(columns.begin(), columns.end(), Column::shared_object) != columns.end();
    std::vector<std::string_view> words;
    for (std::size_t i = at; i < words_end; ++i) {
        words.push_back(tokens[i].text);
    }
    if (has_object && !words.empty()) {
        symbol.shared_object = std::string(words.back());
        words.pop_back();
    }
    if (has_command) {
        for (std::size_t i = 0; i < words.size(); ++i) {
            symbol.command += (i == 0 ? "" : " ") + std::string(words[i]);
        }
    }
    if (marker) {
        symbol.mode = tokens[*marker].text[1];
        const auto offset = static_cast<std::size_t>(tokens[*marker].column) + 2;  // past "[.]"
        symbol.symbol = offset < line.text.size() ? std::string(trim(std::string_view(line.text).substr(offset))) : "";
    }
}

}  // namespace

// A flat profile's rows are 40 bytes and more (share, command, object, symbol): 16 MiB holds
// some 400,000. A million rows means rows of a few bytes, which perf never prints and which
// would cost 150 bytes each in memory: an error rather than half a GiB.
constexpr std::size_t max_perf_rows = 1000000;

PerfProfile parse_perf_report(std::string_view text, const std::string& file) {
    PerfProfile profile;
    profile.file = file;
    NoteLog notes;
    // Without a header (rows pasted alone) the default sort order is assumed.
    std::vector<Column> columns = {Column::overhead, Column::command, Column::shared_object, Column::symbol};
    bool saw_header = false;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        if (content.front() == '#') {
            read_comment_line(line, content, file, profile, columns, saw_header);
            continue;
        }
        const std::vector<Token> tokens = split_whitespace(line.text);
        if (!ends_with(tokens.front().text, "%")) {
            continue;  // call-graph lines ("|--56.88%--...", "---_start", "Py_BytesMain"), footers
        }
        const std::size_t numeric = static_cast<std::size_t>(
            std::count_if(columns.begin(), columns.end(), [](Column c) { return is_numeric_column(c); }));
        if (tokens.size() < numeric) {
            throw input_error(file, line.number, tokens.front().column, "profile row is missing its share columns");
        }
        if (profile.symbols.size() == max_perf_rows) {
            throw input_error(
                file, line.number, 1,
                fmt::format("more than {} profile rows; perf report rows are longer than these", max_perf_rows));
        }
        PerfSymbol symbol;
        symbol.line = line.number;
        const std::size_t names_start = read_share_cells(tokens, columns, line, file, symbol);
        read_names(tokens, names_start, columns, line, symbol);
        profile.symbols.push_back(std::move(symbol));
    }
    if (profile.symbols.empty()) {
        throw input_error(file, 1, 1,
                          "no profile rows ('NN.NN%  command  object  [.] symbol'); expected "
                          "`perf report --stdio` output");
    }
    if (!saw_header) {
        notes.add("no '# Overhead ...' header: columns read as Overhead, Command, Shared Object, Symbol");
    }
    profile.notes = notes.finish();
    return profile;
}

}  // namespace gpusel
