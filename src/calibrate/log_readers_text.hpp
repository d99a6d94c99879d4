#pragma once
// Text helpers the log readers share (log_readers*.cpp): lines with their numbers, figures after
// a label, byte units, the medians and the errors. Internal to src/calibrate.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate/calibrate.hpp"

namespace gpusel::calibrate_detail {

struct TextLine {
    std::string_view text;  // without its line break
    int number = 0;         // 1-based
};
// The lines of `text`; with `carriage_returns`, a line's '\r'-separated rewrites (progress bars)
// become lines of the same number.
std::vector<TextLine> text_lines(std::string_view text, bool carriage_returns = false);

// The 1-based line and column of byte `offset` in `text`.
Position position_of_offset(std::string_view text, std::size_t offset);

std::string_view trim(std::string_view text);
std::size_t find_case_insensitive(std::string_view text, std::string_view needle, std::size_t from = 0);
bool contains(std::string_view text, std::string_view needle);

// A number at the start of `text` (leading spaces and one quote skipped; "447,088" read as 447088,
// a sign and an exponent allowed): its value, and where it starts and ends in `text`.
struct NumberAt {
    double value = 0;
    std::size_t begin = 0;
    std::size_t end = 0;
};
std::optional<NumberAt> number_at(std::string_view text);

// The figure after the label `key` in `line` (after spaces, ':', '=' and quotes): found says the
// label is there, number the figure when it reads as one, unit the letters after it.
struct LabelledFigure {
    bool found = false;
    std::optional<double> number;
    std::string unit;
    int column = 0;  // 1-based column of the figure (of the label when no figure)
};
LabelledFigure figure_after(std::string_view line, std::string_view key, bool case_insensitive = false);

// Bytes per unit: B, bytes, KiB, MiB, GiB, TiB (powers of 1024) and KB, MB, GB, TB (of 1000);
// nullopt for anything else.
std::optional<double> bytes_per_unit(std::string_view unit);

double median_value(std::vector<double> values);

// The median of the readings' figures (second), the first left out as warm-up when there are
// more (a log's first interval holds the start-up); `used` is how many the median took.
struct SteadyMedian {
    double value = 0;
    std::size_t used = 0;
    bool first_skipped = false;
};
SteadyMedian median_after_warm_up(const std::vector<std::pair<long long, double>>& readings);

// An empty source of `format` read from `path`, its points on `gpu`.
MeasuredSource source_for(const std::string& path, MeasurementFormat format, const std::string& gpu);

[[noreturn]] void fail_at(const std::string& path, Position position, std::string field, std::string message);
[[noreturn]] void fail(const std::string& path, std::string field, std::string message);

// The GPU the points are on: context.gpu, or an error naming --gpu.
std::string require_gpu(const MeasurementContext& context, const std::string& path, std::string_view format);
// The micro-batch of a memory point or the batch a rate is per: context.batch, or an error naming --batch.
int require_batch(const MeasurementContext& context, const std::string& path, std::string_view why);

}  // namespace gpusel::calibrate_detail
