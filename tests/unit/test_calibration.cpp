// Calibration from measured speeds (perf/calibration.hpp) and the speed bands of
// data/efficiency.yaml: the fitted stack factor reproduces the measurement, moves other GPUs by
// the same factor, reads vLLM benchmark results, and refuses what it cannot use.

#include <cmath>
#include <filesystem>
#include <fstream>

#include <catch2/catch.hpp>

#include "perf/calibration.hpp"
#include "support/test_support.hpp"

using namespace gpusel;
using Catch::Matchers::Contains;

namespace {

const char* const chat_workload = R"(format: 1
name: chat
kind: inference
model: {preset: llama-2-7b}
precision: fp16
weights: fp16
inference:
  input_tokens: 512
  output_tokens: 128
  batch: 8
  requests_per_s: 1
)";

Workload load(const std::string& text) {
    const LoadContext context{&test::catalog(), &test::models()};
    return load_workload_text(text, "w.yaml", context);
}

double predicted_output(const Workload& workload, const std::string& gpu_id, const EfficiencyTable& table) {
    const GpuSpec& gpu = *test::catalog().find(gpu_id);
    PerfQuery query;
    query.layout = fitting_layout(workload, gpu, 1, ServingStack::automatic).layout;
    return speed_metric_value(estimate_perf(workload, gpu, query, table), MeasuredMetric::output_tokens_per_s);
}

}  // namespace

TEST_CASE("calibration: no speed points, no change", "[calibration]") {
    const Workload workload = load(chat_workload);
    const SpeedCalibration calibration = calibrate_speed(workload, test::catalog(), test::efficiency());
    CHECK_FALSE(calibration.applied);
    CHECK(calibration.scale == 1);
    CHECK(calibrated_efficiency(test::efficiency(), calibration).speed_scale == 1);
    CHECK(describe_calibration(calibration).empty());
}

TEST_CASE("calibration: the fitted factor reproduces the measurement and moves other GPUs alike", "[calibration]") {
    const Workload plain = load(chat_workload);
    const double a100_before = predicted_output(plain, "A100-80GB-SXM4", test::efficiency());
    const double h100_before = predicted_output(plain, "H100-SXM5", test::efficiency());
    REQUIRE(a100_before > 0);
    // A measurement 20 % below the model on the A100.
    const double measured = 0.8 * a100_before;
    const Workload workload = load(std::string(chat_workload) +
                                   "calibration:\n  speed:\n    - {gpu: A100-80GB-SXM4, metric: output_tokens_per_s, "
                                   "measured: " +
                                   std::to_string(measured) + "}\n");
    const SpeedCalibration calibration = calibrate_speed(workload, test::catalog(), test::efficiency());
    REQUIRE(calibration.applied);
    REQUIRE(calibration.points.size() == 1);
    CHECK(calibration.points[0].predicted_before == Approx(a100_before).epsilon(1e-9));
    CHECK(calibration.points[0].predicted_after == Approx(measured).epsilon(0.001));
    CHECK(calibration.scale < 1);
    CHECK(calibration.scale > 0.6);
    const EfficiencyTable calibrated = calibrated_efficiency(test::efficiency(), calibration);
    CHECK(calibrated.speed_scale == Approx(calibration.scale));
    // The H100 moves by nearly the same factor (only the collectives and capped fractions differ).
    const double h100_after = predicted_output(workload, "H100-SXM5", calibrated);
    CHECK(h100_after / h100_before == Approx(0.8).epsilon(0.05));
    CHECK_THAT(describe_calibration(calibration), Contains("1 × A100-80GB-SXM4 measured output_tokens_per_s"));
}

TEST_CASE("calibration: a point beyond the bounds says which bounds held it back", "[calibration]") {
    const Workload plain = load(chat_workload);
    const double before = predicted_output(plain, "A100-80GB-SXM4", test::efficiency());
    // Twenty times the model's speed: no stack factor within 0.2–5× and no fraction of peak up to
    // 0.98 reaches it, so the fit stops short and the note names the bounds.
    const Workload workload = load(std::string(chat_workload) +
                                   "calibration:\n  speed:\n    - {gpu: A100-80GB-SXM4, metric: output_tokens_per_s, "
                                   "measured: " +
                                   std::to_string(20 * before) + "}\n");
    const SpeedCalibration calibration = calibrate_speed(workload, test::catalog(), test::efficiency());
    REQUIRE(calibration.applied);
    CHECK(calibration.scale <= 5);
    REQUIRE(calibration.notes.size() == 1);
    CHECK_THAT(calibration.notes[0], Contains("beyond what the peaks allow (stack factor within 0.2–5×, fractions of "
                                              "peak at most 0.98); check that the measurement is of this workload"));
}

TEST_CASE("calibration: the points are predicted on the stack the estimate is asked for", "[calibration]") {
    const GpuSpec& gpu = *test::catalog().find("RTX-4090");
    const Workload plain = load(chat_workload);
    PerfQuery query;
    query.layout = fitting_layout(plain, gpu, 1, ServingStack::llama_cpp).layout;
    query.stack = ServingStack::llama_cpp;
    query.engine = "llama.cpp";
    const double llama_cpp =
        speed_metric_value(estimate_perf(plain, gpu, query, test::efficiency()), MeasuredMetric::output_tokens_per_s);
    const double automatic = predicted_output(plain, "RTX-4090", test::efficiency());
    REQUIRE(llama_cpp > 0);
    REQUIRE(std::abs(llama_cpp / automatic - 1) > 0.05);
    const Workload workload = load(std::string(chat_workload) +
                                   "calibration:\n  speed:\n    - {gpu: RTX-4090, metric: output_tokens_per_s, "
                                   "measured: " +
                                   std::to_string(llama_cpp) + "}\n");
    // Measured exactly what the llama.cpp model says: on llama.cpp nothing moves; read as the
    // workload's own (optimised) stack, the same number asks for a different factor.
    const SpeedCalibration on_llama_cpp = calibrate_speed(workload, test::catalog(), test::efficiency(),
                                                          CalibrationStack{ServingStack::llama_cpp, "llama.cpp"});
    REQUIRE(on_llama_cpp.points.size() == 1);
    CHECK(on_llama_cpp.points[0].predicted_before == Approx(llama_cpp).epsilon(1e-9));
    CHECK(on_llama_cpp.scale == Approx(1).epsilon(0.001));
    const SpeedCalibration on_default = calibrate_speed(workload, test::catalog(), test::efficiency());
    CHECK(on_default.points[0].predicted_before == Approx(automatic).epsilon(1e-9));
    CHECK(std::abs(on_default.scale - 1) > 0.04);
}

TEST_CASE("calibration: speed_scale multiplies fractions, caps them and divides fixed times", "[calibration]") {
    EfficiencyTable table = test::efficiency();
    const GpuSpec& gpu = *test::catalog().find("A100-80GB-SXM4");
    const EfficiencyFactors base = table.resolve(gpu, ServingStack::optimized);
    table.speed_scale = 1.5;
    const EfficiencyFactors scaled = table.resolve(gpu, ServingStack::optimized);
    CHECK(scaled.prefill_compute == Approx(std::min(0.98, base.prefill_compute * 1.5)));
    CHECK(scaled.decode_bandwidth == Approx(0.98));  // 0.84 × 1.5 = 1.26, capped
    CHECK(scaled.overhead_per_layer_s == Approx(base.overhead_per_layer_s / 1.5));
    CHECK(scaled.interconnect == Approx(base.interconnect));  // links are not the stack
    CHECK(scaled.applied.back() == "calibration");
}

TEST_CASE("calibration: a vLLM benchmark result is a speed point", "[calibration]") {
    const std::filesystem::path folder = std::filesystem::temp_directory_path() / "gpusel-calibration-test";
    std::filesystem::create_directories(folder);
    std::ofstream(folder / "bench.json") << R"({"backend": "vllm", "max_concurrency": 16, "output_throughput": 812.5,
"mean_tpot_ms": 18.2})";
    std::ofstream(folder / "w.yaml") << chat_workload
                                     << "calibration:\n  speed:\n    - {gpu: L40S, vllm_benchmark: bench.json}\n";
    const LoadContext context{&test::catalog(), &test::models()};
    const Workload workload = load_workload_file((folder / "w.yaml").string(), context);
    REQUIRE(workload.calibration.speed.size() == 1);
    const SpeedCalibrationPoint& point = workload.calibration.speed[0];
    CHECK(point.gpu == "L40S");
    CHECK(point.metric == MeasuredMetric::output_tokens_per_s);
    CHECK(point.measured == 812.5);
    CHECK(point.batch == 16);
    CHECK_THAT(point.from, Contains("bench.json"));

    std::ofstream(folder / "empty.json") << R"({"backend": "vllm"})";
    std::ofstream(folder / "bad.yaml") << chat_workload
                                       << "calibration:\n  speed:\n    - {gpu: L40S, vllm_benchmark: empty.json}\n";
    CHECK_THROWS_WITH(load_workload_file((folder / "bad.yaml").string(), context),
                      Contains("bad.yaml:14:35:") && Contains("calibration.speed[0].vllm_benchmark") &&
                          Contains("no positive output_throughput"));
    std::filesystem::remove_all(folder);
}

TEST_CASE("calibration: points the model cannot use are input errors with their position", "[calibration]") {
    const LoadContext context{&test::catalog(), &test::models()};
    CHECK_THROWS_WITH(load_workload_text(std::string(chat_workload) +
                                             "calibration:\n  speed:\n    - {gpu: A100-80GB-SXM4, metric: tokens, "
                                             "measured: 10}\n",
                                         "w.yaml", context),
                      Contains("calibration.speed[0].metric") && Contains("output_tokens_per_s"));
    // A metric the estimate does not have: a generation workload has no training tokens/s.
    const Workload workload = load(std::string(chat_workload) +
                                   "calibration:\n  speed:\n    - {gpu: A100-80GB-SXM4, metric: training_tokens_per_s, "
                                   "measured: 1000}\n");
    CHECK_THROWS_WITH(calibrate_speed(workload, test::catalog(), test::efficiency()),
                      Contains("w.yaml:14:7:") && Contains("the model gives no training_tokens_per_s"));
}

TEST_CASE("speed bands: every group has a band around 1", "[calibration]") {
    for (const std::string_view group : speed_band_groups) {
        INFO(group);
        const auto found = test::efficiency().speed_bands.find(group);
        REQUIRE(found != test::efficiency().speed_bands.end());
        CHECK(found->second.low < 1);
        CHECK(found->second.high > 1);
        CHECK_FALSE(found->second.source.empty());
    }
    CHECK(speed_band_group(load(chat_workload)) == "decode");
}
