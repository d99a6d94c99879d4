// gpusel calibrate (calibrate/calibrate.hpp): each serving fixture of tests/data/calibration/
// (typed in the tools' published formats, SOURCES.md) is detected and read into the exact points
// the file holds; the calibration file it writes reads back through --calibration's reader.

#include <filesystem>
#include <fstream>
#include <sstream>

#include <catch2/catch.hpp>

#include "calibrate/calibrate.hpp"
#include "perf/calibration.hpp"
#include "support/test_support.hpp"

using namespace gpusel;
using Catch::Matchers::Contains;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(test::source_path("tests/data/" + name), std::ios::binary);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

MeasuredSource read(const std::string& name, const MeasurementContext& context) {
    return read_measurement(fixture(name), name, context);
}

MeasurementContext on(const std::string& gpu, int count = 0, int batch = 0) {
    MeasurementContext context;
    context.gpu = gpu;
    context.count = count;
    context.batch = batch;
    return context;
}

void require_point(const SpeedCalibrationPoint& point, const std::string& gpu, int count, MeasuredMetric metric,
                   double measured, int batch) {
    CHECK(point.gpu == gpu);
    CHECK(point.count == count);
    CHECK(point.metric == metric);
    CHECK(point.measured == Approx(measured).epsilon(1e-12));
    CHECK(point.batch == batch);
}

const char* const chat_workload = R"(format: 1
name: chat
kind: inference
model: {preset: llama-3.1-8b}
precision: bf16
weights: bf16
inference:
  input_tokens: 1024
  output_tokens: 128
  batch: 16
  requests_per_s: 1
)";

}  // namespace

TEST_CASE("calibrate detects each serving format from its content", "[calibrate]") {
    using F = MeasurementFormat;
    CHECK(detect_measurement_format(fixture("calibration/vllm-bench-serve-llama3.1-8b-h100-c16.json")) ==
          F::vllm_bench_serve);
    CHECK(detect_measurement_format(fixture("calibration/chat-vllm-l40s.json")) == F::vllm_bench_serve);
    CHECK(detect_measurement_format(fixture("calibration/sglang-bench-serving-llama3.1-8b-a100-two-runs.jsonl")) ==
          F::sglang_bench_serving);
    CHECK(detect_measurement_format(fixture("calibration/trtllm-bench-throughput-llama3.1-8b-h100-tp2.txt")) ==
          F::trtllm_bench);
    CHECK(detect_measurement_format(fixture("calibration/vllm-metrics-federate-two-scrapes-one-request.txt")) ==
          F::prometheus_metrics);
    CHECK(detect_measurement_format(fixture("calibration/sglang-metrics-one-scrape.txt")) == F::prometheus_metrics);
    CHECK(detect_measurement_format(fixture("telemetry/derived-vllm-metrics-one-scrape.txt")) == F::prometheus_metrics);
    // A federated scrape with both the engine's and DCGM's series is the engine's (its speeds).
    CHECK(detect_measurement_format(fixture("telemetry/derived-prometheus-federate-vllm-dcgm-H100-5-scrapes.txt")) ==
          F::prometheus_metrics);
    CHECK(detect_measurement_format(fixture("telemetry/nvidia-smi-dmon-s-m-8gpu.txt")) == F::gpu_telemetry);
    CHECK(detect_measurement_format(fixture("telemetry/dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt")) ==
          F::gpu_telemetry);
    CHECK(detect_measurement_format(
              fixture("telemetry/derived-nvidia-smi-query-gpu-csv-header-units-H100-vllm-25pct-fb-92pct-40s.txt")) ==
          F::gpu_telemetry);
    CHECK(detect_measurement_format(fixture("telemetry/dcgm-exporter-metrics-L40S-595-idle.txt")) == F::gpu_telemetry);
    CHECK(detect_measurement_format(fixture("telemetry/derived-prometheus-query-range-dcgmproftester.json")) ==
          F::gpu_telemetry);
    CHECK_FALSE(detect_measurement_format(fixture("calibration/not-a-measurement-access-log.txt")));
    CHECK_FALSE(detect_measurement_format(""));
    CHECK(to_string(F::sglang_bench_serving) == "sglang-bench-serving");
}

TEST_CASE("calibrate reads vllm bench serve results", "[calibrate]") {
    SECTION("at max_concurrency 16: output tokens/s at batch 16, latencies only as notes") {
        const MeasuredSource source =
            read("calibration/vllm-bench-serve-llama3.1-8b-h100-c16.json", on("H100-SXM5", 1));
        CHECK(source.format == MeasurementFormat::vllm_bench_serve);
        CHECK(source.gpu == "H100-SXM5");
        REQUIRE(source.speed.size() == 1);
        require_point(source.speed[0], "H100-SXM5", 1, MeasuredMetric::output_tokens_per_s, 1843.318, 16);
        CHECK(source.speed[0].from == "calibration/vllm-bench-serve-llama3.1-8b-h100-c16.json");
        REQUIRE(source.provenance.size() == 1);
        CHECK(source.provenance[0] == "output_throughput 1843.32 tok/s at max_concurrency 16");
        REQUIRE(source.notes.size() == 1);
        CHECK_THAT(source.notes[0], Contains("median TTFT 58.4 ms and TPOT 8.14 ms are not points"));
        CHECK(source.memory.empty());
    }
    SECTION("at max_concurrency 1: the median TTFT and TPOT are points too, in seconds") {
        const MeasuredSource source = read("calibration/vllm-bench-serve-llama3.1-8b-h100-c1.json", on("H100-SXM5"));
        REQUIRE(source.speed.size() == 3);
        require_point(source.speed[0], "H100-SXM5", 1, MeasuredMetric::output_tokens_per_s, 137.3096, 1);
        require_point(source.speed[1], "H100-SXM5", 1, MeasuredMetric::ttft, 0.0245, 0);
        require_point(source.speed[2], "H100-SXM5", 1, MeasuredMetric::tpot, 0.0071, 0);
        // --count not given: one GPU, said so.
        REQUIRE(source.notes.size() == 1);
        CHECK_THAT(source.notes[0], Contains("1 GPU assumed"));
    }
    SECTION("the workload reader's example file (no max_concurrency recorded in the medians)") {
        const MeasuredSource source = read("calibration/chat-vllm-l40s.json", on("L40S", 1));
        REQUIRE(source.speed.size() == 1);
        require_point(source.speed[0], "L40S", 1, MeasuredMetric::output_tokens_per_s, 702.4, 32);
        CHECK(source.notes.empty());  // it has only mean latencies, which are not read
    }
    SECTION("without --gpu there is no point to write") {
        CHECK_THROWS_WITH(read("calibration/vllm-bench-serve-llama3.1-8b-h100-c1.json", MeasurementContext{}),
                          Contains("pass --gpu ID"));
    }
}

TEST_CASE("calibrate reads SGLang bench_serving JSON lines, one run per line", "[calibrate]") {
    const MeasuredSource source =
        read("calibration/sglang-bench-serving-llama3.1-8b-a100-two-runs.jsonl", on("A100-80GB-SXM4", 1));
    CHECK(source.format == MeasurementFormat::sglang_bench_serving);
    REQUIRE(source.speed.size() == 4);
    // Line 1: max_concurrency 1, so its medians are points.
    require_point(source.speed[0], "A100-80GB-SXM4", 1, MeasuredMetric::output_tokens_per_s, 160.075, 1);
    require_point(source.speed[1], "A100-80GB-SXM4", 1, MeasuredMetric::ttft, 0.0386, 0);
    require_point(source.speed[2], "A100-80GB-SXM4", 1, MeasuredMetric::tpot, 0.0119, 0);
    // Line 2: request_rate Infinity (Python's json.dumps) and max_concurrency null: the
    // workload's batch, and its latencies are notes.
    require_point(source.speed[3], "A100-80GB-SXM4", 1, MeasuredMetric::output_tokens_per_s, 1870.8892, 0);
    CHECK(source.provenance.back() ==
          "line 2: output_throughput 1870.89 tok/s with no max_concurrency recorded (requests sent at once): at the "
          "workload's batch");
    REQUIRE(source.notes.size() == 1);
    CHECK_THAT(source.notes[0], Contains("line 2: median TTFT 312.4 ms and TPOT 19.6 ms are not points"));

    SECTION("--batch stands in for a missing max_concurrency") {
        const MeasuredSource batched =
            read("calibration/sglang-bench-serving-llama3.1-8b-a100-two-runs.jsonl", on("A100-80GB-SXM4", 1, 64));
        REQUIRE(batched.speed.size() == 4);
        CHECK(batched.speed[0].batch == 1);  // the file's max_concurrency wins
        CHECK(batched.speed[3].batch == 64);
    }
    SECTION("a line that is not a result is an error at its line") {
        const std::string text = fixture("calibration/sglang-bench-serving-llama3.1-8b-a100-two-runs.jsonl") +
                                 "{\"backend\": \"sglang\", \"median_e2e_latency_ms\": 1}\n";
        CHECK_THROWS_WITH(read_measurement(text, "runs.jsonl", on("A100-80GB-SXM4")),
                          "runs.jsonl:3:1: expected one bench_serving result (a JSON object with a positive "
                          "output_throughput) per line");
    }
}

TEST_CASE("calibrate reads trtllm-bench throughput reports", "[calibrate]") {
    const MeasuredSource source = read("calibration/trtllm-bench-throughput-llama3.1-8b-h100-tp2.txt", on("H100-SXM5"));
    CHECK(source.format == MeasurementFormat::trtllm_bench);
    // TP Size 2 × PP Size 1 GPUs; 31.8072 concurrent requests on average → batch 32.
    REQUIRE(source.speed.size() == 1);
    require_point(source.speed[0], "H100-SXM5", 2, MeasuredMetric::output_tokens_per_s, 3282.0119, 32);
    CHECK(source.provenance[0] ==
          "Total Output Throughput 3282.01 tokens/sec on TP × PP = 2 GPUs, at 31.8072 concurrent requests on average "
          "(batch 32)");
    REQUIRE(source.notes.size() == 1);
    CHECK_THAT(source.notes[0], Contains("average TTFT 84.3127 ms and TPOT 9.5472 ms are not points"));

    SECTION("--batch 1 makes the streaming averages points") {
        const MeasuredSource alone =
            read("calibration/trtllm-bench-throughput-llama3.1-8b-h100-tp2.txt", on("H100-SXM5", 0, 1));
        REQUIRE(alone.speed.size() == 3);
        require_point(alone.speed[1], "H100-SXM5", 2, MeasuredMetric::ttft, 0.0843127, 0);
        require_point(alone.speed[2], "H100-SXM5", 2, MeasuredMetric::tpot, 0.0095472, 0);
    }
    SECTION("a malformed figure is an error at its line and column") {
        std::string text = fixture("calibration/trtllm-bench-throughput-llama3.1-8b-h100-tp2.txt");
        const std::string figure = "3282.0119";
        text.replace(text.find(figure), figure.size(), "3282,0119");
        CHECK_THROWS_WITH(read_measurement(text, "report.txt", on("H100-SXM5")),
                          "report.txt:31:51: Total Output Throughput (tokens/sec): '3282,0119' is not a number");
    }
}

TEST_CASE("calibrate reads vLLM and SGLang metrics scrapes", "[calibrate]") {
    SECTION("two timestamped vLLM scrapes at one running request: rate, TTFT and TPOT") {
        const MeasuredSource source =
            read("calibration/vllm-metrics-federate-two-scrapes-one-request.txt", on("H100-SXM5", 1));
        CHECK(source.format == MeasurementFormat::prometheus_metrics);
        REQUIRE(source.speed.size() == 3);
        // (23552 - 15360) tokens / 60 s; (4.508 - 2.94) s / 64 requests; (166.9332 - 108.8868) s / 8128 tokens.
        require_point(source.speed[0], "H100-SXM5", 1, MeasuredMetric::output_tokens_per_s, 136.53, 1);
        require_point(source.speed[1], "H100-SXM5", 1, MeasuredMetric::ttft, 0.0245, 0);
        require_point(source.speed[2], "H100-SXM5", 1, MeasuredMetric::tpot, 0.007142, 0);
        CHECK_THAT(source.notes.at(0), Contains("KV cache 0.21 % used on average"));
        CHECK_THAT(source.notes.at(1), Contains("1.07 requests/s finished"));
    }
    SECTION("one SGLang scrape at 8 running requests: no rate, and the latencies are notes") {
        const MeasuredSource source = read("calibration/sglang-metrics-one-scrape.txt", on("H100-SXM5", 1));
        CHECK(source.speed.empty());
        CHECK_THAT(source.notes.at(0), Contains("no output tokens/s: the generated-token counter needs two scrapes"));
        CHECK_THAT(source.notes.at(1),
                   Contains("mean TTFT 62 ms and TPOT 11.179 ms are not points: running-requests gauge 8 on average"));
        CHECK_THAT(source.notes.at(2), Contains("KV cache 4 % used"));
    }
    SECTION("--batch 1 says the server ran one request at a time: the lifetime means are points") {
        const MeasuredSource source = read("calibration/sglang-metrics-one-scrape.txt", on("H100-SXM5", 1, 1));
        REQUIRE(source.speed.size() == 2);
        require_point(source.speed[0], "H100-SXM5", 1, MeasuredMetric::ttft, 0.062, 0);
        require_point(source.speed[1], "H100-SXM5", 1, MeasuredMetric::tpot, 0.011179, 0);
    }
}

TEST_CASE("calibrate reads GPU telemetry into notes, never points", "[calibrate]") {
    const MeasuredSource source = read(
        "telemetry/derived-nvidia-smi-query-gpu-csv-header-units-H100-vllm-25pct-fb-92pct-40s.txt", on("H100-SXM5"));
    CHECK(source.format == MeasurementFormat::gpu_telemetry);
    CHECK(source.speed.empty());
    CHECK(source.memory.empty());
    REQUIRE(source.provenance.size() == 1);
    CHECK_THAT(source.provenance[0], Contains("nvidia-smi-query"));
    CHECK_THAT(source.notes.at(0), Contains("GPU utilisation"));
}

TEST_CASE("calibrate refuses a file in no format it reads, naming the formats", "[calibrate]") {
    CHECK_THROWS_WITH(read("calibration/not-a-measurement-access-log.txt", on("H100-SXM5")),
                      Contains("calibration/not-a-measurement-access-log.txt: not a recognised measurement: it "
                               "starts '192.168.1.20 - - [03/Nov/2025:14:02:11 +0000] \"GET /v1/model...'; "
                               "gpusel calibrate reads vllm-bench-serve"));
    CHECK_THROWS_WITH(read_measurement("", "empty.txt", on("H100-SXM5")),
                      Contains("empty.txt: not a recognised measurement: the file is empty"));
}

TEST_CASE("the calibration file reads back through --calibration with its points and origins", "[calibrate]") {
    const std::vector<MeasuredSource> sources = {
        read("calibration/vllm-bench-serve-llama3.1-8b-h100-c1.json", on("H100-SXM5", 1)),
        read("telemetry/derived-nvidia-smi-query-gpu-csv-header-units-H100-vllm-25pct-fb-92pct-40s.txt",
             on("H100-SXM5"))};
    const std::string yaml = calibration_file_yaml(sources);
    CHECK_THAT(
        yaml,
        Contains("    - {gpu: H100-SXM5, count: 1, metric: output_tokens_per_s, measured: 137.3096, "
                 "batch: 1, kind: inference, from: \"calibration/vllm-bench-serve-llama3.1-8b-h100-c1.json\"}\n"));
    CHECK_THAT(yaml, Contains("metric: ttft, measured: 0.0245s, kind: inference, from:"));
    CHECK_THAT(yaml, Contains("# Read, but no calibration points:\n"));

    const std::filesystem::path file = std::filesystem::temp_directory_path() / "gpusel-test-calibrate.yaml";
    {
        std::ofstream out(file, std::ios::binary);
        out << yaml;
    }
    const LoadContext context{&test::catalog(), &test::models()};
    Workload workload = load_workload_text(chat_workload, "chat.yaml", context);
    append_calibration_file(file.string(), workload, context);
    std::filesystem::remove(file);
    REQUIRE(workload.calibration.speed.size() == 3);
    require_point(workload.calibration.speed[0], "H100-SXM5", 1, MeasuredMetric::output_tokens_per_s, 137.3096, 1);
    require_point(workload.calibration.speed[1], "H100-SXM5", 1, MeasuredMetric::ttft, 0.0245, 0);
    require_point(workload.calibration.speed[2], "H100-SXM5", 1, MeasuredMetric::tpot, 0.0071, 0);
    CHECK(workload.calibration.speed[2].from == "calibration/vllm-bench-serve-llama3.1-8b-h100-c1.json");
    CHECK(workload.calibration.speed[2].where.file == file.string());
}

TEST_CASE("errors in a calibration file name the file, line and column", "[calibrate]") {
    const std::filesystem::path file = std::filesystem::temp_directory_path() / "gpusel-test-calibrate-bad.yaml";
    {
        std::ofstream out(file, std::ios::binary);
        out << "calibration:\n  speed:\n    - {gpu: H100-SXM6, metric: tpot, measured: 7ms}\n";
    }
    const LoadContext context{&test::catalog(), &test::models()};
    Workload workload = load_workload_text(chat_workload, "chat.yaml", context);
    CHECK_THROWS_WITH(append_calibration_file(file.string(), workload, context),
                      Contains(file.string() + ":3:13: calibration.speed[0].gpu: unknown"));
    CHECK(workload.calibration.speed.empty());  // nothing appended from a bad file
    std::filesystem::remove(file);
}

TEST_CASE("a vllm_benchmark path in a calibration file is relative to that file", "[calibrate]") {
    const std::filesystem::path folder = std::filesystem::temp_directory_path() / "gpusel-test-calibrate-relative";
    std::filesystem::create_directories(folder / "runs");
    std::filesystem::copy_file(test::source_path("tests/data/calibration/vllm-bench-serve-llama3.1-8b-h100-c16.json"),
                               folder / "runs" / "c16.json", std::filesystem::copy_options::overwrite_existing);
    {
        std::ofstream out(folder / "measured.yaml", std::ios::binary);
        out << "calibration:\n  speed:\n    - {gpu: H100-SXM5, vllm_benchmark: runs/c16.json}\n";
    }
    const LoadContext context{&test::catalog(), &test::models()};
    Workload workload = load_workload_text(chat_workload, "chat.yaml", context);
    append_calibration_file((folder / "measured.yaml").string(), workload, context);
    std::filesystem::remove_all(folder);
    REQUIRE(workload.calibration.speed.size() == 1);
    require_point(workload.calibration.speed[0], "H100-SXM5", 1, MeasuredMetric::output_tokens_per_s, 1843.318, 16);
    CHECK(workload.calibration.speed[0].from == (folder / "runs" / "c16.json").string());
}

TEST_CASE("a training log's point says it measured training and never calibrates a serving workload", "[calibrate]") {
    // A Megatron log's samples/s is a training rate; read as an inference request rate it set a
    // stack factor of 0.33 on a serving plan.
    const MeasuredSource training = read("calibration/logs/megatron.log", on("H100-SXM5", 8));
    REQUIRE(training.speed.size() == 1);
    CHECK(training.speed[0].metric == MeasuredMetric::samples_per_s);
    CHECK(training.speed[0].run == SpeedCalibrationPoint::Run::training);
    CHECK_THAT(calibration_file_yaml({training}), Contains("kind: training, from:"));
    CHECK(read("calibration/vllm-bench-serve-llama3.1-8b-h100-c16.json", on("H100-SXM5")).speed[0].run ==
          SpeedCalibrationPoint::Run::inference);

    const LoadContext context{&test::catalog(), &test::models()};
    const Workload typed = load_workload_text(std::string(chat_workload) +
                                                  "calibration:\n  speed:\n    - {gpu: H100-SXM5, count: 8, metric: "
                                                  "samples_per_s, measured: 51.9, kind: training}\n",
                                              "chat.yaml", context);
    REQUIRE(typed.calibration.speed.size() == 1);
    CHECK(typed.calibration.speed[0].run == SpeedCalibrationPoint::Run::training);
    CHECK_THROWS_WITH(calibrate_speed(typed, test::catalog(), test::efficiency()),
                      Contains("chat.yaml:") && Contains("a training measurement (kind: training) cannot calibrate "
                                                         "the inference workload chat"));
    // Unstated, samples_per_s on a serving workload is its request rate, as before.
    const Workload unstated = load_workload_text(std::string(chat_workload) +
                                                     "calibration:\n  speed:\n    - {gpu: H100-SXM5, metric: "
                                                     "samples_per_s, measured: 2}\n",
                                                 "chat.yaml", context);
    CHECK(calibrate_speed(unstated, test::catalog(), test::efficiency()).applied);
}
