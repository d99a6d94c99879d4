// Training logs → speed calibration points: the Hugging Face Trainer's trainer_state.json and log
// lines, Megatron-LM's training_log lines, torchtune's metric lines and PyTorch Lightning's
// progress bars. Each rate is of all the GPUs measured together (SpeedCalibrationPoint).

#include <algorithm>
#include <optional>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "calibrate/log_readers.hpp"
#include "calibrate/log_readers_text.hpp"

namespace gpusel {

using namespace calibrate_detail;

namespace {

// Both Trainer outputs take train_samples_per_second, which divides by all of train().
constexpr std::string_view trainer_runtime_note =
    "train_runtime spans the whole train() call, start-up steps and any evaluation included: the rate is a "
    "lower bound of the steady speed";

SpeedCalibrationPoint speed_point(const std::string& gpu, int count, MeasuredMetric metric, double measured, int batch,
                                  const std::string& path) {
    SpeedCalibrationPoint point;
    point.gpu = gpu;
    point.count = count;
    point.metric = metric;
    point.measured = measured;
    point.batch = batch;
    point.from = path;
    return point;
}

// A figure that must be a positive number where its label stands.
double positive_figure(const std::string& path, const TextLine& line, std::string_view key,
                       const LabelledFigure& figure) {
    if (!figure.number || *figure.number <= 0) {
        fail_at(path, {line.number, figure.column}, std::string(key),
                fmt::format("expected a positive number, got '{}'",
                            trim(line.text.substr(static_cast<std::size_t>(figure.column) - 1, 16))));
    }
    return *figure.number;
}

// ---------------------------------------------------------------------------------------------
// Hugging Face Trainer. Trainer.train() ends with speed_metrics("train", start, num_samples,
// num_steps) (transformers trainer_utils.py): train_samples_per_second = samples of all processes /
// train_runtime, logged as the last log_history entry of trainer_state.json and printed as a dict.

constexpr std::string_view samples_key = "train_samples_per_second";

MeasuredSource read_trainer_state_json(std::string_view text, const std::string& path,
                                       const MeasurementContext& context, const std::string& gpu) {
    nlohmann::json state;
    try {
        state = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& error) {
        fail_at(path, position_of_offset(text, error.byte == 0 ? 0 : error.byte - 1), "trainer_state",
                "not valid JSON (expected a Hugging Face trainer_state.json)");
    }
    const auto history = state.find("log_history");
    if (!state.is_object() || history == state.end() || !history->is_array()) {
        fail(path, "log_history", "trainer_state.json has no log_history list");
    }
    const nlohmann::json* final_entry = nullptr;
    for (const nlohmann::json& entry : *history) {
        if (entry.is_object() && entry.contains(samples_key)) {
            final_entry = &entry;
        }
    }
    const std::size_t key_at = text.rfind(fmt::format("\"{}\"", samples_key));
    if (final_entry == nullptr) {
        fail_at(path, position_of_offset(text, text.find("\"log_history\"")), "log_history",
                fmt::format("no entry has {} (the Trainer logs it when training ends; {} step entries, none final)",
                            samples_key, history->size()));
    }
    // cppcheck-suppress nullPointerRedundantCheck ; fail_at does not return
    const nlohmann::json& samples = final_entry->at(std::string(samples_key));
    if (!samples.is_number() || samples.get<double>() <= 0) {
        fail_at(path, position_of_offset(text, key_at), std::string(samples_key),
                fmt::format("expected a positive number, got {}", samples.dump()));
    }
    MeasuredSource source = source_for(path, MeasurementFormat::hf_trainer_state, gpu);
    int batch = context.batch;
    if (batch == 0) {
        const auto size = state.find("train_batch_size");
        if (size != state.end() && size->is_number_integer() && size->get<long long>() >= 1 &&
            size->get<long long>() <= (1 << 20)) {
            batch = static_cast<int>(size->get<long long>());
            source.notes.push_back(fmt::format(
                "batch {} from train_batch_size (the per-device batch the Trainer ran; give --batch to override)",
                batch));
        }
    }
    const int count = context.count > 0 ? context.count : 1;
    const double measured = samples.get<double>();
    std::string detail;
    const auto runtime = final_entry->find("train_runtime");
    if (runtime != final_entry->end() && runtime->is_number()) {
        detail += fmt::format(", train_runtime {:g} s", runtime->get<double>());
    }
    const auto step = final_entry->find("step");
    if (step != final_entry->end() && step->is_number_integer()) {
        detail += fmt::format(", step {}", step->get<long long>());
    }
    source.speed.push_back(speed_point(gpu, count, MeasuredMetric::samples_per_s, measured, batch, path));
    source.provenance.push_back(
        fmt::format("{} {:g} (trainer_state.json log_history, final{})", samples_key, measured, detail));
    source.notes.emplace_back(trainer_runtime_note);
    if (final_entry->contains("train_tokens_per_second")) {
        source.notes.push_back(
            "train_tokens_per_second read but not used: whether it is per device or of all devices changed across "
            "transformers versions");
    }
    if (context.count <= 0) {
        source.notes.push_back("count 1 GPU assumed (trainer_state.json does not record the world size): give --count");
    }
    return source;
}

// The printed dict: {'train_runtime': 110.59, 'train_samples_per_second': 1.808, …}; the last one.
MeasuredSource read_trainer_log_lines(std::string_view text, const std::string& path, const MeasurementContext& context,
                                      const std::string& gpu) {
    const std::string quoted = fmt::format("'{}'", samples_key);
    std::optional<TextLine> last;
    LabelledFigure figure;
    for (const TextLine& line : text_lines(text, true)) {
        const LabelledFigure here = figure_after(line.text, quoted);
        if (here.found) {
            last = line;
            figure = here;
        }
    }
    if (!last) {
        fail(path, std::string(samples_key),
             "no Trainer summary line ({'train_runtime': …, 'train_samples_per_second': …}) in the log");
    }
    const double measured = positive_figure(path, *last, samples_key, figure);
    MeasuredSource source = source_for(path, MeasurementFormat::hf_trainer_state, gpu);
    const int count = context.count > 0 ? context.count : 1;
    source.speed.push_back(speed_point(gpu, count, MeasuredMetric::samples_per_s, measured, context.batch, path));
    const LabelledFigure runtime = figure_after(last->text, "'train_runtime'");
    source.provenance.push_back(
        fmt::format("{} {:g} (Trainer log line {}{})", samples_key, measured, last->number,
                    runtime.number ? fmt::format(", train_runtime {:g} s", *runtime.number) : std::string()));
    source.notes.emplace_back(trainer_runtime_note);
    if (context.count <= 0) {
        source.notes.push_back("count 1 GPU assumed (the Trainer's log does not print the world size): give --count");
    }
    return source;
}

// ---------------------------------------------------------------------------------------------
// Megatron-LM: training.py training_log prints, every --log-interval iterations,
// " iteration {:8d}/{:8d} | consumed samples: {:12d} | elapsed time per iteration (ms): {:.1f} |
// [throughput per GPU (TFLOP/s/GPU): {:.1f} |] learning rate: {:.6E} | global batch size: {:5d} |
// lm loss: … |". The first interval carries start-up (CUDA context, NCCL set-up, compilation).

struct MegatronInterval {
    long long iteration = 0;
    double elapsed_ms = 0;
    double global_batch = 0;
    std::optional<double> tflops_per_gpu;
};

// The world size from the argument dump ("  world_size ........ 8") or the start-up line
// ("using world size: 8, data-parallel size: …"); 0 when neither is in the log.
int megatron_world_size(const std::vector<TextLine>& lines) {
    for (const TextLine& line : lines) {
        for (std::string_view key : {std::string_view("using world size:"), std::string_view("world_size ...")}) {
            const std::size_t at = line.text.find(key);
            if (at == std::string_view::npos) {
                continue;
            }
            std::string_view rest = line.text.substr(at + key.size());
            while (!rest.empty() && (rest.front() == '.' || rest.front() == ' ')) {
                rest.remove_prefix(1);
            }
            const std::optional<NumberAt> number = number_at(rest);
            if (number && number->value >= 1 && number->value <= (1 << 20)) {
                return static_cast<int>(number->value);
            }
        }
    }
    return 0;
}

std::optional<double> megatron_sequence_length(const std::vector<TextLine>& lines) {
    for (const TextLine& line : lines) {
        const std::size_t at = line.text.find("seq_length ...");
        if (at == std::string_view::npos) {
            continue;
        }
        std::string_view rest = line.text.substr(at + std::string_view("seq_length").size());
        while (!rest.empty() && (rest.front() == '.' || rest.front() == ' ')) {
            rest.remove_prefix(1);
        }
        if (const std::optional<NumberAt> number = number_at(rest); number && number->value >= 1) {
            return number->value;
        }
    }
    return std::nullopt;
}

}  // namespace

bool is_hf_trainer_state(std::string_view text) {
    const std::string_view body = trim(text);
    const bool json = !body.empty() && body.front() == '{' && contains(text, "\"log_history\"");
    return json || contains(text, "'train_samples_per_second':");
}

MeasuredSource read_hf_trainer_state(std::string_view text, const std::string& path,
                                     const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "Hugging Face Trainer state or log");
    const std::string_view body = trim(text);
    if (!body.empty() && body.front() == '{' && contains(text, "\"log_history\"")) {
        return read_trainer_state_json(text, path, context, gpu);
    }
    return read_trainer_log_lines(text, path, context, gpu);
}

bool is_megatron_log(std::string_view text) {
    return contains(text, "elapsed time per iteration (ms):") && contains(text, "iteration");
}

MeasuredSource read_megatron_log(std::string_view text, const std::string& path, const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "Megatron-LM log");
    const std::vector<TextLine> lines = text_lines(text);
    std::vector<MegatronInterval> intervals;
    for (const TextLine& line : lines) {
        const LabelledFigure elapsed = figure_after(line.text, "elapsed time per iteration (ms):");
        if (!elapsed.found) {
            continue;
        }
        MegatronInterval interval;
        interval.elapsed_ms = positive_figure(path, line, "elapsed time per iteration (ms)", elapsed);
        const LabelledFigure batch = figure_after(line.text, "global batch size:");
        if (!batch.found) {
            fail_at(path, {line.number, 1}, "global batch size",
                    "missing on this iteration line (Megatron-LM prints it on every training_log line)");
        }
        interval.global_batch = positive_figure(path, line, "global batch size", batch);
        const LabelledFigure iteration = figure_after(line.text, "iteration");
        if (iteration.number) {
            interval.iteration = static_cast<long long>(*iteration.number);
        }
        const LabelledFigure tflops = figure_after(line.text, "throughput per GPU (TFLOP/s/GPU):");
        if (tflops.number) {
            interval.tflops_per_gpu = *tflops.number;
        }
        intervals.push_back(interval);
    }
    if (intervals.empty()) {
        fail(path, "elapsed time per iteration (ms)", "no iteration line with a time in the log");
    }
    int count = context.count;
    const int world = megatron_world_size(lines);
    MeasuredSource source = source_for(path, MeasurementFormat::megatron_log, gpu);
    if (count <= 0) {
        if (world == 0) {
            fail(path, "--count",
                 "the Megatron-LM log does not print its world size (no argument dump): give --count, the GPUs of "
                 "the job");
        }
        count = world;
    } else if (world > 0 && world != count) {
        source.notes.push_back(fmt::format("--count {} used; the log's world size is {}", count, world));
    }
    // The first interval holds the start-up; a log of one interval has nothing else.
    const std::size_t first = intervals.size() > 1 ? 1 : 0;
    std::vector<double> rates;
    std::vector<double> tflops;
    for (std::size_t i = first; i < intervals.size(); ++i) {
        rates.push_back(intervals[i].global_batch / (intervals[i].elapsed_ms / 1000));
        if (intervals[i].tflops_per_gpu) {
            tflops.push_back(*intervals[i].tflops_per_gpu);
        }
    }
    const double measured = median_value(rates);
    source.speed.push_back(speed_point(gpu, count, MeasuredMetric::samples_per_s, measured, context.batch, path));
    const std::size_t used = intervals.size() - first;
    source.provenance.push_back(fmt::format(
        "samples_per_s {:.2f} (Megatron-LM log: global batch size / elapsed time per iteration, median of {} logged "
        "interval{} up to iteration {}{}; {} GPUs)",
        measured, used, used == 1 ? "" : "s", intervals.back().iteration,
        first == 1 ? fmt::format(", the first (to iteration {}) skipped as warm-up", intervals.front().iteration)
                   : std::string(", the only one: it includes the start-up"),
        count));
    if (!tflops.empty()) {
        source.notes.push_back(fmt::format(
            "throughput per GPU {:.1f} TFLOP/s (median, Megatron-LM's own FLOP count): read, not a calibration metric",
            median_value(tflops)));
    }
    if (const std::optional<double> sequence = megatron_sequence_length(lines)) {
        source.notes.push_back(fmt::format(
            "training tokens/s {:.0f} = samples/s × seq_length {:g} (argument dump): the same measurement, not a "
            "second point",
            measured * *sequence, *sequence));
    }
    return source;
}

// ---------------------------------------------------------------------------------------------
// torchtune: StdoutLogger / DiskLogger.log_dict print "Step {step} | " then "{name}:{data} " per
// metric; the recipes log loss, lr, tokens_per_second_per_gpu and, with log_peak_memory_stats,
// peak_memory_active / _alloc / _reserved in GiB (training.get_memory_stats: bytes / 1024**3).
// PyTorch Lightning: the TQDM progress bar "Epoch 3: 100%|…| 1563/1563 [00:45<00:00, 34.51it/s,
// v_num=0, …]" (or "1.23s/it" below one iteration a second), the Rich bar "… 34.51it/s …".

namespace {

bool is_torchtune_line(std::string_view line) {
    line = trim(line);
    if (line.substr(0, 5) != "Step ") {
        return false;
    }
    const std::optional<NumberAt> step = number_at(line.substr(5));
    return step && line.substr(5 + step->end).substr(0, 3) == " | ";
}

bool is_lightning_epoch_line(std::string_view line) {
    line = trim(line);
    if (line.substr(0, 6) != "Epoch ") {
        return false;
    }
    return contains(line, "it/s") || contains(line, "s/it");
}

// Iterations a second a progress-bar line shows ("34.51it/s" or "1.23s/it"); nullopt when none.
std::optional<double> progress_rate(std::string_view line) {
    for (std::size_t at = line.find("it/s"); at != std::string_view::npos; at = line.find("it/s", at + 1)) {
        std::size_t start = at;
        while (start > 0 &&
               (std::isdigit(static_cast<unsigned char>(line[start - 1])) != 0 || line[start - 1] == '.')) {
            --start;
        }
        if (const std::optional<NumberAt> number = number_at(line.substr(start, at - start));
            number && number->value > 0) {
            return number->value;
        }
    }
    for (std::size_t at = line.find("s/it"); at != std::string_view::npos; at = line.find("s/it", at + 1)) {
        std::size_t start = at;
        while (start > 0 &&
               (std::isdigit(static_cast<unsigned char>(line[start - 1])) != 0 || line[start - 1] == '.')) {
            --start;
        }
        if (const std::optional<NumberAt> number = number_at(line.substr(start, at - start));
            number && number->value > 0) {
            return 1 / number->value;
        }
    }
    return std::nullopt;
}

MeasuredSource read_torchtune(const std::vector<TextLine>& lines, const std::string& path,
                              const MeasurementContext& context, const std::string& gpu) {
    std::vector<std::pair<long long, double>> rates;  // step, tokens/s per GPU
    double peak_alloc_gib = 0;
    int peak_line = 0;
    for (const TextLine& line : lines) {
        if (!is_torchtune_line(line.text)) {
            continue;
        }
        const LabelledFigure rate = figure_after(line.text, "tokens_per_second_per_gpu:");
        if (rate.found) {
            const std::optional<NumberAt> step = number_at(trim(line.text).substr(5));
            rates.emplace_back(static_cast<long long>(step->value),
                               positive_figure(path, line, "tokens_per_second_per_gpu", rate));
        }
        const LabelledFigure alloc = figure_after(line.text, "peak_memory_alloc:");
        if (alloc.found) {
            const double gib = positive_figure(path, line, "peak_memory_alloc", alloc);
            if (gib > peak_alloc_gib) {
                peak_alloc_gib = gib;
                peak_line = line.number;
            }
        }
    }
    if (rates.empty()) {
        fail(path, "tokens_per_second_per_gpu",
             "the torchtune log has no tokens_per_second_per_gpu figure (the recipes log it every "
             "log_every_n_steps): no speed to calibrate with");
    }
    const SteadyMedian steady = median_after_warm_up(rates);
    const double per_gpu = steady.value;
    const int count = context.count > 0 ? context.count : 1;
    MeasuredSource source = source_for(path, MeasurementFormat::lightning_log, gpu);
    source.speed.push_back(
        speed_point(gpu, count, MeasuredMetric::training_tokens_per_s, per_gpu * count, context.batch, path));
    const std::size_t used = steady.used;
    source.provenance.push_back(fmt::format(
        "training_tokens_per_s {:.1f} = tokens_per_second_per_gpu {:.1f} × {} GPU{} (torchtune log: median of {} "
        "step{} up to step {}{})",
        per_gpu * count, per_gpu, count, count == 1 ? "" : "s", used, used == 1 ? "" : "s", rates.back().first,
        steady.first_skipped ? fmt::format(", step {} skipped as warm-up", rates.front().first)
                             : std::string(", the only one: it includes the start-up")));
    if (context.count <= 0) {
        source.notes.push_back("count 1 GPU assumed (the log gives a per-GPU rate): give --count for the whole job");
    }
    if (peak_alloc_gib > 0) {
        if (context.batch > 0) {
            MemoryCalibrationPoint memory;
            memory.gpu = gpu;
            memory.micro_batch = context.batch;
            memory.peak_bytes = peak_alloc_gib * 1073741824.0;
            source.memory.push_back(memory);
            source.provenance.push_back(
                fmt::format("peak {:.2f} GiB at micro-batch {} (torchtune peak_memory_alloc, the largest, line {})",
                            peak_alloc_gib, context.batch, peak_line));
        } else {
            source.notes.push_back(fmt::format(
                "peak_memory_alloc {:.2f} GiB read but not used: a memory point needs the micro-batch (give --batch)",
                peak_alloc_gib));
        }
    }
    return source;
}

MeasuredSource read_lightning(const std::vector<TextLine>& lines, const std::string& path,
                              const MeasurementContext& context, const std::string& gpu) {
    // The last rate each epoch's bar showed: tqdm's smoothed rate at the epoch's end.
    std::vector<std::pair<long long, double>> epochs;  // epoch, it/s
    for (const TextLine& line : lines) {
        if (!is_lightning_epoch_line(line.text)) {
            continue;
        }
        const std::optional<double> rate = progress_rate(line.text);
        const std::optional<NumberAt> epoch = number_at(trim(line.text).substr(6));
        if (!rate || !epoch) {
            continue;
        }
        const auto number = static_cast<long long>(epoch->value);
        if (!epochs.empty() && epochs.back().first == number) {
            epochs.back().second = *rate;
        } else {
            epochs.emplace_back(number, *rate);
        }
    }
    if (epochs.empty()) {
        fail(path, "it/s",
             "the PyTorch Lightning log has no progress bar with a speed (Epoch N: …it/s); it states no speed to "
             "calibrate with (log samples/s with Lightning's ThroughputMonitor, or give a typed point)");
    }
    const int batch = require_batch(context, path,
                                    "a Lightning progress bar counts batches per second per process; the samples "
                                    "per batch are not in the log");
    const SteadyMedian steady = median_after_warm_up(epochs);
    const double iterations = steady.value;
    const int count = context.count > 0 ? context.count : 1;
    const double measured = iterations * batch * count;
    MeasuredSource source = source_for(path, MeasurementFormat::lightning_log, gpu);
    source.speed.push_back(speed_point(gpu, count, MeasuredMetric::samples_per_s, measured, batch, path));
    const std::size_t used = steady.used;
    source.provenance.push_back(fmt::format(
        "samples_per_s {:.2f} = {:.2f} it/s × batch {} × {} GPU{} (Lightning progress bar: median of the last rate "
        "of {} epoch{}{})",
        measured, iterations, batch, count, count == 1 ? "" : "s", used, used == 1 ? "" : "s",
        steady.first_skipped ? fmt::format(", epoch {} skipped as warm-up", epochs.front().first)
                             : std::string(", the only one: it includes the start-up")));
    source.notes.push_back(
        "the bar's rate is tqdm's smoothed rate of one process; Lightning 1.x counted validation batches in the "
        "epoch bar");
    if (context.count <= 0) {
        source.notes.push_back("count 1 GPU assumed (the bar is one process's): give --count for the whole job");
    }
    return source;
}

}  // namespace

bool is_lightning_log(std::string_view text) {
    for (const TextLine& line : text_lines(text, true)) {
        if (is_torchtune_line(line.text) || is_lightning_epoch_line(line.text)) {
            return true;
        }
    }
    return contains(text, "GPU available: ") && contains(text, "TPU available: ");
}

MeasuredSource read_lightning_log(std::string_view text, const std::string& path, const MeasurementContext& context) {
    const std::string gpu = require_gpu(context, path, "PyTorch Lightning or torchtune log");
    const std::vector<TextLine> lines = text_lines(text, true);
    const bool torchtune =
        std::any_of(lines.begin(), lines.end(), [](const TextLine& line) { return is_torchtune_line(line.text); });
    return torchtune ? read_torchtune(lines, path, context, gpu) : read_lightning(lines, path, context, gpu);
}

}  // namespace gpusel
