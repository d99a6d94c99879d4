// The steady state of a capture: each GPU's warm-up and tail (samples below half its median
// utilisation) left out, with a phase note for each, and the capture's quality (samples and
// seconds per GPU, too short to judge).

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "diagnose/internal.hpp"

namespace gpusel::diagnose_detail {

namespace {

// Seconds of a printed time: a Unix time (Prometheus), or the HH:MM:SS[.fff] at the end of
// dmon's -o T / DT and --query-gpu's timestamp. nullopt for anything else.
std::optional<double> seconds_of(const std::string& time) {
    if (time.empty()) {
        return std::nullopt;
    }
    if (time.find_first_not_of("0123456789.") == std::string::npos) {
        return std::strtod(time.c_str(), nullptr);
    }
    const std::size_t space = time.rfind(' ');
    const std::string clock = space == std::string::npos ? time : time.substr(space + 1);
    int h = 0;
    int m = 0;
    double s = 0;
    char c1 = 0;
    char c2 = 0;
    if (std::sscanf(clock.c_str(), "%d%c%d%c%lf", &h, &c1, &m, &c2, &s) != 5 || c1 != ':' || c2 != ':' || h < 0 ||
        h > 23 || m < 0 || m > 59 || s < 0 || s >= 61) {
        return std::nullopt;
    }
    return h * 3600.0 + m * 60.0 + s;
}

// One GPU's busy samples in one input, in capture order: their rows and values.
struct BusySeries {
    std::vector<std::size_t> rows;
    std::vector<double> values;
};

BusySeries busy_series(const GpuTelemetry& t, int gpu, GpuMetric busy) {
    BusySeries series;
    for (std::size_t i = 0; i < t.samples.size(); ++i) {
        const GpuSample& sample = t.samples[i];
        if (sample.entity == GpuEntity::gpu && sample.gpu == gpu && sample.value(busy)) {
            series.rows.push_back(i);
            series.values.push_back(*sample.value(busy));
        }
    }
    return series;
}

// Leaves one GPU's warm-up and tail out of `keep`, with a phase note for each; from the first
// input that has any, the GPU's steady mean and the capture's duration.
void trim_warm_up_and_tail(const GpuTelemetry& t, int gpu, GpuMetric busy, bool first_input, std::vector<bool>& keep,
                           CaptureQuality& capture) {
    const BusySeries series = busy_series(t, gpu, busy);
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
            capture.phases.push_back(fmt::format(
                "GPU {}: {} of {} sample{} (lines {}-{}) below half the median utilisation ({:.0f} %), left "
                "out",
                gpu, name, to - from, to - from == 1 ? "" : "s", t.samples[rows[from]].line,
                t.samples[rows[to - 1]].line, median));
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
    const std::vector<double> kept(values.begin() + static_cast<std::ptrdiff_t>(first),
                                   values.begin() + static_cast<std::ptrdiff_t>(last));
    capture.per_gpu.push_back(GpuBusy{gpu, summarize(kept).mean, kept.size()});
    const std::optional<double> from = seconds_of(t.samples[rows[first]].time);
    const std::optional<double> to = seconds_of(t.samples[rows[last - 1]].time);
    if (from && to && last - first > 1) {
        double span = *to - *from;
        span += span < 0 ? 86400 : 0;  // past midnight
        capture.duration_s = std::max(capture.duration_s.value_or(0), span);
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
        for (const int gpu : job) {
            trim_warm_up_and_tail(*t, gpu, *busy, first_input, keep, capture);
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
