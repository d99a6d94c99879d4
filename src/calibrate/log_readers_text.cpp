// Text helpers of the log readers: the logs are free text written by print() and logging calls,
// so figures are found after their labels, never by column.

#include "calibrate/log_readers_text.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"

namespace gpusel::calibrate_detail {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

char lower(char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

}  // namespace

std::vector<TextLine> text_lines(std::string_view text, bool carriage_returns) {
    std::vector<TextLine> lines;
    int number = 0;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) {
            end = text.size();
        }
        ++number;
        std::string_view line = text.substr(start, end - start);
        if (carriage_returns) {
            std::size_t piece = 0;
            while (piece <= line.size()) {
                std::size_t next = line.find('\r', piece);
                if (next == std::string_view::npos) {
                    next = line.size();
                }
                if (next > piece) {
                    lines.push_back({line.substr(piece, next - piece), number});
                }
                piece = next + 1;
            }
        } else {
            if (!line.empty() && line.back() == '\r') {
                line.remove_suffix(1);
            }
            lines.push_back({line, number});
        }
        start = end + 1;
    }
    return lines;
}

Position position_of_offset(std::string_view text, std::size_t offset) {
    offset = std::min(offset, text.size());
    const std::string_view before = text.substr(0, offset);
    const auto line = static_cast<int>(std::count(before.begin(), before.end(), '\n')) + 1;
    const std::size_t line_start = before.rfind('\n');
    const std::size_t column = line_start == std::string_view::npos ? offset : offset - line_start - 1;
    return {line, static_cast<int>(column) + 1};
}

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())) != 0) {
        text.remove_prefix(1);
    }
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())) != 0) {
        text.remove_suffix(1);
    }
    return text;
}

std::size_t find_case_insensitive(std::string_view text, std::string_view needle, std::size_t from) {
    if (needle.empty() || needle.size() > text.size()) {
        return std::string_view::npos;
    }
    for (std::size_t i = from; i + needle.size() <= text.size(); ++i) {
        std::size_t j = 0;
        while (j < needle.size() && lower(text[i + j]) == lower(needle[j])) {
            ++j;
        }
        if (j == needle.size()) {
            return i;
        }
    }
    return std::string_view::npos;
}

bool contains(std::string_view text, std::string_view needle) {
    return text.find(needle) != std::string_view::npos;
}

std::optional<NumberAt> number_at(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) {
        ++i;
    }
    if (i < text.size() && (text[i] == '\'' || text[i] == '"')) {
        ++i;  // newer Trainer versions print their figures as strings: 'train_runtime': '1575'
    }
    const std::size_t begin = i;
    std::string digits;
    if (i < text.size() && (text[i] == '-' || text[i] == '+')) {
        digits += text[i++];
    }
    bool any_digit = false;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (is_digit(c) || c == '.') {
            any_digit = any_digit || is_digit(c);
            digits += c;
        } else if (c == ',' && any_digit && digits.find('.') == std::string::npos && i + 3 < text.size() &&
                   is_digit(text[i + 1]) && is_digit(text[i + 2]) && is_digit(text[i + 3]) &&
                   (i + 4 >= text.size() || !is_digit(text[i + 4]))) {
            continue;  // a thousands separator ("GPU KV cache size: 447,088 tokens")
        } else if ((c == 'e' || c == 'E') && any_digit && i + 1 < text.size() &&
                   (is_digit(text[i + 1]) ||
                    ((text[i + 1] == '-' || text[i + 1] == '+') && i + 2 < text.size() && is_digit(text[i + 2])))) {
            digits += c;
            digits += text[++i];
        } else {
            break;
        }
    }
    if (!any_digit) {
        return std::nullopt;
    }
    double value = 0;
    const char* first = digits.data() + (digits.front() == '+' ? 1 : 0);
    const char* last = digits.data() + digits.size();
    const auto [ptr, error] = std::from_chars(first, last, value, std::chars_format::general);
    if (error != std::errc{} || ptr != last || !std::isfinite(value)) {
        return std::nullopt;
    }
    return NumberAt{value == 0 ? 0.0 : value, begin, i};
}

LabelledFigure figure_after(std::string_view line, std::string_view key, bool case_insensitive) {
    LabelledFigure figure;
    const std::size_t at = case_insensitive ? find_case_insensitive(line, key) : line.find(key);
    if (at == std::string_view::npos) {
        return figure;
    }
    figure.found = true;
    std::size_t i = at + key.size();
    figure.column = static_cast<int>(at) + 1;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == ':' || line[i] == '=' ||
                               line[i] == '\'' || line[i] == '"')) {
        ++i;
    }
    const std::optional<NumberAt> number = number_at(line.substr(i));
    if (!number) {
        figure.column = static_cast<int>(i) + 1;
        return figure;
    }
    figure.number = number->value;
    figure.column = static_cast<int>(i + number->begin) + 1;
    std::size_t unit = i + number->end;
    while (unit < line.size() && line[unit] == ' ') {
        ++unit;
    }
    std::size_t unit_end = unit;
    while (unit_end < line.size() && std::isalpha(static_cast<unsigned char>(line[unit_end])) != 0) {
        ++unit_end;
    }
    figure.unit = std::string(line.substr(unit, unit_end - unit));
    return figure;
}

std::optional<double> bytes_per_unit(std::string_view unit) {
    static constexpr std::pair<std::string_view, double> units[] = {
        {"B", 1.0},         {"bytes", 1.0},        {"KiB", 1024.0},
        {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0},
        {"KB", 1e3},        {"kB", 1e3},           {"MB", 1e6},
        {"GB", 1e9},        {"TB", 1e12}};
    for (const auto& [name, bytes] : units) {
        if (unit == name) {
            return bytes;
        }
    }
    return std::nullopt;
}

double median_value(std::vector<double> values) {
    if (values.empty()) {
        return 0;
    }
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

SteadyMedian median_after_warm_up(const std::vector<std::pair<long long, double>>& readings) {
    SteadyMedian median;
    median.first_skipped = readings.size() > 1;
    std::vector<double> values;
    for (std::size_t i = median.first_skipped ? 1 : 0; i < readings.size(); ++i) {
        values.push_back(readings[i].second);
    }
    median.used = values.size();
    median.value = median_value(std::move(values));
    return median;
}

MeasuredSource source_for(const std::string& path, MeasurementFormat format, const std::string& gpu) {
    MeasuredSource source;
    source.path = path;
    source.format = format;
    source.gpu = gpu;
    return source;
}

void fail_at(const std::string& path, Position position, std::string field, std::string message) {
    throw InputError(Diagnostic{path, position, std::move(field), std::move(message)});
}

void fail(const std::string& path, std::string field, std::string message) {
    throw InputError(Diagnostic{path, {}, std::move(field), std::move(message)});
}

std::string require_gpu(const MeasurementContext& context, const std::string& path, std::string_view format) {
    if (context.gpu.empty()) {
        fail(path, "--gpu",
             fmt::format("a {} does not say which GPU it ran on: give --gpu (a catalog id, e.g. --gpu H100-SXM5)",
                         format));
    }
    return context.gpu;
}

int require_batch(const MeasurementContext& context, const std::string& path, std::string_view why) {
    if (context.batch <= 0) {
        fail(path, "--batch", fmt::format("{}: give --batch", why));
    }
    return context.batch;
}

}  // namespace gpusel::calibrate_detail
