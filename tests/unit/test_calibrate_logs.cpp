// gpusel calibrate's training-log, memory-report and vLLM start-up readers over fixtures in their
// real formats (tests/data/calibration/logs, SOURCES.md says which are real captures and which
// are written with typed values), and over copies broken on purpose: each error names the file,
// the line and column and the field.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/error.hpp"
#include "calibrate/log_readers.hpp"
#include "inputs/layout.hpp"
#include "inputs/workload.hpp"
#include "memory/memory.hpp"
#include "support/test_support.hpp"

using namespace gpusel;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/calibration/logs/" + name, std::ios::binary);
    REQUIRE(in);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
    return text;
}

// The first diagnostic of the InputError `read` throws, as printed.
template <typename Read>
std::string error_of(Read&& read) {
    try {
        read();
    } catch (const InputError& error) {
        REQUIRE(!error.diagnostics().empty());
        return format_diagnostic(error.diagnostics().front());
    }
    FAIL("no InputError");
    return "";
}

MeasurementContext on(const std::string& gpu, int count = 0, int batch = 0) {
    MeasurementContext context;
    context.gpu = gpu;
    context.count = count;
    context.batch = batch;
    return context;
}

constexpr double gib = 1073741824.0;

}  // namespace

TEST_CASE("trainer_state.json: the final log_history entry's train_samples_per_second", "[calibrate-logs]") {
    const std::string text = fixture("trainer_state.json");
    CHECK(is_hf_trainer_state(text));
    CHECK_FALSE(is_megatron_log(text));
    CHECK_FALSE(is_vllm_startup_log(text));
    const MeasuredSource source = read_hf_trainer_state(text, "trainer_state.json", on("A100-80GB-SXM4"));
    CHECK(source.format == MeasurementFormat::hf_trainer_state);
    CHECK(source.gpu == "A100-80GB-SXM4");
    REQUIRE(source.speed.size() == 1);
    const SpeedCalibrationPoint& point = source.speed.front();
    CHECK(point.metric == MeasuredMetric::samples_per_s);
    CHECK(point.measured == 12.4);
    CHECK(point.count == 1);
    CHECK(point.batch == 8);  // train_batch_size
    CHECK(point.gpu == "A100-80GB-SXM4");
    CHECK(point.from == "trainer_state.json");
    CHECK(source.memory.empty());
    REQUIRE(source.provenance.size() == 1);
    CHECK(source.provenance.front() ==
          "train_samples_per_second 12.4 (trainer_state.json log_history, final, train_runtime 483.871 s, step 750)");

    // --count and --batch override what the file says or assumes.
    const MeasuredSource given = read_hf_trainer_state(text, "trainer_state.json", on("A100-80GB-SXM4", 4, 16));
    CHECK(given.speed.front().count == 4);
    CHECK(given.speed.front().batch == 16);
    CHECK(given.speed.front().measured == 12.4);
}

TEST_CASE("Trainer log lines: the last summary dict, floats or strings", "[calibrate-logs]") {
    const std::string floats = fixture("hf-trainer-log.txt");
    CHECK(is_hf_trainer_state(floats));
    const MeasuredSource a = read_hf_trainer_state(floats, "train.log", on("L40S", 2, 8));
    REQUIRE(a.speed.size() == 1);
    CHECK(a.speed.front().measured == 16.596);
    CHECK(a.speed.front().count == 2);
    CHECK(a.speed.front().batch == 8);
    CHECK(a.provenance.front() == "train_samples_per_second 16.596 (Trainer log line 5, train_runtime 96.4127 s)");

    const std::string strings = fixture("hf-trainer-log-strings.txt");
    CHECK(is_hf_trainer_state(strings));
    const MeasuredSource b = read_hf_trainer_state(strings, "train.log", on("L40S"));
    REQUIRE(b.speed.size() == 1);
    CHECK(b.speed.front().measured == 2.376);
    CHECK(b.speed.front().count == 1);
    CHECK(b.speed.front().batch == 0);  // the workload's
}

TEST_CASE("HF Trainer: malformed input names the file, line and field", "[calibrate-logs]") {
    const std::string state = fixture("trainer_state.json");
    CHECK(error_of([&] {
              read_hf_trainer_state(
                  replaced(state, "\"train_samples_per_second\": 12.4", "\"train_samples_per_second\": \"fast\""),
                  "s.json", on("L40S"));
          }) == "s.json:39:7: train_samples_per_second: expected a positive number, got \"fast\"");
    CHECK(error_of([&] {
              read_hf_trainer_state(replaced(state, "\"train_samples_per_second\": 12.4,", ""), "s.json", on("L40S"));
          }) ==
          "s.json:11:3: log_history: no entry has train_samples_per_second (the Trainer logs it when "
          "training ends; 4 step entries, none final)");
    // A missing comma: nlohmann/json stops at the end of the token after it ("eval_steps").
    CHECK(error_of([&] {
              read_hf_trainer_state(replaced(state, "\"epoch\": 3.0,", "\"epoch\": 3.0"), "s.json", on("L40S"));
          }) == "s.json:6:14: trainer_state: not valid JSON (expected a Hugging Face trainer_state.json)");
    const std::string lines = fixture("hf-trainer-log.txt");
    CHECK(error_of([&] {
              read_hf_trainer_state(
                  replaced(lines, "'train_samples_per_second': 16.596", "'train_samples_per_second': -1"), "train.log",
                  on("L40S"));
          }) == "train.log:5:56: train_samples_per_second: expected a positive number, got '-1, 'train_steps'");
    CHECK(error_of([&] { read_hf_trainer_state(lines, "train.log", MeasurementContext{}); }) ==
          "train.log: --gpu: a Hugging Face Trainer state or log does not say which GPU it ran on: give --gpu (a "
          "catalog id, e.g. --gpu H100-SXM5)");
}

TEST_CASE("Megatron-LM: global batch over the median iteration time after the warm-up interval", "[calibrate-logs]") {
    const std::string text = fixture("megatron.log");
    CHECK(is_megatron_log(text));
    CHECK_FALSE(is_hf_trainer_state(text));
    CHECK_FALSE(is_lightning_log(text));
    const MeasuredSource source = read_megatron_log(text, "megatron.log", on("H100-SXM5"));
    REQUIRE(source.speed.size() == 1);
    const SpeedCalibrationPoint& point = source.speed.front();
    CHECK(point.metric == MeasuredMetric::samples_per_s);
    CHECK(point.count == 16);  // "using world size: 16"
    // Intervals after the first: 9871.4, 9803.9, 9846.2, 9902.5 ms; the median of the four rates is
    // the mean of the middle two, 512/9.8714 = 51.867 and 512/9.8462 = 52.000 samples/s.
    CHECK(point.measured == Approx((512 / 9.8714 + 512 / 9.8462) / 2).epsilon(1e-12));
    CHECK(point.measured == Approx(51.9334).epsilon(1e-5));
    CHECK(source.provenance.front() ==
          "samples_per_s 51.93 (Megatron-LM log: global batch size / elapsed time per iteration, median of 4 logged "
          "intervals up to iteration 50, the first (to iteration 10) skipped as warm-up; 16 GPUs)");
    REQUIRE(source.notes.size() == 2);
    CHECK(source.notes[0] ==
          "throughput per GPU 474.7 TFLOP/s (median, Megatron-LM's own FLOP count): read, not a calibration metric");
    CHECK(source.notes[1] ==
          "training tokens/s 212719 = samples/s × seq_length 4096 (argument dump): the same "
          "measurement, not a second point");

    const MeasuredSource counted = read_megatron_log(text, "megatron.log", on("H100-SXM5", 8));
    CHECK(counted.speed.front().count == 8);
    CHECK(counted.notes.front() == "--count 8 used; the log's world size is 16");
}

TEST_CASE("Megatron-LM: malformed lines and a log without its world size", "[calibrate-logs]") {
    const std::string text = fixture("megatron.log");
    CHECK(error_of([&] {
              read_megatron_log(
                  replaced(text, "elapsed time per iteration (ms): 9803.9", "elapsed time per iteration (ms): nan"),
                  "m.log", on("H100-SXM5"));
          }) == "m.log:15:120: elapsed time per iteration (ms): expected a positive number, got 'nan | throughput'");
    CHECK(error_of([&] {
              read_megatron_log(replaced(text, "global batch size:   512 | lm loss: 8.39", "lm loss: 8.39"), "m.log",
                                on("H100-SXM5"));
          }) ==
          "m.log:15:1: global batch size: missing on this iteration line (Megatron-LM prints it on every "
          "training_log line)");
    std::string without_world = replaced(text, "using world size: 16", "using");
    without_world = replaced(without_world, "world_size ...................................... 16", "");
    CHECK(error_of([&] { read_megatron_log(without_world, "m.log", on("H100-SXM5")); }) ==
          "m.log: --count: the Megatron-LM log does not print its world size (no argument dump): give --count, the "
          "GPUs of the job");
    CHECK(read_megatron_log(without_world, "m.log", on("H100-SXM5", 16)).speed.front().count == 16);
}

TEST_CASE("torchtune: tokens per second per GPU after the first step, times the GPUs", "[calibrate-logs]") {
    const std::string text = fixture("torchtune.log");
    CHECK(is_lightning_log(text));
    CHECK_FALSE(is_torch_max_memory(text));
    const MeasuredSource source = read_lightning_log(text, "tune.log", on("A100-80GB-SXM4", 2, 4));
    CHECK(source.format == MeasurementFormat::lightning_log);
    REQUIRE(source.speed.size() == 1);
    const SpeedCalibrationPoint& point = source.speed.front();
    CHECK(point.metric == MeasuredMetric::training_tokens_per_s);
    // Steps 2–5: 2541.8, 2503.2, 2566.9, 2529.5 → median (2529.5 + 2541.8) / 2 = 2535.65, × 2 GPUs.
    CHECK(point.measured == Approx(5071.3).epsilon(1e-12));
    CHECK(point.count == 2);
    CHECK(point.batch == 4);
    REQUIRE(source.memory.size() == 1);
    CHECK(source.memory.front().micro_batch == 4);
    CHECK(source.memory.front().peak_bytes == Approx(20.63 * gib).epsilon(1e-12));
    REQUIRE(source.provenance.size() == 2);
    CHECK(source.provenance[0] ==
          "training_tokens_per_s 5071.3 = tokens_per_second_per_gpu 2535.7 × 2 GPUs "
          "(torchtune log: median of 4 steps up to step 5, step 1 skipped as warm-up)");
    CHECK(source.provenance[1] == "peak 20.63 GiB at micro-batch 4 (torchtune peak_memory_alloc, the largest, line 9)");

    // Without --batch the peak is read but gives no point.
    const MeasuredSource unbatched = read_lightning_log(text, "tune.log", on("A100-80GB-SXM4"));
    CHECK(unbatched.memory.empty());
    CHECK(unbatched.speed.front().measured == Approx(2535.65).epsilon(1e-12));
    CHECK(unbatched.speed.front().count == 1);

    CHECK(error_of([&] {
              read_lightning_log(replaced(text, "tokens_per_second_per_gpu:2503.2", "tokens_per_second_per_gpu:x"),
                                 "tune.log", on("A100-80GB-SXM4"));
          }) == "tune.log:8:57: tokens_per_second_per_gpu: expected a positive number, got 'x peak_memory_ac'");
}

TEST_CASE("Lightning: the epoch bar's it/s times --batch, and no bar is an error", "[calibrate-logs]") {
    const std::string text = fixture("lightning.log");
    CHECK(is_lightning_log(text));
    CHECK_FALSE(is_hf_trainer_state(text));
    const MeasuredSource source = read_lightning_log(text, "fit.log", on("RTX-4090", 1, 32));
    REQUIRE(source.speed.size() == 1);
    const SpeedCalibrationPoint& point = source.speed.front();
    CHECK(point.metric == MeasuredMetric::samples_per_s);
    // Epochs 1 and 2 end at 34.51 and 34.37 it/s: median 34.44 × 32 samples.
    CHECK(point.measured == Approx(34.44 * 32).epsilon(1e-12));
    CHECK(point.batch == 32);
    CHECK(source.provenance.front() ==
          "samples_per_s 1102.08 = 34.44 it/s × batch 32 × 1 GPU (Lightning progress bar: median of the last rate of "
          "2 epochs, epoch 0 skipped as warm-up)");

    CHECK(error_of([&] { read_lightning_log(text, "fit.log", on("RTX-4090")); }) ==
          "fit.log: --batch: a Lightning progress bar counts batches per second per process; the samples per batch "
          "are not in the log: give --batch");
    const std::string no_speed = fixture("lightning-no-speed.log");
    CHECK(is_lightning_log(no_speed));
    CHECK(error_of([&] { read_lightning_log(no_speed, "fit.log", on("RTX-4090", 1, 32)); }) ==
          "fit.log: it/s: the PyTorch Lightning log has no progress bar with a speed (Epoch N: …it/s); it states no "
          "speed to calibrate with (log samples/s with Lightning's ThroughputMonitor, or give a typed point)");
}

TEST_CASE("torch.cuda.memory_summary(): the Allocated memory row's peak (real capture)", "[calibrate-logs]") {
    const std::string text = fixture("torch-cuda-memory-summary.txt");
    CHECK(is_torch_memory_summary(text));
    CHECK_FALSE(is_torch_max_memory(text));
    CHECK_FALSE(is_lightning_log(text));
    const MeasuredSource source = read_torch_memory_summary(text, "summary.txt", on("H100-SXM5", 1, 8));
    REQUIRE(source.memory.size() == 1);
    CHECK(source.memory.front().gpu == "H100-SXM5");
    CHECK(source.memory.front().micro_batch == 8);
    CHECK(source.memory.front().peak_bytes == 192833.0 * 1024);  // "192833 KiB"
    CHECK(source.speed.empty());
    CHECK(source.provenance.front() ==
          "peak 197460992 bytes at micro-batch 8 (torch.cuda.memory_summary device ID 0, "
          "Allocated memory Peak Usage '192833 KiB', line 8)");
    CHECK(source.notes[1] ==
          "GPU reserved memory peak '235520 KiB' (the caching allocator's, allocated + cached free "
          "blocks): read, not used");

    CHECK(error_of([&] { read_torch_memory_summary(text, "summary.txt", on("H100-SXM5")); }) ==
          "summary.txt: --batch: a memory point is the peak at a micro-batch, and the summary does not say the batch "
          "it ran: give --batch");
    CHECK(error_of([&] {
              read_torch_memory_summary(replaced(text, "| 192833 KiB |", "|    lots    |"), "summary.txt",
                                        on("H100-SXM5", 1, 8));
          }) == "summary.txt:8:39: Allocated memory (Peak Usage): expected a size such as '192833 KiB', got 'lots'");
    CHECK(error_of([&] {
              read_torch_memory_summary(replaced(text, "| 192833 KiB |", "| 192833 KB  |"), "summary.txt",
                                        on("H100-SXM5", 1, 8));
          }) ==
          "summary.txt:8:39: Allocated memory (Peak Usage): unknown unit 'KB' (expected B, KiB, MiB, GiB or TiB)");
}

TEST_CASE("max_memory_allocated printouts: the largest allocated figure, reserved noted", "[calibrate-logs]") {
    const std::string text = fixture("torch-max-memory.txt");
    CHECK(is_torch_max_memory(text));
    CHECK_FALSE(is_torch_memory_summary(text));
    const MeasuredSource source = read_torch_max_memory(text, "peak.txt", on("A100-80GB-SXM4", 1, 2));
    REQUIRE(source.memory.size() == 1);
    // 35.2 GiB = 37795712204.8 B < 37812345678 B.
    CHECK(source.memory.front().peak_bytes == 37812345678.0);
    // 38.0 GiB and 40802189312 B are the same reserved peak: the first is kept.
    CHECK(source.memory.front().micro_batch == 2);
    CHECK(source.provenance.front() ==
          "peak 37812345678 bytes at micro-batch 2 (max_memory_allocated 37812345678 B, line 5; the largest of 2)");
    CHECK(source.notes.front() ==
          "max_memory_reserved 38 GiB (line 3): the caching allocator's, read, not used "
          "(allocated is what the memory model predicts)");

    // Only reserved: used, and said to overstate.
    const MeasuredSource reserved =
        read_torch_max_memory("max_memory_reserved: 38.0 GiB\n", "peak.txt", on("A100-80GB-SXM4", 1, 2));
    CHECK(reserved.memory.front().peak_bytes == Approx(38.0 * gib).epsilon(1e-12));
    CHECK(reserved.notes.front() ==
          "only max_memory_reserved printed: the point includes the caching allocator's "
          "free blocks and overstates the allocated peak");

    CHECK(error_of([&] {
              read_torch_max_memory("step 1\nmax_memory_allocated: 35.2 parsecs\n", "peak.txt",
                                    on("A100-80GB-SXM4", 1, 2));
          }) ==
          "peak.txt:2:23: max_memory_allocated: unknown unit 'parsecs' (expected B, KiB, MiB, GiB, KB, MB or GB)");
    CHECK(error_of(
              [&] { read_torch_max_memory("max_memory_allocated: 35.2\n", "peak.txt", on("A100-80GB-SXM4", 1, 2)); }) ==
          "peak.txt:1:23: max_memory_allocated: 35.2 has no unit and is too small for a byte count: add the unit "
          "(GiB, MiB)");
    CHECK(error_of([&] { read_torch_max_memory(text, "peak.txt", on("A100-80GB-SXM4")); }) ==
          "peak.txt: --batch: a memory point is the peak at a micro-batch, and the printout does not say the batch it "
          "ran: give --batch");
}

TEST_CASE("vLLM V1 start-up log: weights, activation peak, non-torch and KV tokens (reference case D-24)",
          "[calibrate-logs]") {
    const std::string text = fixture("vllm-v0.19-llama-3.1-8b-h100-tp1.log");
    CHECK(is_vllm_startup_log(text));
    CHECK_FALSE(is_torch_max_memory(text));
    CHECK_FALSE(is_hf_trainer_state(text));
    const ServingMemoryCalibrationPoint point = vllm_startup_serving_memory(text, "vllm.log", on("H100-SXM5"));
    CHECK(point.gpu == "H100-SXM5");
    CHECK(point.tensor_parallel == 1);
    CHECK(point.weights_bytes == Approx(14.99 * gib).epsilon(1e-12));
    CHECK(point.activation_peak_bytes == Approx(1.89 * gib).epsilon(1e-12));
    CHECK(point.non_torch_bytes == Approx(0.25 * gib).epsilon(1e-12));
    CHECK(point.kv_cache_tokens == 476016);
    CHECK(point.from == "vllm.log");

    const MeasuredSource source = read_vllm_startup_log(text, "vllm.log", on("H100-SXM5"));
    CHECK(source.format == MeasurementFormat::vllm_startup_log);
    CHECK(source.speed.empty());
    CHECK(source.memory.empty());
    REQUIRE(source.provenance.size() == 4);
    CHECK(source.provenance[0] == "weights 14.99 GiB (vLLM start-up log line 4: 'Model loading took')");
    CHECK(source.provenance[1] == "activation peak 1.89 GiB (vLLM start-up log line 6: 'torch peak memory increase')");
    CHECK(source.provenance[2] ==
          "non-torch memory 0.25 GiB (vLLM start-up log line 6: 'non-torch forward increase memory')");
    CHECK(source.provenance[3] == "KV cache 476016 tokens (vLLM start-up log line 8: 'GPU KV cache size')");
    CHECK(source.notes[0] ==
          "KV cache memory 58.11 GiB (line 7): follows the run's gpu_memory_utilization, read, "
          "not a calibration term");
    CHECK(source.notes[1] == "'Maximum concurrency for 8,192 tokens per request: 58.11x': at that run's max_model_len");
}

TEST_CASE("vLLM V0 start-up logs: the profiling line of two workers, and a log with weights and blocks only",
          "[calibrate-logs]") {
    const std::string v0 = fixture("vllm-v0-gemma-3-27b-awq-mi50-tp2.log");
    CHECK(is_vllm_startup_log(v0));
    const ServingMemoryCalibrationPoint tp2 = vllm_startup_serving_memory(v0, "v0.log", on("MI50-32GB"));
    CHECK(tp2.tensor_parallel == 2);  // tensor_parallel_size=2
    CHECK(tp2.weights_bytes == Approx(11.11 * gib).epsilon(1e-12));
    CHECK(tp2.activation_peak_bytes == Approx(2.87 * gib).epsilon(1e-12));
    CHECK(tp2.non_torch_bytes == Approx(0.73 * gib).epsilon(1e-12));
    CHECK(tp2.kv_cache_tokens == 0);  // V0 prints no tokens
    const MeasuredSource source = read_vllm_startup_log(v0, "v0.log", on("MI50-32GB"));
    CHECK(source.provenance[0] ==
          "weights 11.11 GiB (vLLM start-up log line 7: 'model weights take'; printed 2 times, the last used)");

    const std::string granite = fixture("vllm-v0.7.3-granite-3b-l40s.log");
    CHECK(is_vllm_startup_log(granite));
    const MeasuredSource l40s = read_vllm_startup_log(granite, "g.log", on("L40S"));
    CHECK(l40s.provenance.size() == 1);
    CHECK(l40s.provenance[0] == "weights 6.1501 GiB (vLLM start-up log line 1: 'Loading model weights took')");
    const ServingMemoryCalibrationPoint weights_only = vllm_startup_serving_memory(granite, "g.log", on("L40S"));
    CHECK(weights_only.weights_bytes == Approx(6.1501 * gib).epsilon(1e-12));  // "GB" is bytes / 2^30
    CHECK(weights_only.activation_peak_bytes == 0);
    CHECK(weights_only.kv_cache_tokens == 0);
    CHECK(weights_only.tensor_parallel == 1);
    CHECK(l40s.notes[0] ==
          "tensor_parallel 1 assumed (the log has no engine config line with tensor_parallel_size): "
          "give --count");
    CHECK(l40s.notes[2] == "33660 GPU blocks (line 2): tokens not taken, the log does not print the block size");
}

TEST_CASE("vLLM start-up log: malformed figures and a log without memory figures", "[calibrate-logs]") {
    const std::string text = fixture("vllm-v0.19-llama-3.1-8b-h100-tp1.log");
    CHECK(error_of([&] {
              vllm_startup_serving_memory(
                  replaced(text, "torch peak memory increase: 1.89GiB", "torch peak memory increase: ?GiB"), "vllm.log",
                  on("H100-SXM5"));
          }) == "vllm.log:6:170: torch peak memory increase: expected a size in GiB after the label");
    CHECK(error_of([&] {
              vllm_startup_serving_memory(
                  replaced(text, "GPU KV cache size: 476,016 tokens", "GPU KV cache size: 476.5 tokens"), "vllm.log",
                  on("H100-SXM5"));
          }) == "vllm.log:8:90: GPU KV cache size: expected a whole number");
    CHECK(error_of([&] {
              vllm_startup_serving_memory("INFO GPU KV cache size: 1,000 tokens\n", "vllm.log", on("H100-SXM5"));
          }) ==
          "vllm.log: vllm start-up: no weights, activation peak or non-torch figure in the log (looked for 'Model "
          "loading took', 'model weights take', 'torch peak memory increase', 'non_torch_memory takes'; the last "
          "two are DEBUG lines in vLLM V1: VLLM_LOGGING_LEVEL=DEBUG)");
    CHECK(error_of([&] { vllm_startup_serving_memory(text, "vllm.log", MeasurementContext{}); }) ==
          "vllm.log: --gpu: a vLLM start-up log does not say which GPU it ran on: give --gpu (a catalog id, e.g. "
          "--gpu H100-SXM5)");
}

namespace {

// Llama-3.1-8B served by vLLM, with what the D-24 start-up log measured on one H100 (TP1).
const char* const serving_workload = R"(format: 1
name: serve
kind: inference
model: {preset: llama-3.1-8b}
precision: bf16
weights: bf16
inference:
  input_tokens: 2048
  output_tokens: 512
)";

const char* const measured_block = R"(calibration:
  serving_memory:
    - {gpu: H100-SXM5, tensor_parallel: 1, weights: 14.99GiB, activation_peak: 1.89GiB, non_torch: 0.25GiB,
       kv_cache_tokens: 476016, from: vllm.log}
)";

Workload serving_load(const std::string& text) {
    const LoadContext context{&test::catalog(), &test::models()};
    return load_workload_text(text, "w.yaml", context);
}

bool has_note(const std::vector<std::string>& notes, const std::string& note) {
    return std::find(notes.begin(), notes.end(), note) != notes.end();
}

}  // namespace

TEST_CASE("calibration.serving_memory: read from the workload, and errors at the field", "[calibrate-logs]") {
    const Workload workload = serving_load(std::string(serving_workload) + measured_block);
    REQUIRE(workload.calibration.serving_memory.size() == 1);
    const ServingMemoryCalibrationPoint& point = workload.calibration.serving_memory.front();
    CHECK(point.gpu == "H100-SXM5");
    CHECK(point.tensor_parallel == 1);
    CHECK(point.weights_bytes == Approx(14.99 * gib).epsilon(1e-12));
    CHECK(point.activation_peak_bytes == Approx(1.89 * gib).epsilon(1e-12));
    CHECK(point.non_torch_bytes == Approx(0.25 * gib).epsilon(1e-12));
    CHECK(point.kv_cache_tokens == 476016);
    CHECK(point.from == "vllm.log");

    CHECK(error_of([&] {
              serving_load(std::string(serving_workload) +
                           "calibration:\n  serving_memory:\n    - {gpu: H100-SXM5, tensor_parallel: 2}\n");
          }) ==
          "w.yaml:12:7: calibration.serving_memory[0].weights: a serving_memory point needs at least one of "
          "weights, activation_peak, non_torch");
    CHECK(error_of([&] {
              serving_load(
                  std::string(serving_workload) +
                  "calibration:\n  serving_memory:\n    - {gpu: H100-SXM5, weights: 15GiB, kv_cache_tokens: 1.5}\n");
          }) == "w.yaml:12:57: calibration.serving_memory[0].kv_cache_tokens: expected a whole number of tokens");
}

TEST_CASE("the serving memory estimate takes measured start-up terms on the same GPU and tensor-parallel size",
          "[calibrate-logs][memory][serving]") {
    const Workload plain = serving_load(serving_workload);
    const Workload measured = serving_load(std::string(serving_workload) + measured_block);
    const GpuSpec& h100 = *test::catalog().find("H100-SXM5");
    const ServingMemory before = *serving_memory(plain, h100, Layout{});
    const ServingMemory after = *serving_memory(measured, h100, Layout{});
    CHECK(before.measured.empty());
    CHECK(after.weights_bytes == Approx(14.99 * gib).epsilon(1e-12));
    CHECK(after.activation_peak_bytes == Approx(1.89 * gib).epsilon(1e-12));
    CHECK(after.non_torch_bytes == Approx(0.25 * gib).epsilon(1e-12));
    // The estimate differs from the measurement (else the test shows nothing): 14.96 and 1.88 GiB.
    CHECK(before.weights_bytes != after.weights_bytes);
    CHECK(before.activation_peak_bytes != after.activation_peak_bytes);
    // The KV pool is what the budget leaves after the measured terms, in whole blocks of 16 tokens.
    const double pool = after.budget_bytes - (14.99 + 1.89 + 0.25) * gib;
    CHECK(after.kv_cache_blocks == static_cast<long long>(pool / (after.kv_bytes_per_token * 16)));
    REQUIRE(after.measured.size() == 4);
    // 14.99 GiB = 16.10 GB, 1.89 GiB = 2.03 GB, 0.25 GiB = 0.27 GB.
    CHECK(after.measured[0] == fmt::format("weights 16.10 GB measured (vllm.log: 14.99 GiB), estimate was {:.2f} GB",
                                           before.weights_bytes / 1e9));
    CHECK(after.measured[1] ==
          fmt::format("activation peak 2.03 GB measured (vllm.log: 1.89 GiB), estimate was {:.2f} GB",
                      before.activation_peak_bytes / 1e9));
    CHECK(after.measured[2] == "non-torch memory 0.27 GB measured (vllm.log: 0.25 GiB), estimate was 0.27 GB");
    CHECK(after.measured[3] ==
          fmt::format("KV cache 476016 tokens measured (vllm.log, at that run's gpu_memory_utilization), estimate {} "
                      "tokens",
                      after.kv_cache_tokens));
    const MemoryEstimate estimate = estimate_memory(measured, h100, MemoryQuery{});
    CHECK(has_note(estimate.notes, after.measured[1]));
    CHECK(estimate.per_gpu.weights_bytes == Approx(14.99 * gib).epsilon(1e-12));

    // Another tensor-parallel size, another GPU or pipeline stages keep the estimate.
    Layout tp2;
    tp2.tensor_parallel = 2;
    CHECK(serving_memory(measured, h100, tp2)->measured.empty());
    CHECK(serving_memory(measured, *test::catalog().find("A100-80GB-SXM4"), Layout{})->measured.empty());
    Layout pp2;
    pp2.pipeline_parallel = 2;
    CHECK(serving_memory(measured, h100, pp2)->measured.empty());
}

TEST_CASE("a vLLM start-up log read into a serving memory point feeds the same estimate", "[calibrate-logs]") {
    const ServingMemoryCalibrationPoint point =
        vllm_startup_serving_memory(fixture("vllm-v0.19-llama-3.1-8b-h100-tp1.log"), "vllm.log", on("H100-SXM5"));
    Workload from_log = serving_load(serving_workload);
    from_log.calibration.serving_memory.push_back(point);
    const Workload typed = serving_load(std::string(serving_workload) + measured_block);
    const GpuSpec& h100 = *test::catalog().find("H100-SXM5");
    CHECK(serving_memory(from_log, h100, Layout{})->measured == serving_memory(typed, h100, Layout{})->measured);
}

TEST_CASE("the log readers return or throw InputError on any cut or corrupted fixture", "[calibrate-logs]") {
    using Reader = MeasuredSource (*)(std::string_view, const std::string&, const MeasurementContext&);
    const Reader readers[] = {read_hf_trainer_state,     read_megatron_log,     read_lightning_log,
                              read_torch_memory_summary, read_torch_max_memory, read_vllm_startup_log};
    const char* const names[] = {"trainer_state.json",
                                 "hf-trainer-log.txt",
                                 "megatron.log",
                                 "torchtune.log",
                                 "lightning.log",
                                 "torch-cuda-memory-summary.txt",
                                 "torch-max-memory.txt",
                                 "vllm-v0.19-llama-3.1-8b-h100-tp1.log",
                                 "vllm-v0-gemma-3-27b-awq-mi50-tp2.log"};
    int read = 0;
    int refused = 0;
    for (const char* name : names) {
        const std::string text = fixture(name);
        std::vector<std::string> variants;
        for (std::size_t cut = 0; cut < text.size(); cut += 97) {
            variants.push_back(text.substr(0, cut));
            std::string corrupted = text;
            corrupted[cut] = static_cast<char>("0:-.|\n\r,e'"[cut % 11]);
            variants.push_back(corrupted);
        }
        for (const std::string& variant : variants) {
            for (const Reader reader : readers) {
                try {
                    const MeasuredSource source = reader(variant, name, on("H100-SXM5", 2, 4));
                    for (const SpeedCalibrationPoint& point : source.speed) {
                        CHECK(point.measured > 0);
                    }
                    for (const MemoryCalibrationPoint& point : source.memory) {
                        CHECK(point.peak_bytes > 0);
                    }
                    ++read;
                } catch (const InputError& error) {
                    CHECK_FALSE(error.diagnostics().empty());
                    ++refused;
                }
            }
        }
    }
    CHECK(read > 0);
    CHECK(refused > 0);
}

TEST_CASE("each fixture is recognised by its own format's detector and by no other", "[calibrate-logs]") {
    using Detector = bool (*)(std::string_view);
    const std::pair<const char*, Detector> detectors[] = {
        {"hf_trainer_state", is_hf_trainer_state}, {"megatron_log", is_megatron_log},
        {"lightning_log", is_lightning_log},       {"torch_memory_summary", is_torch_memory_summary},
        {"torch_max_memory", is_torch_max_memory}, {"vllm_startup_log", is_vllm_startup_log}};
    const std::pair<const char*, const char*> fixtures[] = {
        {"trainer_state.json", "hf_trainer_state"},
        {"hf-trainer-log.txt", "hf_trainer_state"},
        {"hf-trainer-log-strings.txt", "hf_trainer_state"},
        {"megatron.log", "megatron_log"},
        {"torchtune.log", "lightning_log"},
        {"lightning.log", "lightning_log"},
        {"lightning-no-speed.log", "lightning_log"},
        {"torch-cuda-memory-summary.txt", "torch_memory_summary"},
        {"torch-max-memory.txt", "torch_max_memory"},
        {"vllm-v0.19-llama-3.1-8b-h100-tp1.log", "vllm_startup_log"},
        {"vllm-v0-gemma-3-27b-awq-mi50-tp2.log", "vllm_startup_log"},
        {"vllm-v0.7.3-granite-3b-l40s.log", "vllm_startup_log"}};
    for (const auto& [name, expected] : fixtures) {
        const std::string text = fixture(name);
        std::string recognised;
        for (const auto& [format, detector] : detectors) {
            if (detector(text)) {
                recognised += recognised.empty() ? format : std::string(" ") + format;
            }
        }
        INFO(name);
        CHECK(recognised == expected);
    }
}
