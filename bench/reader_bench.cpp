// Benchmarks of every input reader at its documented size limit (docs/reliability.md, "Time and
// memory at the size limits"): each input is generated in memory to just under the limit, with
// the shape that used to be quadratic (many series, many GPU indices, many regions of one
// instance type, many manifest documents). Reported as bytes/s, so that a reader that becomes
// quadratic shows as a collapse of throughput, not as a slightly longer time.
//
//   ./build/bench/bench/gpusel_bench --benchmark_filter=read_
//
// The tests (tests/cli/hostile_scale.py) check the same shapes through the real binary for exit
// code, message and peak memory; this file measures time only.

#include <cstddef>
#include <fstream>
#include <sstream>
#include <string>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "catalog/skypilot_import.hpp"
#include "deploy/deploy.hpp"
#include "inputs/models.hpp"
#include "io/yaml.hpp"
#include "support/test_support.hpp"
#include "telemetry/telemetry.hpp"

namespace {

using gpusel::max_input_bytes;
using gpusel::max_telemetry_bytes;

// Limits the benches fill to: a little under each, so that the reader accepts the input.
constexpr std::size_t skypilot_limit_bytes = 64u << 20;  // src/cli/catalog_command.cpp
constexpr std::size_t headroom_bytes = 4096;

// `header`, then `row(i)` for i = 0, 1, ... while the text stays under `limit_bytes`.
template <typename Row>
std::string fill(std::string header, std::size_t limit_bytes, Row row) {
    std::string text = std::move(header);
    text.reserve(limit_bytes);
    for (std::size_t i = 0;; ++i) {
        const std::string next = row(i);
        if (text.size() + next.size() + headroom_bytes > limit_bytes) {
            return text;
        }
        text += next;
    }
}

template <typename Read>
void measure(benchmark::State& state, const std::string& text, Read read) {
    for (auto _ : state) {
        try {
            benchmark::DoNotOptimize(read(text));
        } catch (const gpusel::InputError&) {
            // A refusal at the limit is a result too: the benches time the reading either way.
        }
    }
    state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(text.size()));
    state.counters["input_MiB"] = static_cast<double>(text.size()) / (1u << 20);
}

std::string fixture(const std::string& relative) {
    std::ifstream file(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/" + relative);
    std::ostringstream text;
    text << file.rdbuf();
    return text.str();
}

// A real capture's first `header_lines` lines, then the rest repeated to just under the limit.
std::string repeated_fixture(const std::string& relative, int header_lines) {
    const std::string text = fixture(relative);
    std::size_t body = 0;
    for (int line = 0; line < header_lines; ++line) {
        body = text.find('\n', body) + 1;
    }
    const std::string rows = text.substr(body);
    return fill(text.substr(0, body), max_telemetry_bytes, [&rows](std::size_t) { return rows; });
}

// A YAML mapping of many small sequences: the generic reader's worst realistic shape.
void read_yaml(benchmark::State& state) {
    const std::string text =
        fill("", max_input_bytes, [](std::size_t i) { return fmt::format("key_{}: [a, b, {}]\n", i, i); });
    measure(state, text, [](const std::string& input) { return gpusel::parse_yaml_text(input, "bench.yaml"); });
}
BENCHMARK(read_yaml)->Unit(benchmark::kMillisecond);

// A user catalog of many GPU entries (merge_catalog_text: ids indexed, each entry validated).
void read_catalog(benchmark::State& state) {
    const std::string text = fill("format: 1\nas_of: 2026-11\ngpus:\n", max_input_bytes, [](std::size_t i) {
        return fmt::format(
            "  - {{id: BENCH-{}, name: Bench {}, vendor: nvidia, architecture: ampere, segment: datacenter,\n"
            "     memory: 16GiB, memory_bandwidth: 100GB/s, dense_tflops: {{fp16: 20}}, power: 25W,\n"
            "     released: 2023-03, host_link: pcie4x4, sources: [https://example.invalid/{}]}}\n",
            i, i, i);
    });
    measure(state, text, [](const std::string& input) {
        gpusel::Catalog catalog = gpusel::test::catalog();
        gpusel::merge_catalog_text(catalog, input, "bench.yaml");
        return catalog.gpus().size();
    });
}
BENCHMARK(read_catalog)->Unit(benchmark::kMillisecond);

gpusel::SkypilotImportOptions skypilot_options() {
    gpusel::SkypilotImportOptions options;
    options.provider = "aws";
    options.schema_version = "v8";
    options.as_of = "2026-11";
    options.imported_on = "2026-12-05";
    options.source_path = "vms.csv";
    return options;
}

constexpr const char* skypilot_header =
    "InstanceType,AcceleratorName,AcceleratorCount,vCPUs,MemoryGiB,Price,Region,GpuInfo,SpotPrice,AvailabilityZone\n";

// One instance type in 2,000 regions, a zone per row: the region lookup was a linear search.
void read_skypilot_regions(benchmark::State& state) {
    const std::string text = fill(skypilot_header, skypilot_limit_bytes, [](std::size_t i) {
        return fmt::format("p4d.24xlarge,A100,8,96,1152,32.77,region-{},,10.0,zone-{}\n", i % 2000, i);
    });
    measure(state, text, [](const std::string& input) {
        return gpusel::import_skypilot_csv(input, "vms.csv", skypilot_options(), gpusel::test::catalog()).offers.size();
    });
}
BENCHMARK(read_skypilot_regions)->Unit(benchmark::kMillisecond)->Iterations(1);

// Rows of empty cells (6 million of them used to exhaust memory): nothing to import, but every
// one must be looked at.
void read_skypilot_empty_rows(benchmark::State& state) {
    const std::string text =
        fill(std::string(skypilot_header) + "p4d.24xlarge,A100,8,96,1152,32.77,us-east-1,,10.0,us-east-1a\n",
             skypilot_limit_bytes, [](std::size_t) { return std::string(",,,,,,,,,\n"); });
    measure(state, text, [](const std::string& input) {
        return gpusel::import_skypilot_csv(input, "vms.csv", skypilot_options(), gpusel::test::catalog()).offers.size();
    });
}
BENCHMARK(read_skypilot_empty_rows)->Unit(benchmark::kMillisecond)->Iterations(1);

// nvidia-smi --query-gpu CSV over 100,000 GPU indices (the most one file may name).
void read_query_many_gpus(benchmark::State& state) {
    const std::string text =
        fill("timestamp, index, utilization.gpu [%], memory.used [MiB]\n", max_telemetry_bytes, [](std::size_t i) {
            return fmt::format("2026/12/05 10:{:02}:{:02}.000, {}, 50 %, 1000 MiB\n", i / 6000000, i / 100000 % 60,
                               i % 100000);
        });
    measure(state, text, [](const std::string& input) { return gpusel::parse_nvidia_smi_query(input, "query.csv"); });
}
BENCHMARK(read_query_many_gpus)->Unit(benchmark::kMillisecond);

// nvidia-smi dmon: eight GPUs, one row each per second.
void read_dmon(benchmark::State& state) {
    const std::string text = fill(
        "# gpu   pwr gtemp mtemp    sm   mem   enc   dec   jpg   ofa  mclk  pclk\n"
        "# Idx     W     C     C     %     %     %     %     %     %   MHz   MHz\n",
        max_telemetry_bytes, [](std::size_t i) {
            return fmt::format("    {}   300    60    70    95    40     0     0     0     0  2619  1980\n", i % 8);
        });
    measure(state, text, [](const std::string& input) { return gpusel::parse_nvidia_smi_dmon(input, "dmon.txt"); });
}
BENCHMARK(read_dmon)->Unit(benchmark::kMillisecond);

// Prometheus range query JSON: 40 hosts x 1,000 GPUs, a series of 20 points each (the
// key-position rescan was per series).
void read_prometheus_range(benchmark::State& state) {
    std::string points;
    for (int t = 0; t < 20; ++t) {
        points += fmt::format("{}[{},\"50\"]", t == 0 ? "" : ",", 1705416256 + t);
    }
    std::string text = fill(R"({"status":"success","data":{"resultType":"matrix","result":[)", max_telemetry_bytes,
                            [&points](std::size_t i) {
                                return fmt::format(R"({}{{"metric":{{"__name__":"DCGM_FI_DEV_GPU_UTIL","gpu":"{}",)"
                                                   R"("Hostname":"node-{}"}},"values":[{}]}})",
                                                   i == 0 ? "" : ",", i % 1000, i / 1000, points);
                            });
    text += "]}}";
    measure(state, text, [](const std::string& input) { return gpusel::parse_prometheus(input, "range.json"); });
}
BENCHMARK(read_prometheus_range)->Unit(benchmark::kMillisecond);

// Prometheus text exposition (dcgm-exporter scrapes): one host's 1,024 GPUs, long label sets,
// timestamps in milliseconds.
void read_prometheus_text(benchmark::State& state) {
    const std::string text = fill("# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n", max_telemetry_bytes, [](std::size_t i) {
        return fmt::format(
            "DCGM_FI_DEV_GPU_UTIL{{gpu=\"{}\",UUID=\"GPU-{:08x}\",device=\"nvidia{}\",modelName=\"NVIDIA H100 80GB "
            "HBM3\",Hostname=\"node-0\"}} 50 {}\n",
            i % 1024, i % 1024, i % 1024, 1705416256000 + 1000 * (i / 1024));
    });
    measure(state, text, [](const std::string& input) { return gpusel::parse_prometheus(input, "metrics.txt"); });
}
BENCHMARK(read_prometheus_text)->Unit(benchmark::kMillisecond);

// dcgmi dmon, mpstat, perf report and nvidia-smi -q: real captures repeated to 16 MiB.
void read_dcgmi(benchmark::State& state) {
    const std::string text = repeated_fixture("dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt", 2);
    measure(state, text, [](const std::string& input) { return gpusel::parse_dcgmi_dmon(input, "dcgmi.txt"); });
}
BENCHMARK(read_dcgmi)->Unit(benchmark::kMillisecond);

void read_mpstat(benchmark::State& state) {
    const std::string text = repeated_fixture("mpstat-P-ALL-1-repeated-headers.txt", 2);
    measure(state, text, [](const std::string& input) { return gpusel::parse_cpu_report(input, "mpstat.txt"); });
}
BENCHMARK(read_mpstat)->Unit(benchmark::kMillisecond);

void read_perf_report(benchmark::State& state) {
    const std::string text = repeated_fixture("perf-report-python-imagenet-dataloader-libjpeg-rows.txt", 0);
    measure(state, text, [](const std::string& input) { return gpusel::parse_perf_report(input, "perf.txt"); });
}
BENCHMARK(read_perf_report)->Unit(benchmark::kMillisecond);

void read_smi_q(benchmark::State& state) {
    const std::string text = repeated_fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt", 7);
    measure(state, text, [](const std::string& input) { return gpusel::parse_nvidia_smi_q(input, "smi-q.txt"); });
}
BENCHMARK(read_smi_q)->Unit(benchmark::kMillisecond);

// nvidia-smi topo -m at its cap: 1,024 devices, every pair NVLinked.
void read_topology(benchmark::State& state) {
    constexpr int devices = 1024;
    std::string text;
    for (int column = 0; column < devices; ++column) {
        text += fmt::format("\tGPU{}", column);
    }
    text += "\tCPU Affinity\n";
    for (int row = 0; row < devices; ++row) {
        text += fmt::format("GPU{}", row);
        for (int column = 0; column < devices; ++column) {
            text += row == column ? "\t X " : "\tNV18";
        }
        text += "\t0-47\n";
    }
    measure(state, text, [](const std::string& input) { return gpusel::parse_nvidia_smi_topo(input, "topo.txt"); });
}
BENCHMARK(read_topology)->Unit(benchmark::kMillisecond);

// nvidia-smi nvlink -s: 18 links per GPU, as many GPUs as 16 MiB holds.
void read_nvlink(benchmark::State& state) {
    const std::string text = fill("", max_telemetry_bytes, [](std::size_t gpu) {
        std::string block =
            fmt::format("GPU {}: NVIDIA H100 80GB HBM3 (UUID: GPU-{:08x}-0000-0000-0000-000000000000)\n", gpu, gpu);
        for (int link = 0; link < 18; ++link) {
            block += fmt::format("\t Link {}: 26.562 GB/s\n", link);
        }
        return block;
    });
    measure(state, text, [](const std::string& input) { return gpusel::parse_nvidia_smi_nvlink(input, "nvlink.txt"); });
}
BENCHMARK(read_nvlink)->Unit(benchmark::kMillisecond);

// A Hugging Face config.json at its 1 MiB limit: a real config, then a long list of unused ids.
void read_hf_config(benchmark::State& state) {
    std::string text = fill(R"({"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
"num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "vocab_size": 128256,
"max_position_embeddings": 131072, "model_type": "llama", "torch_dtype": "bfloat16", "unused": [0)",
                            1u << 20, [](std::size_t i) { return fmt::format(",{}", i); });
    text += "]}";
    measure(state, text,
            [](const std::string& input) { return gpusel::model_from_hf_config_text(input, "config.json"); });
}
BENCHMARK(read_hf_config)->Unit(benchmark::kMillisecond);

// A Kubernetes manifest of many small documents, separators with comments (helm template).
void read_launch_manifest(benchmark::State& state) {
    std::string text = fill("", max_input_bytes, [](std::size_t i) {
        return fmt::format(
            "--- # Source: chart/templates/config-{}.yaml\napiVersion: v1\nkind: ConfigMap\n"
            "metadata: {{name: config-{}}}\n",
            i, i);
    });
    text +=
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: chat}\nspec:\n  replicas: 2\n  template:\n"
        "    spec:\n      containers:\n        - name: vllm\n          image: vllm/vllm-openai:v0.11.0\n"
        "          args: [\"serve\", \"meta-llama/Llama-2-13b-chat-hf\", \"--tensor-parallel-size\", \"1\"]\n"
        "          resources: {limits: {nvidia.com/gpu: 1}}\n";
    measure(state, text, [](const std::string& input) { return gpusel::read_launch_settings(input, "manifest.yaml"); });
}
BENCHMARK(read_launch_manifest)->Unit(benchmark::kMillisecond);

}  // namespace
