// Calibration from measured speeds: one multiplier on the stack's efficiency factors, fitted by
// bisection so that the model reproduces each point, combined as a geometric mean
// (docs/perf-model.md, "Calibration").

#include "perf/calibration.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/format.hpp"

namespace gpusel {

namespace {

// Bounds of the multiplier: a stack 5× slower or faster than modelled is a different workload
// (or a different measurement) rather than a calibration; docs/reference/formulas.md gives 1.2–4×
// between stacks on one GPU.
constexpr double min_scale = 0.2;
constexpr double max_scale = 5;

[[noreturn]] void point_error(const SpeedCalibrationPoint& point, std::string message) {
    Diagnostic diagnostic = point.where;
    diagnostic.message = std::move(message);
    throw InputError(diagnostic);
}

double predict_point(const Workload& workload, const GpuSpec& gpu, const SpeedCalibrationPoint& point,
                     const EfficiencyTable& efficiency, const CalibrationStack& stack, int* measured_gpus = nullptr) {
    const FittingLayout fitting = fitting_layout(workload, gpu, point.count, stack.stack);
    if (!fitting.found()) {
        point_error(point, fmt::format("no layout of {} × {} holds this workload; calibrate on a measurement the "
                                       "model can lay out",
                                       point.count, gpu.id));
    }
    if (measured_gpus != nullptr) {
        *measured_gpus = configuration_gpus(workload, fitting.layout);
    }
    PerfQuery query;
    query.layout = fitting.layout;
    query.stack = stack.stack;
    query.engine = stack.engine;
    if (workload.is_training()) {
        query.micro_batch = point.batch;
    } else {
        query.batch = point.batch;
    }
    return speed_metric_value(estimate_perf(workload, gpu, query, efficiency), point.metric);
}

}  // namespace

std::string_view speed_band_group(const Workload& workload) {
    if (!workload.model.is_transformer()) {
        return "non-llm";
    }
    if (workload.is_training()) {
        return "training";
    }
    const SloSpec& slo = workload.inference.slo;
    const bool ttft_bound = slo.tpot_seconds <= 0 && slo.ttft_seconds > 0;
    if (ttft_bound || workload.inference.output_tokens <= 0) {
        return "prefill";
    }
    return "decode";
}

bool higher_is_faster(MeasuredMetric metric) {
    return metric != MeasuredMetric::ttft && metric != MeasuredMetric::tpot;
}

double speed_metric_value(const PerfEstimate& estimate, MeasuredMetric metric) {
    if (estimate.training) {
        const TrainingPerf& training = *estimate.training;
        switch (metric) {
            case MeasuredMetric::training_tokens_per_s:
                return training.tokens_per_s;
            case MeasuredMetric::samples_per_s:
                return training.samples_per_s;
            default:
                return 0;
        }
    }
    if (!estimate.inference) {
        return 0;
    }
    const InferencePerf& inference = *estimate.inference;
    switch (metric) {
        case MeasuredMetric::samples_per_s:
            return inference.requests_per_s;
        case MeasuredMetric::output_tokens_per_s:
            return inference.output_tokens_per_s;
        case MeasuredMetric::decode_tokens_per_s:
            return inference.tpot_s > 0 ? 1 / inference.tpot_s : 0;
        case MeasuredMetric::prefill_tokens_per_s:
            return inference.prefill_tokens_per_s;
        case MeasuredMetric::images_per_s:
            return inference.images_per_s;
        case MeasuredMetric::ttft:
            return inference.ttft_s;
        case MeasuredMetric::tpot:
            return inference.tpot_s;
        case MeasuredMetric::training_tokens_per_s:
            return 0;
    }
    return 0;
}

SpeedCalibration calibrate_speed(const Workload& workload, const Catalog& catalog, const EfficiencyTable& efficiency,
                                 const CalibrationStack& stack) {
    SpeedCalibration result;
    if (workload.calibration.speed.empty()) {
        return result;
    }
    double log_sum = 0;
    for (const SpeedCalibrationPoint& point : workload.calibration.speed) {
        if (point.run != SpeedCalibrationPoint::Run::unstated &&
            (point.run == SpeedCalibrationPoint::Run::training) != workload.is_training()) {
            point_error(point, fmt::format("a {} measurement (kind: {}) cannot calibrate the {} workload {}",
                                           workload.is_training() ? "serving" : "training",
                                           workload.is_training() ? "inference" : "training",
                                           workload.is_training() ? "training" : "inference", workload.name));
        }
        const GpuSpec* gpu = catalog.find(point.gpu);
        if (gpu == nullptr) {
            point_error(point, fmt::format("unknown GPU '{}'", point.gpu));
        }
        int measured_gpus = 0;
        const double before = predict_point(workload, *gpu, point, efficiency, stack, &measured_gpus);
        if (!(before > 0)) {
            point_error(point, fmt::format("the model gives no {} for this workload; use a metric it predicts",
                                           to_string(point.metric)));
        }
        // Speed grows monotonically with the multiplier; bisect in log space on the speed's
        // ratio to the measurement (rates: predicted / measured; times: measured / predicted).
        const auto faster_than_measured = [&](double scale) {
            EfficiencyTable trial = efficiency;
            trial.speed_scale = efficiency.speed_scale * scale;
            const double value = predict_point(workload, *gpu, point, trial, stack);
            return higher_is_faster(point.metric) ? value > point.measured : value < point.measured;
        };
        double low = std::log(min_scale);
        double high = std::log(max_scale);
        for (int iteration = 0; iteration < 40; ++iteration) {
            const double middle = (low + high) / 2;
            (faster_than_measured(std::exp(middle)) ? high : low) = middle;
        }
        CalibratedPoint calibrated;
        calibrated.point = point;
        calibrated.predicted_before = before;
        calibrated.point_scale = std::exp((low + high) / 2);
        calibrated.configuration_gpus = measured_gpus;
        log_sum += std::log(calibrated.point_scale);
        result.points.push_back(calibrated);
    }
    result.applied = true;
    result.scale = std::exp(log_sum / static_cast<double>(result.points.size()));
    const EfficiencyTable calibrated = calibrated_efficiency(efficiency, result);
    for (CalibratedPoint& point : result.points) {
        point.predicted_after = predict_point(workload, *catalog.find(point.point.gpu), point.point, calibrated, stack);
        // Several points pull apart, or one asks for more than the peaks allow (fractions are
        // capped, the factor bounded): say so rather than pretend the fit holds.
        if (std::abs(point.predicted_after / point.point.measured - 1) > 0.05) {
            result.notes.push_back(fmt::format(
                "the calibrated model gives {:.4g} for the {} measured on {} × {} ({:.4g}): {}", point.predicted_after,
                to_string(point.point.metric), point.point.count, point.point.gpu, point.point.measured,
                result.points.size() > 1
                    ? std::string("the points disagree, their geometric mean is used")
                    : fmt::format("beyond what the peaks allow (stack factor within {:g}–{:g}×, fractions of peak at "
                                  "most {:g}); check that the measurement is of this workload",
                                  min_scale, max_scale, max_achieved_fraction)));
        }
    }
    return result;
}

std::string describe_calibration(const SpeedCalibration& calibration) {
    if (!calibration.applied) {
        return "";
    }
    std::vector<std::string> points;
    for (const CalibratedPoint& point : calibration.points) {
        const bool time = !higher_is_faster(point.point.metric);
        const auto show = [&](double value) { return time ? format_duration(value) : fmt::format("{:.4g}", value); };
        points.push_back(fmt::format("{} × {} measured {} {} (the model said {})", point.point.count, point.point.gpu,
                                     to_string(point.point.metric), show(point.point.measured),
                                     show(point.predicted_before)));
    }
    return fmt::format("calibrated on {}: every GPU's speed estimate carries the stack factor {:.3g}×",
                       fmt::join(points, "; "), calibration.scale);
}

int configuration_gpus(const Workload& workload, const Layout& layout) {
    return workload.is_training() ? layout.gpu_count() : layout.tensor_parallel * layout.pipeline_parallel;
}

std::optional<SpeedBandFactors> measured_speed_band(const SpeedCalibration& calibration, std::string_view gpu,
                                                    int configuration_gpus) {
    if (!calibration.applied) {
        return std::nullopt;
    }
    for (const CalibratedPoint& point : calibration.points) {
        // A point the fitted factor does not reproduce (several points pulling apart, or a factor
        // at its bound) is not a measurement of what the model now predicts there.
        const bool reproduced = point.point.measured > 0 && std::abs(point.predicted_after / point.point.measured -
                                                                     1) <= measured_speed_noise_fraction;
        if (point.point.gpu == gpu && point.configuration_gpus == configuration_gpus && reproduced) {
            return SpeedBandFactors{
                1 - measured_speed_noise_fraction, 1, 1 + measured_speed_noise_fraction,
                fmt::format("measured on {} × {}: run-to-run noise of a benchmark, ±{:g} % "
                            "(assumed; MLPerf Inference TEST05's re-run tolerance)",
                            point.point.count, point.point.gpu, measured_speed_noise_fraction * 100)};
        }
    }
    return std::nullopt;
}

EfficiencyTable calibrated_efficiency(const EfficiencyTable& efficiency, const SpeedCalibration& calibration) {
    EfficiencyTable table = efficiency;
    if (calibration.applied) {
        table.speed_scale *= calibration.scale;
    }
    return table;
}

}  // namespace gpusel
