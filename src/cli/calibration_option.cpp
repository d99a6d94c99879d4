// --calibration FILE of plan, perf and memory: one place that reads the calibration file and
// hands its points to the workloads they measure (context.hpp).

#include <fmt/format.h>

#include "base/error.hpp"
#include "cli/context.hpp"

namespace gpusel::cli {

namespace {

// Which workloads a speed point can calibrate: the model predicts inference metrics only for
// inference workloads and training tokens/s only for training ones (perf/calibration.cpp).
bool takes(const Workload& workload, const SpeedCalibrationPoint& point) {
    if (point.run != SpeedCalibrationPoint::Run::unstated) {
        return (point.run == SpeedCalibrationPoint::Run::training) == workload.is_training();
    }
    switch (point.metric) {
        case MeasuredMetric::training_tokens_per_s:
            return workload.is_training();
        case MeasuredMetric::output_tokens_per_s:
        case MeasuredMetric::decode_tokens_per_s:
        case MeasuredMetric::prefill_tokens_per_s:
        case MeasuredMetric::ttft:
        case MeasuredMetric::tpot:
            return !workload.is_training();
        case MeasuredMetric::samples_per_s:
        case MeasuredMetric::images_per_s:
            return true;
    }
    return false;
}

// The one workload of `project` a point goes to: among those that take it, a development role
// (workstations) only when nothing else does. Throws InputError at `where` otherwise.
std::size_t owner(const Project& project, const std::vector<bool>& fits, const Diagnostic& where,
                  const std::string& what) {
    std::vector<std::size_t> candidates;
    for (std::size_t i = 0; i < fits.size(); ++i) {
        if (fits[i] && project.workloads[i].role != Role::development) {
            candidates.push_back(i);
        }
    }
    if (candidates.empty()) {
        for (std::size_t i = 0; i < fits.size(); ++i) {
            if (fits[i]) {
                candidates.push_back(i);
            }
        }
    }
    if (candidates.size() == 1) {
        return candidates.front();
    }
    throw InputError(Diagnostic{
        where.file, where.position, where.path,
        candidates.empty()
            ? fmt::format("no workload of project {} takes {}", project.name, what)
            : fmt::format("{} could calibrate workloads {} and {} of project {}; put it in the calibration block of "
                          "the one it measured",
                          what, project.workloads[candidates[0]].name, project.workloads[candidates[1]].name,
                          project.name)});
}

}  // namespace

void add_calibration_option(CLI::App* command, std::string& file) {
    command
        ->add_option("--calibration", file,
                     "Calibration file (`gpusel calibrate` writes it): its measured points correct the model "
                     "(docs/calibrate.md)")
        ->type_name("FILE");
}

void apply_calibration_option(Context& context, const std::string& file, Workload& workload) {
    if (file.empty()) {
        return;
    }
    Workload calibrated = workload;
    calibrated.calibration = {};
    append_calibration_file(file, calibrated, context.load_context());
    // A point of the other kind of workload would fail later with less to go on; say it here.
    for (const SpeedCalibrationPoint& point : calibrated.calibration.speed) {
        if (!takes(workload, point)) {
            throw InputError(Diagnostic{
                point.where.file, point.where.position, point.where.path,
                fmt::format(
                    "{} calibrates {} workloads, and {} is {}",
                    point.run == SpeedCalibrationPoint::Run::unstated
                        ? fmt::format("metric {}", to_string(point.metric))
                        : fmt::format("a {} measurement (kind: {})", workload.is_training() ? "serving" : "training",
                                      workload.is_training() ? "inference" : "training"),
                    workload.is_training() ? "inference" : "training", workload.name,
                    workload.is_training() ? "a training workload" : "an inference workload")});
        }
    }
    if (!calibrated.calibration.memory.empty() && !workload.is_training()) {
        throw InputError(Diagnostic{file,
                                    {},
                                    "calibration.memory",
                                    fmt::format("memory points (a training step's allocated peak) calibrate training "
                                                "workloads; {} is an inference workload",
                                                workload.name)});
    }
    workload.calibration.speed.insert(workload.calibration.speed.end(), calibrated.calibration.speed.begin(),
                                      calibrated.calibration.speed.end());
    workload.calibration.memory.insert(workload.calibration.memory.end(), calibrated.calibration.memory.begin(),
                                       calibrated.calibration.memory.end());
    if (!calibrated.calibration.serving_memory.empty() && workload.is_training()) {
        throw InputError(Diagnostic{file,
                                    {},
                                    "calibration.serving_memory",
                                    fmt::format("serving_memory points (a serving engine's start-up figures) calibrate "
                                                "inference workloads; {} is a training workload",
                                                workload.name)});
    }
    workload.calibration.serving_memory.insert(workload.calibration.serving_memory.end(),
                                               calibrated.calibration.serving_memory.begin(),
                                               calibrated.calibration.serving_memory.end());
}

void apply_calibration_option(Context& context, const std::string& file, Project& project) {
    if (file.empty() || project.workloads.empty()) {
        return;
    }
    if (project.workloads.size() == 1) {
        apply_calibration_option(context, file, project.workloads.front());
        return;
    }
    // Each workload reads the file as its own (a `throughput:` list means training or output
    // tokens/s by the workload's kind); the points come in file order in every reading.
    std::vector<CalibrationSpec> readings;
    for (const Workload& workload : project.workloads) {
        Workload scratch = workload;
        scratch.calibration = {};
        append_calibration_file(file, scratch, context.load_context());
        readings.push_back(std::move(scratch.calibration));
    }
    std::vector<CalibrationSpec> added(project.workloads.size());
    for (std::size_t point = 0; point < readings.front().speed.size(); ++point) {
        std::vector<bool> fits;
        for (std::size_t w = 0; w < project.workloads.size(); ++w) {
            fits.push_back(takes(project.workloads[w], readings[w].speed[point]));
        }
        const SpeedCalibrationPoint& first = readings.front().speed[point];
        const std::size_t to =
            owner(project, fits, first.where, fmt::format("a point of metric {}", to_string(first.metric)));
        added[to].speed.push_back(readings[to].speed[point]);
    }
    // calibration.memory is the training memory model's (memory/training.cpp).
    for (std::size_t point = 0; point < readings.front().memory.size(); ++point) {
        std::vector<bool> fits;
        for (const Workload& workload : project.workloads) {
            fits.push_back(workload.is_training());
        }
        const std::size_t to =
            owner(project, fits, Diagnostic{file, {}, fmt::format("calibration.memory[{}]", point), ""},
                  "a memory point (peak allocated memory of a training step)");
        added[to].memory.push_back(readings[to].memory[point]);
    }
    // calibration.serving_memory is the inference memory model's (memory/serving.cpp).
    for (std::size_t point = 0; point < readings.front().serving_memory.size(); ++point) {
        std::vector<bool> fits;
        for (const Workload& workload : project.workloads) {
            fits.push_back(!workload.is_training());
        }
        const std::size_t to =
            owner(project, fits, Diagnostic{file, {}, fmt::format("calibration.serving_memory[{}]", point), ""},
                  "a serving_memory point (a serving engine's start-up figures)");
        added[to].serving_memory.push_back(readings[to].serving_memory[point]);
    }
    for (std::size_t w = 0; w < project.workloads.size(); ++w) {
        CalibrationSpec& calibration = project.workloads[w].calibration;
        calibration.serving_memory.insert(calibration.serving_memory.end(), added[w].serving_memory.begin(),
                                          added[w].serving_memory.end());
        calibration.speed.insert(calibration.speed.end(), added[w].speed.begin(), added[w].speed.end());
        calibration.memory.insert(calibration.memory.end(), added[w].memory.begin(), added[w].memory.end());
    }
}

}  // namespace gpusel::cli
