// The memory estimator against published measurements (tests/validation/memory/cases.yaml;
// sources in docs/reference/memory_cases.md). Prints one row per case and the summary,
// then asserts the figures held near today's (support/held_bounds.hpp), well inside the accuracy
// targets of docs/memory-model.md, "Validation" (median |error| <= 10 %, 90th percentile <= 20 %,
// every fits/OOM boundary right, measured value inside the predicted band in >= 80 % of cases).
// Rerun alone: scripts/validate-memory.sh

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "catalog/catalog.hpp"
#include "inputs/layout.hpp"
#include "inputs/models.hpp"
#include "inputs/workload.hpp"
#include "io/yaml.hpp"
#include "memory/memory.hpp"
#include "report/text_table.hpp"
#include "support/held_bounds.hpp"

namespace {

using namespace gpusel;
using gpusel::validation::held_bound_percent;

// Held bounds (support/held_bounds.hpp: today + 10 %, at least + 0.5 point; counts at today's).
constexpr std::size_t held_measured_cases = 41;                       // today 41
constexpr int held_boundaries = 11;                                   // today 11, all right
constexpr double median_bound_percent = held_bound_percent(3.6, 10);  // today 3.6 % -> 4.1 %
constexpr double p90_bound_percent = held_bound_percent(11.2, 20);    // today 11.2 % -> 12.3 %
// Inside the band: today 35 of 41; at most one case fewer (34/41 = 82.9 %, target 80 %).
constexpr int held_in_band = 35 - 1;

const std::filesystem::path case_directory = std::filesystem::path(GPUSEL_SOURCE_DIR) / "tests/validation/memory";

struct ValidationCase {
    std::string id;
    std::string file;
    std::string gpu;
    int count = 1;
    std::optional<double> measured_bytes;
    std::string metric;  // allocated | device | reserved
    std::string expect;  // fits | oom (boundary rows)
    std::string source;
};

struct Manifest {
    std::string catalog_file;
    std::vector<ValidationCase> cases;
};

Manifest read_manifest(const std::filesystem::path& path) {
    const YamlNode root = read_yaml_file(path.string());
    Diagnostics diagnostics(path.string());
    MapReader top(root, "", diagnostics);
    Manifest manifest;
    top.require("format");
    top.require("cases");
    int format = 0;
    top.integer("format", format, 1, 1);
    top.text("catalog", manifest.catalog_file);
    if (const YamlNode* list = top.node("cases")) {
        for (std::size_t i = 0; i < list->items.size(); ++i) {
            MapReader entry(list->items[i], fmt::format("cases[{}]", i), diagnostics);
            ValidationCase item;
            for (const char* key : {"id", "file", "gpu", "count", "source"}) {
                entry.require(key);
            }
            entry.text("id", item.id);
            entry.text("file", item.file);
            entry.text("gpu", item.gpu);
            entry.integer("count", item.count, 1, 4096);
            double measured = 0;
            if (entry.number("measured", measured, UnitKind::bytes, 0, 1e13, true)) {
                item.measured_bytes = measured;
            }
            entry.text("metric", item.metric);
            entry.text("expect", item.expect);
            entry.text("source", item.source);
            std::string ignored;
            entry.text("gpu_note", ignored);
            entry.text("note", ignored);
            if (item.measured_bytes && item.metric != "allocated" && item.metric != "device" &&
                item.metric != "reserved") {
                entry.error("metric", "expected allocated, device or reserved");
            }
            if (!item.measured_bytes && item.expect != "fits" && item.expect != "oom") {
                entry.error("expect", "a case without measured needs expect: fits or oom");
            }
            entry.finish();
            manifest.cases.push_back(item);
        }
    }
    top.finish();
    diagnostics.throw_if_any();
    return manifest;
}

struct Prediction {
    double value = 0;
    double low = 0;
    double high = 0;
};

// What the estimate says for the metric the source measured. Peak reserved is the caching
// allocator's allocated + its reserve (no CUDA context); a static allocator reserves nothing extra.
Prediction predicted_for(const MemoryEstimate& estimate, const std::string& metric, Allocator allocator) {
    const MemoryBreakdown& b = estimate.per_gpu;
    if (metric == "device") {
        return {b.total_bytes, b.total_low_bytes, b.total_high_bytes};
    }
    if (metric == "reserved" && allocator == Allocator::caching) {
        const MemoryAssumptions& reserve = builtin_memory_assumptions();
        return {b.allocated_bytes * (1 + reserve.allocator_reserve_fraction),
                b.allocated_low_bytes * (1 + reserve.allocator_reserve_fraction_low),
                b.allocated_high_bytes * (1 + reserve.allocator_reserve_fraction_high)};
    }
    return {b.allocated_bytes, b.allocated_low_bytes, b.allocated_high_bytes};
}

// Nearest-rank percentile of `values` (0 < fraction <= 1).
double percentile(std::vector<double> values, double fraction) {
    std::sort(values.begin(), values.end());
    const auto rank = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(values.size())));
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string gb(double bytes) {
    return fmt::format("{:.2f}", bytes / 1e9);
}

struct ValidationSummary {
    std::size_t measured_cases = 0;
    double median_error = 0;
    double p90_error = 0;
    double coverage = 0;
    int in_band = 0;
    int boundaries = 0;
    int boundaries_right = 0;
    std::vector<std::string> wrong_boundaries;
};

// Predicts every case once, prints the tables and the summary, and returns the summary.
const ValidationSummary& validation_summary() {
    static const ValidationSummary summary = [] {
        ValidationSummary result;
        const Manifest manifest = read_manifest(case_directory / "cases.yaml");
        Catalog catalog = builtin_catalog();
        if (!manifest.catalog_file.empty()) {
            merge_catalog_file(catalog, (case_directory / manifest.catalog_file).string());
        }
        const ModelLibrary models = builtin_models();
        const LoadContext context{&catalog, &models};

        TextTable measured_table;
        for (const char* header :
             {"case", "gpu", "metric", "measured GB", "predicted GB", "error %", "band GB", "in band"}) {
            const std::string name = header;
            const bool text = name == "case" || name == "gpu" || name == "metric" || name == "in band";
            measured_table.add_column(header, text ? TextTable::Align::left : TextTable::Align::right);
        }
        TextTable boundary_table;
        for (const char* header :
             {"case", "gpu", "expect", "predicted total GB", "capacity GB", "predicted", "right"}) {
            boundary_table.add_column(header);
        }
        std::vector<double> absolute_errors;
        int in_band = 0;
        for (const ValidationCase& item : manifest.cases) {
            const Workload workload = load_workload_file((case_directory / item.file).string(), context);
            const GpuSpec* gpu = catalog.find(item.gpu);
            if (gpu == nullptr) {
                throw std::runtime_error("case " + item.id + ": unknown GPU " + item.gpu);
            }
            const std::optional<Layout> layout = layout_as_written(workload, item.count);
            if (!layout) {
                throw std::runtime_error("case " + item.id + ": no layout for " + std::to_string(item.count) + " GPUs");
            }
            MemoryQuery query;
            query.layout = *layout;
            // A published fits/OOM observation is about the job running at all: no headroom.
            query.headroom_fraction = item.measured_bytes ? -1.0 : 0.0;
            const MemoryEstimate estimate = estimate_memory(workload, *gpu, query);
            if (!std::isfinite(estimate.per_gpu.total_bytes) || estimate.per_gpu.allocated_bytes <= 0) {
                throw std::runtime_error("case " + item.id + ": no finite positive estimate");
            }
            if (item.measured_bytes) {
                const Prediction prediction = predicted_for(estimate, item.metric, workload.runtime.allocator);
                const double measured = *item.measured_bytes;
                const double error = (prediction.value - measured) / measured * 100;
                const bool inside = measured >= prediction.low && measured <= prediction.high;
                absolute_errors.push_back(std::fabs(error));
                in_band += inside ? 1 : 0;
                measured_table.add_row(
                    {item.id, item.gpu, item.metric, gb(measured), gb(prediction.value), fmt::format("{:+.1f}", error),
                     fmt::format("{}–{}", gb(prediction.low), gb(prediction.high)), inside ? "yes" : "no"});
            }
            if (!item.expect.empty()) {
                ++result.boundaries;
                const bool right = estimate.fits == (item.expect == "fits");
                result.boundaries_right += right ? 1 : 0;
                if (!right) {
                    result.wrong_boundaries.push_back(item.id);
                }
                boundary_table.add_row({item.id, item.gpu, item.expect, gb(estimate.per_gpu.total_bytes),
                                        gb(estimate.capacity_bytes), estimate.fits ? "fits" : "oom",
                                        right ? "yes" : "NO"});
            }
        }
        result.measured_cases = absolute_errors.size();
        result.median_error = absolute_errors.empty() ? 0 : median(absolute_errors);
        result.p90_error = absolute_errors.empty() ? 0 : percentile(absolute_errors, 0.9);
        result.coverage =
            absolute_errors.empty() ? 0 : static_cast<double>(in_band) / static_cast<double>(absolute_errors.size());
        result.in_band = in_band;
        std::cout << "\nMemory estimator vs published measurements (GB = 1e9 bytes; error = (predicted − measured) / "
                     "measured)\n\n"
                  << measured_table.render() << "\nFits/OOM boundaries (no headroom)\n\n"
                  << boundary_table.render()
                  << fmt::format(
                         "\nmeasured cases {} (held ≥ {}) · median |error| {:.1f} % (held ≤ {:.1f}, target ≤ 10) · "
                         "p90 |error| {:.1f} % (held ≤ {:.1f}, target ≤ 20) · measured inside band {}/{} = {:.0f} % "
                         "(held ≥ {}, target ≥ 80 %) · boundaries right {}/{} (held ≥ {}, all right)\n\n",
                         result.measured_cases, held_measured_cases, result.median_error, median_bound_percent,
                         result.p90_error, p90_bound_percent, in_band, result.measured_cases, result.coverage * 100,
                         held_in_band, result.boundaries_right, result.boundaries, held_boundaries);
        return result;
    }();
    return summary;
}

}  // namespace

TEST_CASE("memory estimator against published measurements", "[memory][validation]") {
    const ValidationSummary& summary = validation_summary();
    CHECK(summary.measured_cases >= held_measured_cases);
    CHECK(summary.median_error <= median_bound_percent);
    CHECK(summary.p90_error <= p90_bound_percent);
    CHECK(summary.in_band >= held_in_band);
    CHECK(summary.coverage >= 0.80);
    CHECK(summary.boundaries >= held_boundaries);
    CHECK(summary.wrong_boundaries.empty());
    CHECK(summary.boundaries_right == summary.boundaries);
}
