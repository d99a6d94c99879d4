// The steady state of a capture: each GPU's warm-up and tail (samples below half its median
// utilisation) left out, with a phase note for each, and the capture's quality (samples and
// seconds per GPU, too short to judge).

#include <algorithm>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "diagnose/internal.hpp"

namespace gpusel::diagnose_detail {

namespace {

// One GPU's busy samples in one input, in capture order: their rows and values.
struct BusySeries {
    std::vector<std::size_t> rows;
    std::vector<double> values;
};

// The busy series of every job GPU of one input, in one pass over its samples (a pass per GPU
// would make a capture of 10^5 GPUs quadratic). `job` is ascending.
std::map<int, BusySeries> busy_series_by_gpu(const GpuTelemetry& t, const std::vector<int>& job, GpuMetric busy) {
    std::map<int, BusySeries> by_gpu;
    for (std::size_t i = 0; i < t.samples.size(); ++i) {
        const GpuSample& sample = t.samples[i];
        if (sample.entity != GpuEntity::gpu || !std::binary_search(job.begin(), job.end(), sample.gpu)) {
            continue;
        }
        if (const std::optional<double> value = sample.value(busy)) {
            BusySeries& series = by_gpu[sample.gpu];
            series.rows.push_back(i);
            series.values.push_back(*value);
        }
    }
    return by_gpu;
}

// The capture's length from the steady samples' times. Dated times (dmon -o DT, --query-gpu,
// Prometheus) span from the earliest to the latest, whatever the order of the rows; times of
// day alone (dmon -o T) from the first to the last, one day added when the last is earlier
// (the capture ran past midnight).
// [begin, end): the steady samples' rows, in capture order.
std::optional<double> capture_span(const GpuTelemetry& t, std::vector<std::size_t>::const_iterator begin,
                                   std::vector<std::size_t>::const_iterator end) {
    if (end - begin < 2) {
        return std::nullopt;
    }
    const std::optional<SampleTime> first = t.samples[*begin].time();
    const std::optional<SampleTime> last = t.samples[*(end - 1)].time();
    if (!first || !last) {
        return std::nullopt;
    }
    if (!first->dated || !last->dated) {
        if (first->dated || last->dated) {
            return std::nullopt;
        }
        const double span = last->seconds - first->seconds;
        return span < 0 ? span + 86400 : span;
    }
    double earliest = first->seconds;
    double latest = earliest;
    for (auto row = begin; row != end; ++row) {
        const std::optional<SampleTime> time = t.samples[*row].time();
        if (time && time->dated) {
            earliest = std::min(earliest, time->seconds);
            latest = std::max(latest, time->seconds);
        }
    }
    return latest - earliest;
}

// Leaves one GPU's warm-up and tail out of `keep`, with a phase note for each; from the first
// input that has any, the GPU's steady mean and the capture's duration.
void trim_warm_up_and_tail(const GpuTelemetry& t, int gpu, const BusySeries& series, bool first_input,
                           std::vector<bool>& keep, CaptureQuality& capture) {
    const std::vector<std::size_t>& rows = series.rows;
    const std::vector<double>& values = series.values;
    if (values.empty()) {
        return;
    }
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    std::size_t first = 0;
    std::size_t last = values.size();
    if (median >= 10) {
        while (first < values.size() && values[first] < median / 2) {
            ++first;
        }
        while (last > first && values[last - 1] < median / 2) {
            --last;
        }
    }
    const auto phase = [&](const char* name, std::size_t from, std::size_t to) {
        if (to > from) {
            // Lines ascending: rows put in time order (--query-gpu newest first) run backwards.
            const int first_line = t.samples[rows[from]].line;
            const int last_line = t.samples[rows[to - 1]].line;
            capture.phases.push_back(fmt::format(
                "GPU {}: {} of {} sample{} (lines {}-{}) below half the median utilisation ({:.0f} %), left "
                "out",
                gpu, name, to - from, to - from == 1 ? "" : "s", std::min(first_line, last_line),
                std::max(first_line, last_line), median));
        }
        for (std::size_t i = from; i < to; ++i) {
            keep[rows[i]] = false;
        }
    };
    phase("warm-up", 0, first);
    phase("tail", last, values.size());
    if (!first_input) {
        return;
    }
    // The steady values, in the buffer the median used: a capture of millions of samples is
    // not copied again.
    sorted.assign(values.begin() + static_cast<std::ptrdiff_t>(first),
                  values.begin() + static_cast<std::ptrdiff_t>(last));
    const std::size_t kept = sorted.size();
    capture.per_gpu.push_back(GpuBusy{gpu, summarize(std::move(sorted)).mean, kept});
    if (const std::optional<double> span = capture_span(t, rows.begin() + static_cast<std::ptrdiff_t>(first),
                                                        rows.begin() + static_cast<std::ptrdiff_t>(last))) {
        capture.duration_s = std::max(capture.duration_s.value_or(0), *span);
    }
}

}  // namespace

SteadyState find_steady_state(const DiagnoseInputs& in, const std::vector<int>& job) {
    SteadyState result;
    CaptureQuality& capture = result.capture;
    bool first_input = true;
    for (const GpuTelemetry* t : gpu_inputs(in)) {
        const std::optional<GpuMetric> busy = busy_metric(*t);
        std::vector<bool>& keep = result.mask[t];
        keep.assign(t->samples.size(), true);
        if (!busy) {
            continue;
        }
        const std::map<int, BusySeries> by_gpu = busy_series_by_gpu(*t, job, *busy);
        for (const auto& [gpu, series] : by_gpu) {
            trim_warm_up_and_tail(*t, gpu, series, first_input, keep, capture);
        }
        first_input = first_input && capture.per_gpu.empty();
    }
    if (!capture.per_gpu.empty()) {
        capture.samples_per_gpu = capture.per_gpu.front().samples;
        for (const GpuBusy& gpu : capture.per_gpu) {
            capture.samples_per_gpu = std::min(capture.samples_per_gpu, gpu.samples);
        }
        capture.too_short = capture.samples_per_gpu < min_capture_samples ||
                            (capture.duration_s && *capture.duration_s < min_capture_seconds);
        if (capture.too_short) {
            capture.warnings.push_back(
                fmt::format("the capture is too short to judge: {} steady sample{} per GPU{}; verdicts need at least "
                            "{} samples and "
                            "{:.0f} s (a few minutes is better), so every confidence is capped at low",
                            capture.samples_per_gpu, capture.samples_per_gpu == 1 ? "" : "s",
                            capture.duration_s ? fmt::format(" over {:.0f} s", *capture.duration_s) : "",
                            min_capture_samples, min_capture_seconds));
        }
    }
    return result;
}

}  // namespace gpusel::diagnose_detail
