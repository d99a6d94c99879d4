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
    CHECK(t.labels(s).uuid == "GPU-5b4e07f6-3a86-4340-039d-25f2a83cdc43");
    CHECK(t.labels(s).host == "gpu1-wl8sg");
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
    CHECK(range.samples[0].time()->seconds == 1705416256);
    CHECK(range.samples[0].time()->dated);
    CHECK(range.labels(range.samples[0]).host == "dcgm-exporter-5hx7p");
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
    CHECK(t.labels(t.samples[0]).pod == "train-0");
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
          "...) nor vLLM/SGLang metrics; expected DCGM exporter metrics");
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

TEST_CASE("prometheus: text-format timestamps are milliseconds, range-query times seconds", "[telemetry]") {
    // The exposition format's timestamp is ms since the epoch: 19.5 s apart here, not 19,500 s.
    const GpuTelemetry text = parse_prometheus(
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50 1705416256000\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 60 1705416275500\n",
        "m");
    REQUIRE(text.samples.size() == 2);
    CHECK(text.samples[0].time()->seconds == 1705416256);
    CHECK(text.samples[1].time()->seconds == 1705416275.5);
    CHECK(text.samples[1].time()->dated);
    const GpuTelemetry range = parse_prometheus(
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[{\"metric\":{\"__name__\":"
        "\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"},\"values\":[[1705416256,\"50\"],[1705416275.5,\"60\"]]}]}}",
        "r");
    REQUIRE(range.samples.size() == 2);
    CHECK(range.samples[0].time()->seconds == 1705416256);
    CHECK(range.samples[1].time()->seconds == 1705416275.5);
    // Without timestamps, scrapes have no time.
    CHECK_FALSE(parse_prometheus("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 50\n", "m").samples[0].time().has_value());
}

TEST_CASE("prometheus: a range query of 10^4 series is read in one pass", "[telemetry]") {
    // Each series' position (its line, for notes and errors) was found by searching the text
    // from its start again: quadratic in the series. 10^4 took 17 s.
    std::string json = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[";
    for (int s = 0; s < 10000; ++s) {
        json += std::string(s == 0 ? "" : ",") + "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"" +
                std::to_string(s % 1000) + "\"},\n\"values\":[[" + std::to_string(s / 1000 + 1) + ",\"" +
                (s == 9999 ? "x" : "50") + "\"]]}";
    }
    json += "]}}";
    CHECK(error_of(json) == "m:10001:1: data.result[9999].values[0]: 'x' is not a number");
    json.replace(json.rfind("\"x\""), 3, "\"50\"");
    const GpuTelemetry t = parse_prometheus(json, "m");
    CHECK(t.samples.size() == 10000);       // 1000 GPUs at 10 times
    CHECK(t.samples.back().gpu == 999);     // time 10, the last GPU
    CHECK(t.samples.back().line == 10000);  // series 9999's labels, on line 10000
}

TEST_CASE("prometheus: the range query's structure is checked without building the document", "[telemetry]") {
    const std::string head = "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[";
    CHECK(error_of(head + "5]}}") == "m:1:1: data.result[0].metric: expected an object of labels");
    CHECK(error_of(head + "{\"metric\":{\"gpu\":1}}]}}") ==
          "m:1:62: data.result[0].metric.gpu: a label value must be a string");
    CHECK(error_of(head + "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"}}]}}") ==
          "m:1:1: data.result[0].values: expected an array of [time, \"value\"] pairs");
    CHECK(error_of(head + "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"},\"values\":[[1,2]]}]}}") ==
          "m:1:117: data.result[0].values[0]: expected [unix seconds, \"value\"]");
    CHECK(error_of(head +
                   "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"},\"values\":[[1e999,\"1\"]]}]}}")
              .rfind("m:1:", 0) == 0);  // a number beyond double: positioned at its byte
    // Values before the labels (Prometheus writes them after) are kept until the labels come.
    const GpuTelemetry t = parse_prometheus(
        head +
            "{\"values\":[[1,\"50\"],[2,\"60\"]],\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"3\"}}]}}",
        "m");
    REQUIRE(t.samples.size() == 2);
    CHECK(t.samples[1].gpu == 3);
    CHECK(t.samples[1].value(GpuMetric::sm_util_pct) == 60);
    // A series without __name__ is skipped, its values unread; for a key given twice, the last counts.
    CHECK(
        parse_prometheus("{\"status\":\"error\",\"status\":\"success\",\"data\":{\"resultType\":\"vector\","
                         "\"resultType\":\"matrix\",\"result\":[{\"metric\":{},\"values\":7},{\"metric\":{\"__name__\":"
                         "\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"0\"},\"values\":[[1,\"5\"]]}]}}",
                         "m")
            .samples.size() == 1);
}

TEST_CASE("prometheus: bytes of labels reach notes escaped and short", "[telemetry]") {
    // A host name with a line break that would start a GitHub annotation, a BEL, a byte that is
    // not UTF-8, and one of 1000 bytes.
    const GpuTelemetry t = parse_prometheus(
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"a\\n::error::x\"} 50\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"b\a\xff\"} 50\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"c" +
            std::string(1000, 'x') + "\"} 50\n",
        "m");
    CHECK(t.notes == std::vector<std::string>{"GPU 0 is gpu 0 of host 'a\\x0a::error::x'",
                                              "GPU 1 is gpu 0 of host 'b\\x07\\xff'",
                                              "GPU 2 is gpu 0 of host 'cxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'"});
    CHECK(t.labels(t.samples[1]).host == "b\a\xff");  // kept as sent; escaped where printed
    CHECK(error_of("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",GPU_I_ID=\"\a\"} 5\n") ==
          "m:1:44: DCGM_FI_DEV_GPU_UTIL: GPU_I_ID '\\x07' is not an instance number");
}
