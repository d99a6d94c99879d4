#pragma once
// Helpers shared by the telemetry parsers (private to src/telemetry/).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/error.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel::telemetry_detail {

struct Line {
    std::string_view text;  // without the line end; ANSI escapes removed. Valid until the next line is read
    int number = 0;         // 1-based
};

// The lines of a text, read one at a time and without a copy of the text (a file of 16 MiB of
// blank lines must not become 16 million strings): splits on LF (a CR before it is dropped),
// removes a leading UTF-8 BOM and ANSI CSI escapes (ESC [ ... final byte), which `nvidia-smi
// topo -m` prints around its header. An input range: `for (const Line& line : split_lines(text))`;
// each begin() starts again from the first line. `text` must outlive the range.
class LineRange {
public:
    class Iterator {
    public:
        Iterator() = default;  // the end
        explicit Iterator(std::string_view text);
        Line operator*() const { return Line{m_stripped_line ? std::string_view(m_stripped) : m_line, m_number}; }
        Iterator& operator++();
        bool operator==(const Iterator& other) const { return m_done == other.m_done; }
        bool operator!=(const Iterator& other) const { return m_done != other.m_done; }

    private:
        std::string_view m_text;
        std::size_t m_next = 0;  // where the line after m_line starts
        int m_number = 0;
        bool m_done = true;
        std::string_view m_line;       // as in the text
        bool m_stripped_line = false;  // it held escapes: its text is m_stripped
        std::string m_stripped;
    };

    explicit LineRange(std::string_view text) : m_text(text) {}
    Iterator begin() const { return Iterator(m_text); }
    static Iterator end() { return {}; }

private:
    std::string_view m_text;
};

LineRange split_lines(std::string_view text);

struct Token {
    std::string_view text;
    int column = 0;  // 1-based byte column
};

// Whitespace is space and tab.
std::vector<Token> split_whitespace(std::string_view line);
std::string_view trim(std::string_view text);
bool starts_with(std::string_view text, std::string_view prefix);
bool ends_with(std::string_view text, std::string_view suffix);
bool is_blank(std::string_view text);

// A decimal number as tools print it: optional '-', digits, optional fraction and exponent.
// Locale-independent; rejects hex, nan, inf, thousands separators and trailing text.
std::optional<double> parse_decimal(std::string_view text);

// Cells that mean "no value": "-", "N/A", "[N/A]", "[Not Supported]", "Requested functionality
// has been deprecated", "ERR!", "[Unknown Error]", "[Insufficient Permissions]", "" ...
bool is_missing_value(std::string_view text);

// Readings are bounded, so that a corrupt or hostile file cannot turn into a verdict ("the GPU
// is busy 5e29 % of the time") or overflow to infinity once scaled and summed:
//  - no reading is negative (NVML and DCGM return unsigned counters; mpstat, sar, top and perf
//    print shares of time);
//  - a percentage is at most 100 (a DCGM ratio is checked after its × 100);
//  - any other GPU reading, in the unit the tool printed (MiB, MB/s, W, MHz, C), is at most
//    2^64: NVML hands them out as unsigned integers of at most 64 bits, so a larger number was
//    not printed by nvidia-smi or DCGM.
// `what` names the cell in the message ("column 'sm'"; may be empty); `text` is the cell as
// printed.
inline constexpr double max_counter_reading = 18446744073709551616.0;  // 2^64
bool is_percent_metric(GpuMetric metric);
// Returns raw × scale, or throws InputError at file:line:column.
double checked_gpu_reading(GpuMetric metric, double raw, double scale, std::string_view what, std::string_view text,
                           const std::string& file, int line, int column);
// A share of time or of samples: 0 to `maximum` percent. Throws InputError at file:line:column.
double checked_share(double value, double maximum, std::string_view what, std::string_view text,
                     const std::string& file, int line, int column);

// A short, printable rendering of untrusted text for messages ('abc', at most 40 characters).
std::string quote(std::string_view text);

// InputError at file:line:column.
InputError input_error(const std::string& file, int line, int column, std::string message);

}  // namespace gpusel::telemetry_detail
