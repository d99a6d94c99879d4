// DCGM-exporter metrics through Prometheus: a real scrape (tests/data/telemetry, SOURCES.md),
// the dcgmproftester capture re-expressed as a range query and as scrapes, and malformed text.

#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "base/error.hpp"
#include "telemetry/telemetry.hpp"

using namespace gpusel;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/" + name, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::string error_of(std::string_view text) {
    try {
        parse_prometheus(text, "m");
    } catch (const InputError& error) {
        return format_diagnostic(error.diagnostics().front());
    }
    return "no error";
}

}  // namespace

TEST_CASE("prometheus: a DCGM-exporter scrape of an idle L40S", "[telemetry]") {
    const GpuTelemetry t = parse_prometheus(fixture("dcgm-exporter-metrics-L40S-595-idle.txt"), "m");
    CHECK(t.kind == TelemetryKind::prometheus_text);
    REQUIRE(t.samples.size() == 1);
    const GpuSample& s = t.samples[0];
    CHECK(s.gpu == 0);
    CHECK(s.uuid == "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43");
    CHECK(s.host == "gpu1-wl8sg");
    CHECK(s.value(GpuMetric::sm_util_pct) == 0);
    CHECK(s.value(GpuMetric::fb_free_bytes) == 45459.0 * 1024 * 1024);
    CHECK(s.value(GpuMetric::dram_active_pct) == Approx(0.0131));  // 0.000131 as a ratio
    CHECK(s.value(GpuMetric::pcie_tx_bytes_per_s) == 175084);
    CHECK(s.value(GpuMetric::power_watts) == 35.686);
    CHECK(s.line == 3);          // the first DCGM series read
    CHECK(t.notes.size() == 1);  // the DCGM metrics gpusel does not read (energy, remapped rows, ...)
}

TEST_CASE("prometheus: a range query and appended scrapes give the same samples", "[telemetry]") {
    const GpuTelemetry range = parse_prometheus(fixture("derived-prometheus-query-range-dcgmproftester.json"), "r");
    const GpuTelemetry text =
        parse_prometheus(fixture("derived-dcgm-exporter-metrics-dcgmproftester-15-scrapes.txt"), "t");
    const GpuTelemetry dcgm = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt"), "d");
    CHECK(range.kind == TelemetryKind::prometheus_query_range);
    REQUIRE(range.samples.size() == 15);
    REQUIRE(text.samples.size() == 15);
    REQUIRE(dcgm.samples.size() == 15);
    for (std::size_t i = 0; i < 15; ++i) {
        for (const GpuMetric m :
             {GpuMetric::gr_engine_active_pct, GpuMetric::tensor_active_pct, GpuMetric::dram_active_pct}) {
            CHECK(range.samples[i].value(m) == dcgm.samples[i].value(m));
            CHECK(text.samples[i].value(m) == dcgm.samples[i].value(m));
        }
    }
    CHECK(range.samples[0].time == "1705416256.000");
    CHECK(range.samples[0].host == "dcgm-exporter-5hx7p");
}

TEST_CASE("prometheus: labels, MIG instances, several hosts, DCGM blanks", "[telemetry]") {
    const GpuTelemetry t = parse_prometheus(
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\", UUID=\"GPU-a\",Hostname=\"n1\",pod=\"train-0\"} 80\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-b\",Hostname=\"n2\",pod=\"train-1\",} 40 1705416256000\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",GPU_I_ID=\"5\",Hostname=\"n1\"} 0.5\n"
        "DCGM_FI_DEV_MEMORY_TEMP{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"n1\"} 9223372036854775794\n"
        "DCGM_FI_DEV_FB_USED{gpu=\"0\",UUID=\"GPU-a\",Hostname=\"n1\"} NaN\n",
        "m");
    REQUIRE(t.samples.size() == 3);
    CHECK(t.samples[0].pod == "train-0");
    CHECK(t.samples[0].gpu == 0);
    CHECK_FALSE(t.samples[0].value(GpuMetric::mem_temp_c).has_value());
    CHECK_FALSE(t.samples[0].value(GpuMetric::fb_used_bytes).has_value());
    CHECK(t.gpus() == std::vector<int>{0, 1});  // two hosts: numbered by first appearance of (host, gpu)
    bool mig = false;
    for (const GpuSample& s : t.samples) {
        mig = mig || s.entity == GpuEntity::gpu_instance;
    }
    CHECK(mig);
}

TEST_CASE("prometheus: malformed files get positioned errors", "[telemetry]") {
    CHECK(error_of("") ==
          "m:1:1: no DCGM_FI_ series gpusel reads (DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE, "
          "...); expected DCGM exporter metrics");
    CHECK(error_of("# HELP x\nDCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 1O\n") ==
          "m:2:31: DCGM_FI_DEV_GPU_UTIL: '1O' is not a number");
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\" 1\n") == "m:1:30: expected ',' or '}' after a label");
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL{gpu=\"0} 1\n") == "m:1:22: label 'gpu': the value has no closing quote");
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 101\n") == "m:1:31: DCGM_FI_DEV_GPU_UTIL: '101' is above 100 %");
    CHECK(error_of("DCGM_FI_PROF_DRAM_ACTIVE{gpu=\"0\"} 1.5\n") ==
          "m:1:35: DCGM_FI_PROF_DRAM_ACTIVE: '1.5' is above 1 (a ratio)");
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} +Inf\n") ==
          "m:1:31: DCGM_FI_DEV_GPU_UTIL: '+Inf' is not a DCGM reading");
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL 5\n") ==
          "m:1:22: DCGM_FI_DEV_GPU_UTIL: no numeric 'gpu' label; expected a DCGM exporter series");
    CHECK(error_of("{\"status\":\"success\",\n \"data\":{\"resultType\":\"vector\",\"result\":[]}}") ==
          "m:2:10: data.resultType: expected \"matrix\" (a range query: /api/v1/query_range, not /api/v1/query)");
    CHECK(error_of("{\"status\":\"error\",\"error\":\"bad_data\"}") == "m:1:2: status: the query failed: 'bad_data'");
    CHECK(error_of("{\"status\": \"success\",\n\"data\": {") ==
          "m:2:10: not valid JSON; expected the answer of Prometheus /api/v1/query_range");
    CHECK(error_of("{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[\n"
                   "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"},\n"
                   " \"values\":[[1,\"5\"],[2,\"x\"]]}]}}") == "m:3:2: data.result[0].values[1]: 'x' is not a number");
}
