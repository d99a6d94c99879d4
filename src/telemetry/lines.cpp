#include "telemetry/lines.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace gpusel::telemetry_detail {

namespace {

// Removes ESC [ parameters intermediates final-byte sequences (ECMA-48 CSI). A lone ESC, or
// one followed by anything else, is dropped alone.
std::string strip_escapes(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c != '\x1b') {
            out.push_back(c);
            continue;
        }
        if (i + 1 < text.size() && text[i + 1] == '[') {
            std::size_t j = i + 2;
            while (j < text.size() && !(text[j] >= '@' && text[j] <= '~')) {
                ++j;
            }
            i = j;  // skips the final byte too (or runs off the end)
        }
    }
    return out;
}

}  // namespace

LineRange::Iterator::Iterator(std::string_view text) : m_text(text), m_done(false) {
    if (starts_with(m_text, "\xEF\xBB\xBF")) {
        m_text.remove_prefix(3);
    }
    ++*this;
}

LineRange::Iterator& LineRange::Iterator::operator++() {
    if (m_done || m_next > m_text.size()) {
        m_done = true;
        return *this;
    }
    const std::size_t end = m_text.find('\n', m_next);
    std::string_view line =
        m_text.substr(m_next, end == std::string_view::npos ? std::string_view::npos : end - m_next);
    ++m_number;
    if (!line.empty() && line.back() == '\r') {
        line.remove_suffix(1);
    }
    // A last line without a line end is a line; the empty text after a final LF is not.
    if (end == std::string_view::npos && line.empty()) {
        m_done = true;
        return *this;
    }
    m_next = end == std::string_view::npos ? m_text.size() + 1 : end + 1;
    m_line = line;
    m_stripped_line = line.find('\x1b') != std::string_view::npos;
    if (m_stripped_line) {
        m_stripped = strip_escapes(line);
    }
    return *this;
}

LineRange split_lines(std::string_view text) {
    return LineRange(text);
}

std::vector<Token> split_whitespace(std::string_view line) {
    std::vector<Token> tokens;
    std::size_t i = 0;
    while (i < line.size()) {
        while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
            ++i;
        }
        if (i >= line.size()) {
            break;
        }
        const std::size_t start = i;
        while (i < line.size() && line[i] != ' ' && line[i] != '\t') {
            ++i;
        }
        tokens.push_back(Token{line.substr(start, i - start), static_cast<int>(start) + 1});
    }
    return tokens;
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
        text.remove_prefix(1);
    }
    while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
        text.remove_suffix(1);
    }
    return text;
}

bool starts_with(std::string_view text, std::string_view prefix) {
    return text.size() >= prefix.size() && text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
    return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

bool is_blank(std::string_view text) {
    return trim(text).empty();
}

std::optional<double> parse_decimal(std::string_view text) {
    if (text.empty()) {
        return std::nullopt;
    }
    std::size_t i = text.front() == '-' ? 1 : 0;
    if (i >= text.size() || text[i] < '0' || text[i] > '9') {
        return std::nullopt;  // also rejects "-", "+1", ".5", "nan", "inf"
    }
    for (; i < text.size(); ++i) {
        const char c = text[i];
        const bool allowed = (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-';
        if (!allowed) {
            return std::nullopt;
        }
    }
    double value = 0;
    const char* begin = text.data();
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(begin, end, value, std::chars_format::general);
    if (ec != std::errc{} || ptr != end || !std::isfinite(value)) {
        return std::nullopt;
    }
    return value == 0 ? 0.0 : value;  // no -0
}

bool is_missing_value(std::string_view text) {
    text = trim(text);
    if (!text.empty() && text.front() == '[' && text.back() == ']') {
        text = text.substr(1, text.size() - 2);  // "[N/A]", "[Not Supported]", "[Unknown Error]"
    }
    static constexpr std::string_view missing[] = {"",
                                                   "-",
                                                   "N/A",
                                                   "NA",
                                                   "Not Supported",
                                                   "Unknown Error",
                                                   "ERR!",
                                                   "Insufficient Permissions",
                                                   "Requested functionality has been deprecated",
                                                   "GPU is lost",
                                                   "Not Available",
                                                   "n/a"};
    for (std::string_view m : missing) {
        if (text == m) {
            return true;
        }
    }
    return false;
}

std::string quote(std::string_view text) {
    std::string out = "'";
    std::size_t shown = 0;
    for (const char c : text) {
        if (shown == 40) {
            out += "...";
            break;
        }
        const auto byte = static_cast<unsigned char>(c);
        if (byte < 0x20 || byte >= 0x7f) {
            out += fmt::format("\\x{:02x}", byte);
        } else {
            out.push_back(c);
        }
        ++shown;
    }
    return out + "'";
}

bool is_percent_metric(GpuMetric metric) {
    return metric_name(metric).ends_with("_pct");
}

namespace {

std::string prefix(std::string_view what) {
    return what.empty() ? std::string() : std::string(what) + ": ";
}

}  // namespace

double checked_gpu_reading(GpuMetric metric, double raw, double scale, std::string_view what, std::string_view text,
                           const std::string& file, int line, int column) {
    if (raw < 0) {
        throw input_error(file, line, column, fmt::format("{}{} is negative", prefix(what), quote(text)));
    }
    const double value = raw * scale;
    if (is_percent_metric(metric)) {
        if (value > 100) {
            // DCGM's profiling fields are ratios, scaled by 100 to a percentage.
            throw input_error(file, line, column,
                              scale == 1
                                  ? fmt::format("{}{} is above 100 %", prefix(what), quote(text))
                                  : fmt::format("{}{} is above {} (a ratio)", prefix(what), quote(text), 100 / scale));
        }
    } else if (raw > max_counter_reading) {
        throw input_error(
            file, line, column,
            fmt::format("{}{} is larger than nvidia-smi or DCGM can print (2^64)", prefix(what), quote(text)));
    }
    return value;
}

double checked_share(double value, double maximum, std::string_view what, std::string_view text,
                     const std::string& file, int line, int column) {
    if (value < 0) {
        throw input_error(file, line, column, fmt::format("{}{} is negative", prefix(what), quote(text)));
    }
    if (value > maximum) {
        throw input_error(file, line, column, fmt::format("{}{} is above {} %", prefix(what), quote(text), maximum));
    }
    return value;
}

InputError input_error(const std::string& file, int line, int column, std::string message) {
    return InputError(Diagnostic{file, Position{line, column}, {}, std::move(message)});
}

}  // namespace gpusel::telemetry_detail
