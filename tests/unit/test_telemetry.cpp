// Parsers of real tool output (tests/data/telemetry, provenance in SOURCES.md). Every expected
// value below was read off the fixture by hand.

#include <catch2/catch.hpp>

#include "harness.hpp"

#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "base/error.hpp"
#include "telemetry/telemetry.hpp"

using namespace gpusel;
using Catch::Matchers::WithinAbs;

namespace {

constexpr double mib = 1024.0 * 1024.0;

std::string fixture(const std::string& name) {
    const std::string path = std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/" + name;
    std::ifstream in(path, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

template <typename Action>
std::string error_of(Action&& action) {
    try {
        action();
    } catch (const InputError& error) {
        return format_diagnostic(error.diagnostics().front());
    }
    return "<no error>";
}

double value(const GpuSample& sample, GpuMetric metric) {
    const std::optional<double> v = sample.value(metric);
    REQUIRE(v.has_value());
    return *v;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// nvidia-smi dmon

TEST_CASE("telemetry::parse_nvidia_smi_dmon reads the current (590) default layout", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-default-H100-590-load.txt"), "load.txt");
    CHECK(t.kind == TelemetryKind::nvidia_smi_dmon);
    REQUIRE(t.samples.size() == 5);
    CHECK(t.gpus() == std::vector<int>{0});
    CHECK(t.columns == std::vector<std::string>{"gpu", "pwr", "gtemp", "mtemp", "sm", "mem", "enc", "dec", "jpg", "ofa",
                                                "mclk", "pclk"});
    const GpuSample& first = t.samples.front();
    CHECK(first.line == 3);
    CHECK_FALSE(first.time().has_value());
    CHECK(value(first, GpuMetric::power_watts) == 631);
    CHECK(value(first, GpuMetric::gpu_temp_c) == 63);
    CHECK(value(first, GpuMetric::mem_temp_c) == 57);
    CHECK(value(first, GpuMetric::sm_util_pct) == 100);
    CHECK(value(first, GpuMetric::mem_util_pct) == 10);
    CHECK(value(first, GpuMetric::mem_clock_mhz) == 2619);
    CHECK(value(first, GpuMetric::sm_clock_mhz) == 1980);
    CHECK(value(t.samples[4], GpuMetric::power_watts) == 636);
    CHECK(value(t.samples[4], GpuMetric::mem_util_pct) == 9);
    CHECK_FALSE(first.value(GpuMetric::fb_used_bytes).has_value());
    CHECK(t.notes.empty());
}

TEST_CASE("telemetry::parse_nvidia_smi_dmon reads the pre-535 layout and '-' as no value", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-default-pre535-format.txt"), "d.txt");
    REQUIRE(t.samples.size() == 9);
    CHECK_FALSE(t.samples[0].value(GpuMetric::mem_temp_c).has_value());
    CHECK(value(t.samples[0], GpuMetric::power_watts) == 70);
    CHECK(value(t.samples[0], GpuMetric::mem_clock_mhz) == 7000);
    CHECK(value(t.samples[4], GpuMetric::power_watts) == 274);
    CHECK(value(t.samples[4], GpuMetric::sm_util_pct) == 75);
    CHECK(value(t.samples[4], GpuMetric::mem_util_pct) == 46);
    CHECK(value(t.samples[8], GpuMetric::sm_clock_mhz) == 1740);

    const GpuTelemetry u = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-u-pre535-format.txt"), "u.txt");
    REQUIRE(u.samples.size() == 8);
    double sum = 0;
    for (const GpuSample& s : u.samples) {
        sum += value(s, GpuMetric::sm_util_pct);
    }
    CHECK(sum == 67 + 57 + 69 + 30 + 95 + 65 + 68 + 73);
}

TEST_CASE("telemetry::parse_nvidia_smi_dmon interleaves GPUs and reads fb in MiB", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-m-8gpu.txt"), "m.txt");
    REQUIRE(t.samples.size() == 16);
    CHECK(t.gpus() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(t.samples[7].gpu == 7);
    CHECK(t.samples[8].gpu == 0);
    CHECK(value(t.samples[15], GpuMetric::fb_used_bytes) == 4 * mib);  // the last line has no trailing space

    const GpuTelemetry p = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-pucm-c1-4gpu-rtxpro6000-595.txt"), "p.txt");
    REQUIRE(p.samples.size() == 4);
    CHECK(value(p.samples[0], GpuMetric::fb_used_bytes) == 90538 * mib);
    CHECK(value(p.samples[2], GpuMetric::fb_used_bytes) == 48243 * mib);
    CHECK_FALSE(p.samples[2].value(GpuMetric::mem_temp_c).has_value());
    CHECK(value(p.samples[3], GpuMetric::sm_util_pct) == 100);
}

TEST_CASE("telemetry::parse_nvidia_smi_dmon reads -o TD/DT timestamps, blank lines and PCIe columns", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-mutc-o-TD.txt"), "td.txt");
    REQUIRE(t.samples.size() == 6);
    REQUIRE(t.samples[0].time().has_value());
    CHECK(t.samples[0].time()->seconds == 1704376475);  // 2024-01-04 13:54:35 (UTC as printed)
    CHECK(t.samples[0].time()->dated);
    CHECK(value(t.samples[0], GpuMetric::fb_used_bytes) == 239 * mib);
    CHECK(value(t.samples[0], GpuMetric::pcie_rx_bytes_per_s) == 5 * mib);
    CHECK(value(t.samples[0], GpuMetric::pcie_tx_bytes_per_s) == 10 * mib);
    CHECK(t.samples[1].line == 5);  // line 4 is blank
    CHECK(value(t.samples[1], GpuMetric::pcie_rx_bytes_per_s) == 217 * mib);
    CHECK(value(t.samples[1], GpuMetric::pcie_tx_bytes_per_s) == 677 * mib);
    CHECK(value(t.samples[1], GpuMetric::mem_clock_mhz) == 6250);

    const GpuTelemetry dt = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-pucvmet-o-DT.txt"), "dt.txt");
    REQUIRE(dt.samples.size() == 3);
    CHECK(dt.samples[2].time()->seconds == 1786872156);  // 2026-08-16 09:22:36
    CHECK(dt.samples[2].time()->dated);
    CHECK(value(dt.samples[0], GpuMetric::pcie_tx_bytes_per_s) == 2 * mib);
    CHECK(value(dt.samples[1], GpuMetric::pcie_tx_bytes_per_s) == 0);
    CHECK(value(dt.samples[0], GpuMetric::fb_used_bytes) == 2 * mib);
}

TEST_CASE("telemetry::parse_nvidia_smi_dmon reads the 2016 'temp' layout and a row cut short", "[telemetry]") {
    const GpuTelemetry old = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-pucvmet-4gpu-2016-format.txt"), "o.txt");
    REQUIRE(old.samples.size() == 4);
    CHECK(value(old.samples[0], GpuMetric::gpu_temp_c) == 83);
    CHECK(value(old.samples[3], GpuMetric::fb_used_bytes) == 11660 * mib);
    CHECK(value(old.samples[3], GpuMetric::pcie_rx_bytes_per_s) == 62 * mib);
    CHECK(value(old.samples[3], GpuMetric::pcie_tx_bytes_per_s) == 5 * mib);

    const GpuTelemetry k80 = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-pucet-4gpu-K80-470.txt"), "k.txt");
    REQUIRE(k80.samples.size() == 13);
    CHECK(k80.gpus() == std::vector<int>{0, 1, 2, 3});
    CHECK(value(k80.samples[6], GpuMetric::sm_util_pct) == 98);  // GPU 2, second sample
    CHECK_FALSE(k80.samples[0].value(GpuMetric::pcie_rx_bytes_per_s).has_value());
    const GpuSample& cut = k80.samples.back();
    CHECK(cut.line == 15);
    CHECK_FALSE(cut.value(GpuMetric::power_watts).has_value());
    CHECK_FALSE(cut.value(GpuMetric::sm_util_pct).has_value());
    CHECK(k80.notes == std::vector<std::string>{"row cut short; its missing columns have no value (line 15)"});
}

TEST_CASE("telemetry::parse_nvidia_smi_dmon tolerates repeated headers and rejects what is not dmon", "[telemetry]") {
    const std::string repeated =
        "# gpu   sm  mem\n# Idx    %    %\n    0   50   10\n# gpu   sm  mem\n# Idx    %    %\n    0   60   20\n";
    const GpuTelemetry t = parse_nvidia_smi_dmon(repeated, "r.txt");
    REQUIRE(t.samples.size() == 2);
    CHECK(value(t.samples[1], GpuMetric::sm_util_pct) == 60);
    CHECK(t.notes.empty());

    CHECK(error_of([] { parse_nvidia_smi_dmon("hello\nworld\n", "x.txt"); }) ==
          "x.txt:1:1: data before the '# gpu ...' header line; expected `nvidia-smi dmon` output");
    CHECK(error_of([] { parse_nvidia_smi_dmon("", "x.txt"); }) ==
          "x.txt:1:1: no '# gpu ...' header line; expected `nvidia-smi dmon` output");
    CHECK(error_of([] { parse_nvidia_smi_dmon("# gpu   sm  mem\n    0   5x  10\n", "x.txt"); }) ==
          "x.txt:2:9: column 'sm': '5x' is not a number");
    CHECK(error_of([] { parse_nvidia_smi_dmon("# gpu   sm\n    0   5  10\n", "x.txt"); }) ==
          "x.txt:2:12: row has 3 values but the header names 2 columns");
    CHECK(error_of([] { parse_nvidia_smi_dmon("# gpu   sm\n    0   nan\n", "x.txt"); }) ==
          "x.txt:2:9: column 'sm': 'nan' is not a number");
}

// ---------------------------------------------------------------------------------------------
// dcgmi dmon

TEST_CASE("telemetry::parse_dcgmi_dmon reads profiling ratios as percent and N/A as no value", "[telemetry]") {
    const GpuTelemetry nvl = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1002-1005-dcgm339-h100nvl.txt"), "n.txt");
    CHECK(nvl.kind == TelemetryKind::dcgmi_dmon);
    REQUIRE(nvl.samples.size() == 2);
    CHECK(nvl.columns == std::vector<std::string>{"GRACT", "SMACT", "DRAMA"});
    CHECK_FALSE(nvl.samples[0].value(GpuMetric::gr_engine_active_pct).has_value());
    CHECK(value(nvl.samples[1], GpuMetric::sm_active_pct) == 0);
    CHECK(value(nvl.samples[1], GpuMetric::dram_active_pct) == 0);

    const GpuTelemetry docs = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt"), "d.txt");
    REQUIRE(docs.samples.size() == 15);
    CHECK(docs.samples[4].line == 7);
    CHECK_THAT(value(docs.samples[4], GpuMetric::gr_engine_active_pct), WithinAbs(96.9, 1e-9));
    CHECK_THAT(value(docs.samples[4], GpuMetric::tensor_active_pct), WithinAbs(92.8, 1e-9));
    CHECK(value(docs.samples[4], GpuMetric::dram_active_pct) == 0);
}

TEST_CASE("telemetry::parse_dcgmi_dmon keeps MIG instances apart from whole GPUs", "[telemetry]") {
    const GpuTelemetry t = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1004-g-mig-group-dcgm-docs.txt"), "m.txt");
    REQUIRE(t.samples.size() == 30);
    CHECK(t.gpus() == std::vector<int>{0});
    CHECK(t.samples[1].entity == GpuEntity::gpu_instance);
    CHECK(t.samples[2].gpu == 1);
    CHECK(t.samples[6].entity == GpuEntity::gpu);
    CHECK_THAT(value(t.samples[6], GpuMetric::gr_engine_active_pct), WithinAbs(45.7, 1e-9));
    CHECK_THAT(value(t.samples[7], GpuMetric::tensor_active_pct), WithinAbs(51.6, 1e-9));
}

TEST_CASE("telemetry::parse_dcgmi_dmon maps the standard field tags", "[telemetry]") {
    const std::string text =
        "#Entity   GPUTL  MCUTL  FBUSD  FBTTL  PCITX      PCIRX      NVLTX  POWER  FOO\n"
        "ID\n"
        "GPU 1     55     20     70000  81559  1000000    2000000    5      300.5  7\n";
    const GpuTelemetry t = parse_dcgmi_dmon(text, "f.txt");
    REQUIRE(t.samples.size() == 1);
    const GpuSample& s = t.samples[0];
    CHECK(s.gpu == 1);
    CHECK(value(s, GpuMetric::sm_util_pct) == 55);
    CHECK(value(s, GpuMetric::mem_util_pct) == 20);
    CHECK(value(s, GpuMetric::fb_used_bytes) == 70000 * mib);
    CHECK(value(s, GpuMetric::fb_total_bytes) == 81559 * mib);
    CHECK(value(s, GpuMetric::pcie_tx_bytes_per_s) == 1e6);
    CHECK(value(s, GpuMetric::pcie_rx_bytes_per_s) == 2e6);
    CHECK(value(s, GpuMetric::nvlink_tx_bytes_per_s) == 5);
    CHECK(value(s, GpuMetric::power_watts) == 300.5);
    CHECK(t.notes == std::vector<std::string>{"column 'FOO' is not a DCGM field gpusel reads; kept without a metric"});
    CHECK(error_of([] { parse_dcgmi_dmon("GPU 0 1\n", "x.txt"); }) ==
          "x.txt:1:1: data before the '#Entity ...' header line; expected `dcgmi dmon` output");
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi --query-gpu

TEST_CASE("telemetry::parse_nvidia_smi_query reads a header with units", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-header-units.txt"), "q.csv");
    CHECK(t.kind == TelemetryKind::nvidia_smi_query);
    REQUIRE(t.samples.size() == 5);
    CHECK(t.gpus() == std::vector<int>{0});
    CHECK(t.columns == std::vector<std::string>{"timestamp", "pstate", "temperature.gpu", "utilization.gpu",
                                                "utilization.memory", "memory.total", "memory.free", "memory.used"});
    CHECK(t.samples[0].time()->seconds == Approx(1705416256.977));  // 2024/01/16 14:44:16.977
    CHECK(t.samples[0].time()->dated);
    CHECK(value(t.samples[0], GpuMetric::fb_total_bytes) == 23028 * mib);
    CHECK(value(t.samples[0], GpuMetric::fb_used_bytes) == 21 * mib);
    CHECK(value(t.samples[1], GpuMetric::fb_free_bytes) == 22508 * mib);
    CHECK(value(t.samples[3], GpuMetric::gpu_temp_c) == 26);
    CHECK(value(t.samples[4], GpuMetric::sm_util_pct) == 0);
    CHECK(t.notes == std::vector<std::string>{"no index, uuid or pci.bus_id field: every row is counted as GPU 0"});

    const GpuTelemetry h200 =
        parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-header-units-8xH200-570.txt"), "h.csv");
    REQUIRE(h200.samples.size() == 8);
    CHECK(h200.gpus() == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
    CHECK(value(h200.samples[7], GpuMetric::fb_total_bytes) == 143771 * mib);
    CHECK(value(h200.samples[7], GpuMetric::power_limit_watts) == 700);
}

TEST_CASE("telemetry::parse_nvidia_smi_query reads noheader,nounits with --query-fields and aliases", "[telemetry]") {
    const std::vector<std::string> fields = split_query_fields(
        "index,uuid,name,pci.bus_id,driver_version,utilization.gpu,utilization.memory,memory.total,memory.used,"
        "memory.free,temperature.gpu,temperature.memory,power.draw,power.limit,clocks.gr,clocks.mem,clocks.max.gr,"
        "clocks.max.mem,fan.speed,pstate,pcie.link.gen.current,pcie.link.width.current,encoder.stats.sessionCount",
        "--query-fields");
    REQUIRE(fields.size() == 23);
    const std::string text = fixture("nvidia-smi-query-gpu-csv-noheader-nounits-4gpu-595.txt");
    const GpuTelemetry t = parse_nvidia_smi_query(text, "q.csv", fields);
    REQUIRE(t.samples.size() == 4);
    CHECK(t.gpus() == std::vector<int>{0, 1, 2, 3});
    const GpuSample& s = t.samples[0];
    CHECK(value(s, GpuMetric::sm_util_pct) == 99);
    CHECK(value(s, GpuMetric::mem_util_pct) == 55);
    CHECK(value(s, GpuMetric::fb_total_bytes) == 97887 * mib);
    CHECK(value(s, GpuMetric::fb_used_bytes) == 90538 * mib);
    CHECK(value(s, GpuMetric::fb_free_bytes) == 6712 * mib);
    CHECK(value(s, GpuMetric::gpu_temp_c) == 81);
    CHECK_FALSE(s.value(GpuMetric::mem_temp_c).has_value());  // N/A
    CHECK(value(s, GpuMetric::power_watts) == 299.35);
    CHECK(value(s, GpuMetric::power_limit_watts) == 300);
    CHECK(value(s, GpuMetric::sm_clock_mhz) == 1927);  // clocks.gr, the graphics clock, stands in for SM
    CHECK(value(s, GpuMetric::mem_clock_mhz) == 13365);
    CHECK(value(s, GpuMetric::pcie_link_gen_current) == 5);
    CHECK(value(s, GpuMetric::pcie_link_width_current) == 16);
    CHECK(value(t.samples[3], GpuMetric::fb_used_bytes) == 48209 * mib);

    // The same host's dmon printed fb 90538 for GPU 0: dmon's "MB" is --query-gpu's MiB.
    const GpuTelemetry dmon = parse_nvidia_smi_dmon(fixture("nvidia-smi-dmon-s-pucm-c1-4gpu-rtxpro6000-595.txt"), "d");
    CHECK(value(dmon.samples[0], GpuMetric::fb_used_bytes) == value(s, GpuMetric::fb_used_bytes));

    CHECK(error_of([&] { parse_nvidia_smi_query(text, "q.csv"); }) ==
          "q.csv:1:1: no header line (captured with --format=csv,noheader?); pass the --query-gpu field list with "
          "--query-fields, e.g. --query-fields index,utilization.gpu,memory.used");
}

TEST_CASE("telemetry::parse_nvidia_smi_query prefers power.draw.average over .instant", "[telemetry]") {
    const GpuTelemetry t = parse_nvidia_smi_query(
        fixture("nvidia-smi-query-gpu-csv-noheader-nounits-4gpu-595-b.txt"), "b.csv",
        split_query_fields("index,power.draw.average,power.draw.instant,clocks_throttle_reasons.active,"
                           "memory.reserved,ecc.mode.current,mig.mode.current",
                           "--query-fields"));
    REQUIRE(t.samples.size() == 4);
    CHECK(value(t.samples[0], GpuMetric::power_watts) == 297.37);
    CHECK(value(t.samples[3], GpuMetric::power_watts) == 299.99);
}

TEST_CASE("telemetry::parse_nvidia_smi_query reads the all-fields capture and header aliases", "[telemetry]") {
    const GpuTelemetry t =
        parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-allfields-H100-590-load.txt"), "a.csv");
    REQUIRE(t.samples.size() == 1);
    const GpuSample& s = t.samples[0];
    CHECK(s.time()->seconds == Approx(1784016773.353));  // 2026/07/14 08:12:53.353
    CHECK(value(s, GpuMetric::sm_util_pct) == 100);
    CHECK(value(s, GpuMetric::mem_util_pct) == 11);
    CHECK(value(s, GpuMetric::fb_used_bytes) == 19818 * mib);
    CHECK(value(s, GpuMetric::fb_total_bytes) == 81559 * mib);
    CHECK(value(s, GpuMetric::power_watts) == 631.95);
    CHECK(value(s, GpuMetric::power_limit_watts) == 700);
    CHECK(value(s, GpuMetric::pcie_link_gen_max) == 5);
    CHECK(value(s, GpuMetric::pcie_link_width_max) == 16);
    CHECK(value(s, GpuMetric::sm_clock_mhz) == 1980);
    REQUIRE(t.notes.size() == 1);
    CHECK(t.notes[0].rfind("185 fields gpusel does not read were ignored: ", 0) == 0);

    const GpuTelemetry names =
        parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-header-nounits-fields-8xH100.txt"), "n.csv",
                               {"gpu_name", "gpu_bus_id", "vbios_version"});
    CHECK(names.samples.size() == 2);  // the "[...]" elision is skipped
    CHECK(names.gpus() == std::vector<int>{0, 1});
    CHECK(error_of([] {
              parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-header-nounits-fields-8xH100.txt"), "n.csv",
                                     {"name", "index"});
          }) ==
          "n.csv:1:1: the header names other fields than --query-fields; drop --query-fields or make it match "
          "the header");
    CHECK(error_of([] { parse_nvidia_smi_query("index, utilization.gpu [%]\n0, lots %\n", "u.csv"); }) ==
          "u.csv:2:4: field 'utilization.gpu': 'lots %' is not a number");
    CHECK(error_of([] { split_query_fields("index,,memory.used", "--query-fields"); }) ==
          "--query-fields: empty field name in 'index,,memory.used'");
}

// ---------------------------------------------------------------------------------------------
// mpstat, sar, top

TEST_CASE("telemetry::parse_cpu_report reads mpstat with repeated headers and offline CPUs", "[telemetry]") {
    const CpuTelemetry t = parse_cpu_report(fixture("mpstat-P-ALL-1-repeated-headers.txt"), "m.txt");
    CHECK(t.kind == TelemetryKind::mpstat);
    CHECK(t.cpu_count == 9);
    CHECK(t.samples.size() == 57);
    CHECK(t.averages.size() == 10);
    const std::vector<const CpuSample*> all = t.overall();
    REQUIRE(all.size() == 6);
    CHECK(all[0]->time == "12:53:21");
    CHECK_THAT(all[0]->busy_pct, WithinAbs(100 - 82.88, 1e-9));
    CHECK_THAT(all[1]->busy_pct, WithinAbs(100 - 95.31, 1e-9));
    CHECK_THAT(all[5]->busy_pct, WithinAbs(100 - 73.34, 1e-9));
    CHECK(all[0]->user_pct == 2.15);
    CHECK(all[0]->system_pct == 1.84);
    CHECK(all[0]->iowait_pct == 0.12);
    CHECK(t.averages[0].cpu == "all");
    CHECK_THAT(t.averages[0].busy_pct, WithinAbs(100 - 77.86, 1e-9));
    CHECK(t.notes.empty());
}

TEST_CASE("telemetry::parse_cpu_report reads mpstat variants (epoch time, AM/PM, -A)", "[telemetry]") {
    const CpuTelemetry u = parse_cpu_report(fixture("mpstat-U-1-2-all-average.txt"), "u.txt");
    REQUIRE(u.samples.size() == 2);
    CHECK(u.samples[1].time == "1591016002");
    REQUIRE(u.averages.size() == 1);
    CHECK_THAT(u.averages[0].busy_pct, WithinAbs(100 - 88.22, 1e-9));

    const CpuTelemetry c = parse_cpu_report(fixture("mpstat-no-args-centos77.txt"), "c.txt");
    REQUIRE(c.samples.size() == 1);
    CHECK(c.samples[0].time == "03:14:20 PM");
    CHECK_THAT(c.samples[0].busy_pct, WithinAbs(100 - 99.39, 1e-9));
    CHECK(c.cpu_count == 1);

    const CpuTelemetry a = parse_cpu_report(fixture("mpstat-A-ubuntu1804.txt"), "a.txt");
    REQUIRE(a.samples.size() == 2);  // the CPU section only, not NODE or interrupts
    CHECK(a.samples[1].cpu == "0");
    CHECK_THAT(a.samples[0].busy_pct, WithinAbs(100 - 29.09, 1e-9));
}

TEST_CASE("telemetry::parse_cpu_report reads sar -u", "[telemetry]") {
    const CpuTelemetry t = parse_cpu_report(fixture("sar-u-P-ALL-from-file.txt"), "s.txt");
    CHECK(t.kind == TelemetryKind::sar);
    CHECK(t.samples.size() == 36);
    CHECK(t.averages.size() == 10);
    const std::vector<const CpuSample*> all = t.overall();
    REQUIRE(all.size() == 4);
    CHECK(all[3]->time == "13:20:49");
    CHECK_THAT(all[3]->busy_pct, WithinAbs(100 - 75.90, 1e-9));
    CHECK(all[3]->system_pct == 7.53);
    CHECK(t.notes == std::vector<std::string>{"skipped a line that is not a CPU row (lines 51, 52)"});

    const CpuTelemetry one = parse_cpu_report(fixture("sar-u-single-average.txt"), "1.txt");
    CHECK(one.kind == TelemetryKind::sar);
    REQUIRE(one.samples.size() == 1);
    CHECK(one.samples[0].time == "00:00:00");
    CHECK(one.averages.size() == 1);
}

TEST_CASE("telemetry::parse_cpu_report reads top -b frames and the last process table", "[telemetry]") {
    const CpuTelemetry t = parse_cpu_report(fixture("top-b-n1-procps339-KiB-truncated-cmd.txt"), "t.txt");
    CHECK(t.kind == TelemetryKind::top);
    REQUIRE(t.samples.size() == 1);
    CHECK(t.samples[0].cpu == "all");
    CHECK(t.samples[0].time == "21:34:01");
    CHECK_THAT(t.samples[0].busy_pct, WithinAbs(5.0, 1e-9));
    CHECK(t.samples[0].user_pct == 0.8);
    CHECK(t.samples[0].iowait_pct == 0.4);
    REQUIRE(t.processes.size() == 18);
    CHECK(t.processes[0].pid == "10175");
    CHECK(t.processes[0].cpu_pct == 68.0);
    CHECK(t.processes[0].command == "python");
    CHECK(t.processes[9].command == "kworker/u1+");

    const CpuTelemetry m = parse_cpu_report(fixture("top-b-n1-ubuntu2010-MiB.txt"), "m.txt");
    REQUIRE(m.samples.size() == 1);
    CHECK_THAT(m.samples[0].busy_pct, WithinAbs(100 - 93.8, 1e-9));
    REQUIRE(m.processes.size() == 23);
    CHECK(m.processes[7].command == "kworker/u256:0-events_freezable_power_");

    const CpuTelemetry two = parse_cpu_report(fixture("top-b-n3-centos77-KiB-two-frames.txt"), "2.txt");
    REQUIRE(two.samples.size() == 2);
    CHECK_THAT(two.samples[0].busy_pct, WithinAbs(100 - 88.2, 1e-9));
    CHECK_THAT(two.samples[1].busy_pct, WithinAbs(100 - 99.0, 1e-9));
    CHECK(two.samples[1].time == "11:24:53");
    REQUIRE(two.processes.size() == 7);  // the second frame's rows
    CHECK(two.processes[0].command == "kworker/0:1");
}

TEST_CASE("telemetry::parse_cpu_report rejects what is none of mpstat, sar, top", "[telemetry]") {
    CHECK(error_of([] { parse_cpu_report("hello\n", "x.txt"); }) ==
          "x.txt:1:1: no 'CPU ... %idle' header; expected mpstat, sar -u or top -b output");
    CHECK(error_of([] { parse_cpu_report("12:00:00 CPU %usr %idle\n12:00:01 all 5.0 x\n", "x.txt"); }) ==
          "x.txt:2:18: column '%idle': 'x' is not a number");
    CHECK(error_of([] { parse_cpu_report("top - 1\nTasks: 1\n", "x.txt"); }) ==
          "x.txt:1:1: no '%Cpu(s):' line; expected `top -b` output");
}

// ---------------------------------------------------------------------------------------------
// perf report

TEST_CASE("telemetry::parse_perf_report reads a full --stdio report", "[telemetry]") {
    const PerfProfile p = parse_perf_report(fixture("perf-report-stdio-header-full-perf4.4-tracepoint.txt"), "p.txt");
    CHECK(p.total_samples == 56);
    CHECK(p.event == "syscalls:sys_enter_connect");
    REQUIRE(p.symbols.size() == 7);
    CHECK(p.symbols[0].self_pct == 42.86);
    CHECK(p.symbols[0].command == "haproxy");
    CHECK(p.symbols[0].shared_object == "libc-2.23.so");
    CHECK(p.symbols[0].symbol == "connect");
    CHECK(p.symbols[0].mode == '.');
    CHECK(p.symbols[6].command == "systemd-cgroups");
    CHECK(p.symbols[6].shared_object == "libpthread-2.23.so");
    CHECK(p.symbols[6].symbol == "__GI___libc_connect");
    CHECK(p.notes.empty());
}

TEST_CASE("telemetry::parse_perf_report reads header-less rows with padded symbols", "[telemetry]") {
    const PerfProfile p =
        parse_perf_report(fixture("perf-report-python-imagenet-dataloader-libjpeg-rows.txt"), "p.txt");
    REQUIRE(p.symbols.size() == 7);
    CHECK(p.symbols[1].symbol == "__memmove_ssse3_back");
    CHECK(p.symbols[3].shared_object == "libjpeg-bcb94a84.so.9.2.0");
    CHECK(p.symbols[3].symbol == "jpeg_idct_16x16");
    CHECK(p.symbols[3].self_pct == 2.73);
    CHECK(p.symbols[6].symbol == "jpeg_idct_islow");
    CHECK(p.notes == std::vector<std::string>{
                         "no '# Overhead ...' header: columns read as Overhead, Command, Shared Object, Symbol"});
}

TEST_CASE("telemetry::parse_perf_report reads --children -n and skips the call graph", "[telemetry]") {
    const PerfProfile p =
        parse_perf_report(fixture("perf-report-stdio-n-g-python-callgraph-cpython-docs.txt"), "p.txt");
    REQUIRE(p.symbols.size() == 1);
    CHECK(p.symbols[0].children_pct == 91.08);
    CHECK(p.symbols[0].self_pct == 0);
    CHECK(p.symbols[0].samples == 0);
    CHECK(p.symbols[0].command == "python.exe");
    CHECK(p.symbols[0].symbol == "_start");
    CHECK(error_of([] { parse_perf_report("# nothing\n", "x.txt"); }) ==
          "x.txt:1:1: no profile rows ('NN.NN%  command  object  [.] symbol'); expected `perf report --stdio` output");
    CHECK(error_of([] { parse_perf_report("  1x.5%  a  b  [.] c\n", "x.txt"); }) ==
          "x.txt:1:3: '1x.5%' is not a percentage");
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi topo -m

TEST_CASE("telemetry::parse_nvidia_smi_topo reads NVLink, NICs, affinity and TABs", "[telemetry]") {
    const Topology t = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-8xH200-nv18-8nics-tabs-570.txt"), "t.txt");
    REQUIRE(t.devices.size() == 16);
    CHECK(t.gpu_rows().size() == 8);
    const TopoLink* link = t.gpu_link(0, 7);
    REQUIRE(link != nullptr);
    CHECK(link->kind == LinkKind::nvlink);
    CHECK(link->nvlinks == 18);
    CHECK(t.gpu_link(3, 3)->kind == LinkKind::self);
    CHECK(t.gpu(4)->numa_node == 1);
    CHECK(t.gpu(4)->cpu_affinity == "64-127,192-255");
    CHECK(t.gpu(0)->numa_node == 0);
    CHECK(t.devices[8].name == "NIC0");
    CHECK(t.devices[8].nic_name == "mlx5_0");
    CHECK(t.devices[8].gpu_index == -1);
    CHECK(t.links[0][12].kind == LinkKind::pix);  // GPU0 - NIC4
    CHECK(t.links[0][8].kind == LinkKind::node);  // GPU0 - NIC0
    CHECK(t.notes.empty());
}

TEST_CASE("telemetry::parse_nvidia_smi_topo reads PCIe-only and old layouts", "[telemetry]") {
    const Topology phb = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-2x1080ti-phb.txt"), "p.txt");
    REQUIRE(phb.devices.size() == 2);
    CHECK(phb.gpu_link(0, 1)->kind == LinkKind::phb);
    CHECK_FALSE(phb.gpu(1)->numa_node.has_value());  // N/A
    CHECK(phb.gpu(1)->cpu_affinity == "0-11");

    const Topology sys = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-8gpu-pcie-sys-2numa-tabs.txt"), "s.txt");
    CHECK(sys.gpu_link(0, 4)->kind == LinkKind::sys);
    CHECK(sys.gpu(3)->numa_node == 0);
    CHECK(sys.gpu(4)->numa_node == 1);

    const Topology k40 =
        parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-4xK40m-pcie-soc-mlx4-tabs-old-format.txt"), "k");
    REQUIRE(k40.devices.size() == 5);
    CHECK(k40.gpu_link(0, 2)->kind == LinkKind::sys);
    CHECK(k40.gpu_link(0, 2)->text == "SOC");
    CHECK(k40.gpu_link(2, 3)->kind == LinkKind::phb);
    CHECK(k40.gpu(2)->cpu_affinity == "6-11");
    CHECK(k40.devices[4].name == "mlx4_0");
    CHECK(k40.devices[4].cpu_affinity.empty());

    const Topology one = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-1xH100-590-ansi-escapes.txt"), "1.txt");
    REQUIRE(one.devices.size() == 1);
    CHECK(one.gpu(0)->cpu_affinity == "0-19");
    CHECK(one.gpu(0)->numa_node == 0);

    const Topology a100 = parse_nvidia_smi_topo(fixture("nvidia-smi-topo-m-8xA100-nvlink-nics.txt"), "a.txt");
    CHECK(a100.devices.size() == 25);
    CHECK(a100.gpu_link(1, 6)->nvlinks == 12);
    CHECK(a100.devices[24].nic_name == "mlx5_bond_0");

    CHECK(error_of([] { parse_nvidia_smi_topo("Legend:\n  X = Self\n", "x.txt"); }) ==
          "x.txt:1:1: no header row starting with GPU0; expected `nvidia-smi topo -m` output");
}

// ---------------------------------------------------------------------------------------------
// nvidia-smi -q and nvlink -s

TEST_CASE("telemetry::parse_nvidia_smi_q reads an A100 report (535)", "[telemetry]") {
    const SmiReport r = parse_nvidia_smi_q(fixture("nvidia-smi-q-A100-SXM4-40GB-535.txt"), "q.txt");
    CHECK(r.driver_version == "535.129.03");
    CHECK(r.cuda_version == "12.2");
    CHECK(r.attached_gpus == 8);
    REQUIRE(r.gpus.size() == 1);
    const SmiGpu& g = r.gpus[0];
    CHECK(g.bus_id == "00000000:2F:00.0");
    CHECK(g.line == 9);
    CHECK(g.product_name == "NVIDIA A100-SXM4-40GB");
    CHECK(g.product_architecture == "Ampere");
    CHECK(g.board_part_number == "692-2G506-0200-002");
    CHECK(g.gpu_part_number == "20B0-884-A1");
    CHECK(g.vbios_version == "92.00.36.00.04");
    CHECK(g.pci_device_id == 0x20B0u);
    CHECK(g.pci_vendor_id == 0x10DEu);
    CHECK(g.fb_total_bytes == 40960 * mib);
    CHECK(g.fb_used_bytes == 4 * mib);
    CHECK(g.ecc_mode == "Enabled");
    CHECK(g.ecc_volatile.correctable == 0);
    CHECK(g.ecc_aggregate.uncorrectable == 0);
    CHECK_FALSE(g.retired_single_bit.has_value());  // N/A on A100 (rows are remapped instead)
    CHECK(g.remapped_correctable == 0);
    CHECK(g.remapped_pending == false);
    CHECK(g.remapped_failure == false);
    CHECK(g.pcie_gen_max == 4);
    CHECK(g.pcie_gen_current == 4);
    CHECK(g.pcie_gen_device_max == 4);
    CHECK(g.pcie_gen_host_max == 3);
    CHECK(g.pcie_width_max == 16);
    CHECK(g.pcie_width_current == 16);
    CHECK(g.pcie_replays == 0);
    CHECK(g.performance_state == "P0");
    CHECK(g.clocks_idle == true);
    CHECK(g.gpu_util_pct == 0);
    CHECK(g.power_draw_watts == 52.45);
    CHECK(g.power_limit_watts == 400);
    CHECK(g.default_power_limit_watts == 400);
    CHECK(g.max_power_limit_watts == 400);
    CHECK(g.sm_clock_mhz == 210);
    CHECK(g.max_sm_clock_mhz == 1410);
    CHECK(g.max_memory_clock_mhz == 1215);
    CHECK(g.gpu_temp_c == 22);
    CHECK(g.memory_temp_c == 40);
    CHECK(g.shutdown_temp_c == 92);
    CHECK(g.slowdown_temp_c == 89);
    CHECK(g.mig_mode == "Disabled");
    CHECK(g.field("PCI / GPU Link Info / Link Width / Max")->line == 70);
    CHECK(r.notes == std::vector<std::string>{"the report says 8 GPUs are attached but holds 1 GPU section"});
}

TEST_CASE("telemetry::parse_nvidia_smi_q reads the 565 and 590 layouts", "[telemetry]") {
    const SmiReport sxm = parse_nvidia_smi_q(fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt"), "s.txt");
    REQUIRE(sxm.gpus.size() == 1);
    const SmiGpu& s = sxm.gpus[0];
    CHECK(s.product_name == "NVIDIA H100 80GB HBM3");
    CHECK(s.pci_device_id == 0x2330u);
    CHECK(s.fb_total_bytes == 81559 * mib);
    CHECK(s.pcie_replays == 7);
    CHECK(s.pcie_gen_host_max == 5);
    CHECK(s.ecc_volatile.uncorrectable == 0);  // Parity + SEC-DED + DRAM
    CHECK(s.ecc_flags.empty());
    CHECK(s.fabric_state == "Completed");
    CHECK(s.fabric_status == "Success");
    CHECK(s.default_power_limit_watts == 700);
    CHECK(s.power_draw_watts == 100.89);

    const SmiReport load = parse_nvidia_smi_q(fixture("nvidia-smi-q-H100-80GB-590-load.txt"), "l.txt");
    CHECK(load.driver_version == "590.48.01");
    CHECK(load.cuda_version == "13.1");
    REQUIRE(load.gpus.size() == 1);
    const SmiGpu& l = load.gpus[0];
    CHECK(l.gpu_util_pct == 100);         // "GPU" (590) rather than "Gpu"
    CHECK(l.power_draw_watts == 629.45);  // "Average Power Draw"
    CHECK_FALSE(l.pcie_gen_host_max.has_value());
    CHECK(l.clocks_idle == false);
    CHECK(l.fb_used_bytes == 19818 * mib);
    CHECK(l.memory_temp_c == 55);
    CHECK(l.field("Processes / Process ID")->value == "11327");  // the first of three
    CHECK(load.notes.empty());
}

TEST_CASE("telemetry::parse_nvidia_smi_q reads ECC counts and remapped rows from excerpts", "[telemetry]") {
    const SmiReport r =
        parse_nvidia_smi_q(fixture("nvidia-smi-q-A100-SXM4-80GB-510-ecc-remapped-rows-excerpt.txt"), "e");
    REQUIRE(r.gpus.size() == 1);
    const SmiGpu& g = r.gpus[0];
    CHECK(g.product_name == "NVIDIA A100-SXM4-80GB");
    CHECK(g.ecc_volatile.correctable == 177);
    CHECK(g.ecc_volatile.uncorrectable == 0);
    CHECK(g.ecc_aggregate.correctable == 177);
    CHECK(g.remapped_correctable == 1);
    CHECK(g.remapped_uncorrectable == 0);
    CHECK(g.remapped_pending == true);
    CHECK(g.remapped_failure == false);
    CHECK_FALSE(g.fb_total_bytes.has_value());
    CHECK(r.notes == std::vector<std::string>{"skipped an elision line (an excerpt?) (lines 8, 35)",
                                              "the report says 8 GPUs are attached but holds 1 GPU section"});

    const SmiReport sram = parse_nvidia_smi_q(fixture("nvidia-smi-q-ecc-sram-uncorrectable-excerpt.txt"), "s");
    REQUIRE(sram.gpus.size() == 1);
    CHECK(sram.gpus[0].bus_id.empty());
    CHECK(sram.gpus[0].ecc_volatile.uncorrectable == 1);
    CHECK(sram.gpus[0].ecc_aggregate.uncorrectable == 5);
    CHECK(sram.gpus[0].ecc_aggregate.correctable == 0);
}

TEST_CASE("telemetry::parse_nvidia_smi_q reads old ECC layouts and rejects junk", "[telemetry]") {
    const std::string old =
        "GPU 0000:04:00.0\n"
        "    Product Name                    : Tesla K80\n"
        "    ECC Errors\n"
        "        Volatile\n"
        "            Single Bit\n"
        "                Device Memory       : 3\n"
        "                Total               : 4\n"
        "            Double Bit\n"
        "                Device Memory       : 0\n"
        "                Total               : 2\n"
        "    Retired Pages\n"
        "        Single Bit ECC              : 1\n"
        "        Double Bit ECC              : 0\n"
        "        Pending                     : Yes\n";
    const SmiReport r = parse_nvidia_smi_q(old, "o.txt");
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].ecc_volatile.correctable == 4);
    CHECK(r.gpus[0].ecc_volatile.uncorrectable == 2);
    CHECK_FALSE(r.gpus[0].ecc_aggregate.correctable.has_value());
    CHECK(r.gpus[0].retired_single_bit == 1);
    CHECK(r.gpus[0].retired_pending == true);

    CHECK(error_of([] { parse_nvidia_smi_q("hello\n", "x.txt"); }) ==
          "x.txt:1:1: no 'GPU <bus id>' section with 'Key : Value' lines; expected `nvidia-smi -q` output");
    CHECK(error_of([] { parse_nvidia_smi_q(fixture("nvidia-smi-dmon-s-u-pre535-format.txt"), "d.txt"); }) ==
          "d.txt:1:1: no 'GPU <bus id>' section with 'Key : Value' lines; expected `nvidia-smi -q` output");
    CHECK(error_of([] {
              parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : lots MiB\n", "x.txt");
          }) == "x.txt:3:17: 'FB Memory Usage / Total': 'lots MiB' is not a number");
}

TEST_CASE("telemetry::parse_nvidia_smi_nvlink reads link rates and inactive links", "[telemetry]") {
    const std::vector<NvlinkGpu> h100 = parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-H100-590-tab.txt"), "h");
    REQUIRE(h100.size() == 1);
    CHECK(h100[0].index == 0);
    CHECK(h100[0].name == "NVIDIA H100 80GB HBM3");
    REQUIRE(h100[0].links.size() == 18);
    CHECK(h100[0].links[17].link == 17);
    CHECK(h100[0].links[17].active);
    CHECK(h100[0].links[17].bytes_per_s == 26.562e9);

    const std::vector<NvlinkGpu> v100 =
        parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-V100-inactive-links-excerpt.txt"), "v");
    REQUIRE(v100.size() == 1);
    CHECK(v100[0].index == 3);
    REQUIRE(v100[0].links.size() == 6);
    CHECK_FALSE(v100[0].links[3].active);
    CHECK_FALSE(v100[0].links[5].active);
    CHECK(v100[0].links[4].bytes_per_s == 25.781e9);

    const std::vector<NvlinkGpu> gb200 = parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-s-GB200-excerpt.txt"), "g");
    REQUIRE(gb200.size() == 2);
    CHECK(gb200[0].links.size() == 18);
    CHECK(gb200[0].links[0].bytes_per_s == 53.125e9);

    // nvlink -e prints error counters, not link states: no links are read from it.
    const std::vector<NvlinkGpu> errors = parse_nvidia_smi_nvlink(fixture("nvidia-smi-nvlink-e-H100-excerpt.txt"), "e");
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].links.empty());
    CHECK(error_of([] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: fast\n", "x.txt"); }) ==
          "x.txt:2:11: link state 'fast' is neither a rate in GB/s nor <inactive>");
}

TEST_CASE("telemetry::parse_nvidia_smi_q skips nvlink -s blocks in the same text", "[telemetry]") {
    const std::string text =
        fixture("nvidia-smi-q-H100-SXM5-80GB-565.txt") + fixture("nvidia-smi-nvlink-s-H100-590-tab.txt");
    const SmiReport r = parse_nvidia_smi_q(text, "both.txt");
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].pci_device_id == 0x2330u);
    CHECK(r.notes.size() == 1);  // only "8 attached, 1 section"
    CHECK(parse_nvidia_smi_nvlink(text, "both.txt").at(0).links.size() == 18);
}

// ---------------------------------------------------------------------------------------------
// Untrusted input: every parser either returns or throws InputError, whatever the bytes.

TEST_CASE("telemetry parsers never crash on mutated real captures", "[telemetry]") {
    const std::vector<std::string> seeds = {fixture("nvidia-smi-dmon-s-mutc-o-TD.txt"),
                                            fixture("dcgmi-dmon-e-1001-1004-g-mig-group-dcgm-docs.txt"),
                                            fixture("nvidia-smi-query-gpu-csv-header-units.txt"),
                                            fixture("mpstat-P-ALL-1-repeated-headers.txt"),
                                            fixture("top-b-n3-centos77-KiB-two-frames.txt"),
                                            fixture("perf-report-stdio-n-g-python-callgraph-cpython-docs.txt"),
                                            fixture("nvidia-smi-topo-m-8xH200-nv18-8nics-tabs-570.txt"),
                                            fixture("nvidia-smi-q-H100-80GB-590-load.txt"),
                                            fixture("nvidia-smi-nvlink-s-V100-inactive-links-excerpt.txt")};
    std::mt19937 random(20261130);
    static constexpr char junk_bytes[] = "\0\x1b[#%:,-.\t\n \xff\xc3 0123456789eE+NAXv";
    const std::string junk(junk_bytes, sizeof junk_bytes - 1);  // keeps the NUL
    int accepted = 0;
    int refused = 0;
    for (int round = 0; round < 400; ++round) {
        std::string text = seeds[static_cast<std::size_t>(round) % seeds.size()];
        const int edits = 1 + static_cast<int>(random() % 20);
        for (int e = 0; e < edits && !text.empty(); ++e) {
            const std::size_t at = random() % text.size();
            switch (random() % 3) {
                case 0:
                    text.erase(at, 1 + random() % 8);
                    break;
                case 1:
                    text.insert(at, 1, junk[random() % junk.size()]);
                    break;
                default:
                    text[at] = junk[random() % junk.size()];
                    break;
            }
        }
        // The fuzz harness runs every parser and aborts unless each one returns finite,
        // non-negative readings or throws a well-formed InputError (fuzz/harness.hpp).
        gpusel::fuzz::fuzz_telemetry(reinterpret_cast<const std::uint8_t*>(text.data()), text.size());
        const auto tally = [&](auto&& parse) {
            try {
                parse();
                ++accepted;
            } catch (const InputError&) {
                ++refused;
            }
        };
        tally([&] { (void)parse_nvidia_smi_dmon(text, "f"); });
        tally([&] { (void)parse_dcgmi_dmon(text, "f"); });
        tally([&] { (void)parse_nvidia_smi_query(text, "f"); });
        tally([&] { (void)parse_cpu_report(text, "f"); });
        tally([&] { (void)parse_perf_report(text, "f"); });
        tally([&] { (void)parse_nvidia_smi_topo(text, "f"); });
        tally([&] { (void)parse_nvidia_smi_q(text, "f"); });
        tally([&] { (void)parse_nvidia_smi_nvlink(text, "f"); });
    }
    // Both outcomes must occur, or the mutations never reach the parsers' value paths (all
    // refused) or never break anything (all accepted).
    CHECK(accepted > 400);
    CHECK(refused > 400);
}

// ---------------------------------------------------------------------------------------------
// Readings no tool prints (lines.hpp): negative values, percentages above 100, counters beyond
// 64 bits. Each used to be accepted and reached the verdicts ("busy 5e29 % of the time"), or
// overflowed to infinity once scaled (1e305 MiB) or to a wrapped integer ("Samples: -5").

TEST_CASE("telemetry parsers refuse readings that no tool prints", "[telemetry]") {
    const std::string dmon_header = "# gpu   sm   fb\n# Idx    %   MB\n";
    CHECK(error_of([&] { parse_nvidia_smi_dmon(dmon_header + "    0   -5   10\n", "d.txt"); }) ==
          "d.txt:3:9: column 'sm': '-5' is negative");
    CHECK(error_of([&] { parse_nvidia_smi_dmon(dmon_header + "    0  1e30  10\n", "d.txt"); }) ==
          "d.txt:3:8: column 'sm': '1e30' is above 100 %");
    CHECK(error_of([&] { parse_nvidia_smi_dmon(dmon_header + "    0   50 1e305\n", "d.txt"); }) ==
          "d.txt:3:12: column 'fb': '1e305' is larger than nvidia-smi or DCGM can print (2^64)");
    // The bounds themselves are readings.
    const GpuTelemetry edge = parse_nvidia_smi_dmon(dmon_header + "    0  100 0\n", "d.txt");
    CHECK(value(edge.samples[0], GpuMetric::sm_util_pct) == 100);
    CHECK(value(edge.samples[0], GpuMetric::fb_used_bytes) == 0);

    CHECK(error_of([] { parse_dcgmi_dmon("#Entity   GRACT\nID\nGPU 0     1.5\n", "g.txt"); }) ==
          "g.txt:3:11: column 'GRACT': '1.5' is above 1 (a ratio)");
    CHECK(value(parse_dcgmi_dmon("#Entity   GRACT\nID\nGPU 0     1.000\n", "g.txt").samples[0],
                GpuMetric::gr_engine_active_pct) == 100);

    const std::string query_header = "index, utilization.gpu [%], memory.used [MiB]\n";
    CHECK(error_of([&] { parse_nvidia_smi_query(query_header + "0, 101 %, 10 MiB\n", "q.txt"); }) ==
          "q.txt:2:4: field 'utilization.gpu': '101 %' is above 100 %");
    CHECK(error_of([&] { parse_nvidia_smi_query(query_header + "0, 5 %, -10 MiB\n", "q.txt"); }) ==
          "q.txt:2:9: field 'memory.used': '-10 MiB' is negative");

    const std::string mpstat = "12:00:00 PM  CPU    %usr   %sys %iowait   %idle\n";
    CHECK(error_of([&] { parse_cpu_report(mpstat + "12:00:01 PM  all  100.01   0.00    0.00    0.00\n", "m.txt"); }) ==
          "m.txt:2:19: column '%usr': '100.01' is above 100 %");
    CHECK(error_of([&] { parse_cpu_report(mpstat + "12:00:01 PM  all    1.00   0.00    0.00   -1.00\n", "m.txt"); }) ==
          "m.txt:2:43: column '%idle': '-1.00' is negative");

    const std::string top_head =
        "top - 23:06:21 up 2 min\n%Cpu(s):  3.1 us,  3.1 sy, 93.8 id\n\n"
        "    PID USER      %CPU COMMAND\n";
    const CpuTelemetry top = parse_cpu_report(top_head + "      1 root     400.0 python\n", "t.txt");
    REQUIRE(top.processes.size() == 1);
    CHECK(top.processes[0].cpu_pct == 400);  // four CPUs busy
    CHECK(error_of([&] { parse_cpu_report(top_head + "      1 root     1e30 python\n", "t.txt"); }) ==
          "t.txt:5:18: column '%CPU': '1e30' is above 819200 %");
    CHECK(error_of([] {
              parse_cpu_report("top - 23:06:21 up 2 min\n%Cpu(s):  3.1 us,  3.1 sy, 193.8 id\n", "t.txt");
          }) == "t.txt:2:28: CPU share: '193.8 id' is above 100 %");

    CHECK(error_of([] { parse_perf_report("  127.30%  python  libjpeg.so  [.] decode_mcu\n", "p.txt"); }) ==
          "p.txt:1:3: '127.30%' is above 100 %");
    CHECK(error_of([] {
              parse_perf_report("# Samples: -5  of event 'cycles'\n  27.30%  python  libjpeg.so  [.] decode_mcu\n",
                                "p.txt");
          }) == "p.txt:1:12: 'Samples:' '-5' is not a sample count");
    CHECK(error_of([] {
              parse_perf_report("# Samples: 1e300G  of event 'cycles'\n  27.30%  python  libjpeg.so  [.] decode_mcu\n",
                                "p.txt");
          }) == "p.txt:1:12: 'Samples:' '1e300G' is not a sample count");
    CHECK(
        parse_perf_report("# Samples: 12M  of event 'cycles'\n  27.30%  python  libjpeg.so  [.] decode_mcu\n", "p.txt")
            .total_samples == 12e6);

    CHECK(error_of([] {
              parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : 1e30 MiB\n", "x.txt");
          }) == "x.txt:3:17: 'FB Memory Usage / Total': '1e30 MiB' is larger than nvidia-smi can print (2^64)");
    CHECK(
        error_of([] {
            parse_nvidia_smi_q(
                "GPU 0000:04:00.0\n    PCI\n        GPU Link Info\n            PCIe Generation\n"
                "                Max : 5000000\n",
                "x.txt");
        }) ==
        "x.txt:5:23: 'PCI / GPU Link Info / PCIe Generation / Max': '5000000' is not a whole number from 0 to 1000000");

    CHECK(error_of([] {
              parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : -81559 MiB\n", "x.txt");
          }) == "x.txt:3:17: 'FB Memory Usage / Total': '-81559 MiB' is negative");
    // Temperatures may be negative: the limit margins of H100 reports (tests/data/telemetry).
    const SmiReport margins = parse_nvidia_smi_q(
        "GPU 0000:04:00.0\n    Temperature\n        GPU Shutdown T.Limit Temp : -8 C\n        GPU Current Temp : 35 "
        "C\n",
        "x.txt");
    REQUIRE(margins.gpus.size() == 1);
    CHECK(margins.gpus[0].fields.at("Temperature / GPU Shutdown T.Limit Temp").value == "-8 C");

    CHECK(error_of([] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: 1e300 GB/s\n", "x.txt"); }) ==
          "x.txt:2:11: link rate '1e300 GB/s' is larger than nvidia-smi can print (2^64)");
    // "Link 1e30" is no link number: the line is not a link line.
    CHECK(parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 1e30: 25 GB/s\n", "x.txt").at(0).links.empty());
}

// The bad-input families of docs/reliability.md ("Telemetry files") for every parser: each
// input is refused at the cell, with the message below (positions counted by hand).
TEST_CASE("telemetry parsers refuse each bad-input family at its position", "[telemetry]") {
    struct Case {
        std::string_view family;
        std::function<void()> parse;
        std::string expected;
    };
    const std::vector<Case> cases = {
        // nvidia-smi dmon
        {"dmon hex", [] { parse_nvidia_smi_dmon("# gpu   sm\n    0   0x10\n", "x"); },
         "x:2:9: column 'sm': '0x10' is not a number"},
        {"dmon inf", [] { parse_nvidia_smi_dmon("# gpu   sm\n    0   inf\n", "x"); },
         "x:2:9: column 'sm': 'inf' is not a number"},
        {"dmon 1e400", [] { parse_nvidia_smi_dmon("# gpu   sm\n    0   1e400\n", "x"); },
         "x:2:9: column 'sm': '1e400' is not a number"},
        // dcgmi dmon
        {"dcgm nan", [] { parse_dcgmi_dmon("#Entity   GRACT\nID\nGPU 0     nan\n", "x"); },
         "x:3:11: column 'GRACT': 'nan' is not a number"},
        {"dcgm extra cell", [] { parse_dcgmi_dmon("#Entity   GRACT\nID\nGPU 0     0.5   0.7\n", "x"); },
         "x:3:17: row has 2 values but the header names 1 fields"},
        {"dcgm 1e400", [] { parse_dcgmi_dmon("#Entity   FBUSD\nID\nGPU 0     1e400\n", "x"); },
         "x:3:11: column 'FBUSD': '1e400' is not a number"},
        {"dcgm absurd", [] { parse_dcgmi_dmon("#Entity   FBUSD\nID\nGPU 0     1e30\n", "x"); },
         "x:3:11: column 'FBUSD': '1e30' is larger than nvidia-smi or DCGM can print (2^64)"},
        {"dcgm given dmon", [] { parse_dcgmi_dmon("# gpu   sm\n    0   5\n", "x"); },
         "x:2:5: data before the '#Entity ...' header line; expected `dcgmi dmon` output"},
        // nvidia-smi --query-gpu
        {"query nan", [] { parse_nvidia_smi_query("index, utilization.gpu [%]\n0, nan %\n", "x"); },
         "x:2:4: field 'utilization.gpu': 'nan %' is not a number"},
        {"query hex", [] { parse_nvidia_smi_query("index, utilization.gpu [%]\n0, 0x10 %\n", "x"); },
         "x:2:4: field 'utilization.gpu': '0x10 %' is not a number"},
        {"query extra cell", [] { parse_nvidia_smi_query("index, utilization.gpu [%]\n0, 5 %, 7\n", "x"); },
         "x:2:9: row has 3 values but there are 2 fields"},
        {"query given dmon", [] { parse_nvidia_smi_query("# gpu   sm\n    0   5\n", "x"); },
         "x:1:1: no header line (captured with --format=csv,noheader?); pass the --query-gpu field list with "
         "--query-fields, e.g. --query-fields index,utilization.gpu,memory.used"},
        // mpstat, sar, top
        {"mpstat nan", [] { parse_cpu_report("12:00:00  CPU  %usr  %idle\n12:00:01  all  nan  99\n", "x"); },
         "x:2:16: column '%usr': 'nan' is not a number"},
        {"mpstat 1e400", [] { parse_cpu_report("12:00:00  CPU  %usr  %idle\n12:00:01  all  1  1e400\n", "x"); },
         "x:2:19: column '%idle': '1e400' is not a number"},
        {"mpstat hex", [] { parse_cpu_report("12:00:00  CPU  %usr  %idle\n12:00:01  all  0x1  99\n", "x"); },
         "x:2:16: column '%usr': '0x1' is not a number"},
        {"top negative", [] { parse_cpu_report("top - 1\n%Cpu(s): -1.0 us, 99.0 id\n", "x"); },
         "x:2:10: CPU share: '-1.0 us' is negative"},
        // perf report
        {"perf nan", [] { parse_perf_report("  nan%  python  libjpeg.so  [.] f\n", "x"); },
         "x:1:3: 'nan%' is not a percentage"},
        {"perf negative", [] { parse_perf_report("  -5.00%  python  libjpeg.so  [.] f\n", "x"); },
         "x:1:3: '-5.00%' is not a percentage"},
        {"perf hex", [] { parse_perf_report("  0x10%  python  libjpeg.so  [.] f\n", "x"); },
         "x:1:3: '0x10%' is not a percentage"},
        {"perf given dmon", [] { parse_perf_report("# gpu   sm\n    0   5\n", "x"); },
         "x:1:1: no profile rows ('NN.NN%  command  object  [.] symbol'); expected `perf report --stdio` output"},
        // nvidia-smi topo -m
        {"topo nan", [] { parse_nvidia_smi_topo("        GPU0   NUMA Affinity\nGPU0     X     nan\n", "x"); },
         "x:2:16: NUMA Affinity 'nan' is not a node number"},
        {"topo negative", [] { parse_nvidia_smi_topo("        GPU0   NUMA Affinity\nGPU0     X     -1\n", "x"); },
         "x:2:16: NUMA Affinity '-1' is not a node number"},
        {"topo 1e400", [] { parse_nvidia_smi_topo("        GPU0   NUMA Affinity\nGPU0     X     1e400\n", "x"); },
         "x:2:16: NUMA Affinity '1e400' is not a node number"},
        {"topo absurd", [] { parse_nvidia_smi_topo("        GPU0   NUMA Affinity\nGPU0     X     1e30\n", "x"); },
         "x:2:16: NUMA Affinity '1e30' is not a node number"},
        // nvidia-smi -q
        {"smi -q nan",
         [] { parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : nan MiB\n", "x"); },
         "x:3:17: 'FB Memory Usage / Total': 'nan MiB' is not a number"},
        {"smi -q hex",
         [] { parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : 0x10 MiB\n", "x"); },
         "x:3:17: 'FB Memory Usage / Total': '0x10 MiB' is not a number"},
        {"smi -q wrong unit",
         [] { parse_nvidia_smi_q("GPU 0000:04:00.0\n    FB Memory Usage\n        Total : 80 GB\n", "x"); },
         "x:3:17: 'FB Memory Usage / Total': '80 GB' is not a size in MiB"},
        {"smi -q 1e400", [] { parse_nvidia_smi_q("GPU 0000:04:00.0\n    Utilization\n        Gpu : 1e400 %\n", "x"); },
         "x:3:15: 'Utilization / Gpu': '1e400 %' is not a number"},
        // nvidia-smi nvlink -s
        {"nvlink nan", [] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: nan GB/s\n", "x"); },
         "x:2:11: link state 'nan GB/s' is neither a rate in GB/s nor <inactive>"},
        {"nvlink negative", [] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: -5 GB/s\n", "x"); },
         "x:2:11: link state '-5 GB/s' is neither a rate in GB/s nor <inactive>"},
        {"nvlink hex", [] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: 0x10 GB/s\n", "x"); },
         "x:2:11: link state '0x10 GB/s' is neither a rate in GB/s nor <inactive>"},
        {"nvlink wrong unit", [] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: 25 Gb/s\n", "x"); },
         "x:2:11: link state '25 Gb/s' is neither a rate in GB/s nor <inactive>"},
        {"nvlink extra cell", [] { parse_nvidia_smi_nvlink("GPU 0: X (UUID: y)\n  Link 0: 25 GB/s fast\n", "x"); },
         "x:2:11: link state '25 GB/s fast' is neither a rate in GB/s nor <inactive>"},
    };
    for (const Case& c : cases) {
        INFO(c.family);
        CHECK(error_of(c.parse) == c.expected);
    }

    // A UTF-8 byte order mark is skipped by every parser (the shared line splitter).
    const std::string bom = "\xEF\xBB\xBF";
    CHECK(parse_nvidia_smi_dmon(bom + "# gpu sm\n 0 5\n", "x").samples.size() == 1);
    CHECK(parse_dcgmi_dmon(bom + "#Entity GRACT\nID\nGPU 0 0.5\n", "x").samples.size() == 1);
    CHECK(parse_nvidia_smi_query(bom + "index, utilization.gpu [%]\n0, 5 %\n", "x").samples.size() == 1);
    CHECK(parse_cpu_report(bom + "12:00:00  CPU  %usr  %idle\n12:00:01  all  1  99\n", "x").samples.size() == 1);
    CHECK(parse_perf_report(bom + "  5.00%  python  libjpeg.so  [.] f\n", "x").symbols.size() == 1);
    CHECK(parse_nvidia_smi_topo(bom + "        GPU0   NUMA Affinity\nGPU0     X     0\n", "x").devices.size() == 1);
    CHECK(parse_nvidia_smi_q(bom + "GPU 0000:04:00.0\n    Product Name : X\n", "x").gpus.size() == 1);
    CHECK(parse_nvidia_smi_nvlink(bom + "GPU 0: X (UUID: y)\n  Link 0: 25 GB/s\n", "x").at(0).links.size() == 1);
    // Another tool's output is no nvlink report: nothing is read (verify --nvlink then refuses).
    CHECK(parse_nvidia_smi_nvlink("# gpu   sm\n    0   5\n", "x").empty());
}

TEST_CASE("telemetry::parse_sample_time reads the tools' times, dated or not", "[telemetry]") {
    CHECK(parse_sample_time("20240104 13:54:35")->seconds == 1704376475);  // dmon -o DT
    CHECK(parse_sample_time("20240104 13:54:35")->dated);
    CHECK(parse_sample_time("2024/01/16 14:44:16.977")->seconds == Approx(1705416256.977));  // --query-gpu
    CHECK(parse_sample_time("2024-02-29 00:00:00")->seconds == 1709164800);                  // a leap day
    CHECK(parse_sample_time("13:54:35")->seconds == 50075);                                  // dmon -o T
    CHECK_FALSE(parse_sample_time("13:54:35")->dated);
    for (const char* bad : {"", "20240104", "1705416256", "24:00:00", "2024/13/01 00:00:00", "13:54", "13:54:35x",
                            "2024/01/16  14:44:16", "03:14:20 PM"}) {
        CAPTURE(bad);
        CHECK_FALSE(parse_sample_time(bad).has_value());
    }
}

TEST_CASE("telemetry::GpuValues holds any set of metrics in little space", "[telemetry]") {
    GpuSample sample;
    CHECK_FALSE(sample.value(GpuMetric::sm_util_pct).has_value());
    sample.set(GpuMetric::pcie_link_width_max, 16);  // the last metric first
    CHECK(sample.value(GpuMetric::pcie_link_width_max) == 16);
    sample.set(GpuMetric::sm_util_pct, 90);
    sample.set(GpuMetric::power_watts, 300);
    sample.set(GpuMetric::sm_util_pct, 91);  // overwritten, not added
    const GpuSample copy = sample;
    GpuSample temporary = sample;
    GpuSample moved = std::move(temporary);
    for (const GpuSample* s : std::initializer_list<const GpuSample*>{&sample, &copy, &moved}) {
        CHECK(s->value(GpuMetric::sm_util_pct) == 91);
        CHECK(s->value(GpuMetric::power_watts) == 300);
        CHECK(s->value(GpuMetric::pcie_link_width_max) == 16);
        CHECK_FALSE(s->value(GpuMetric::mem_util_pct).has_value());
    }
    moved = copy;
    CHECK(moved.value(GpuMetric::power_watts) == 300);
    CHECK(sizeof(GpuSample) <= 40);  // a 16 MiB capture of 4-byte rows holds 4 million of them
}

TEST_CASE("telemetry: rows cut short before their first value are skipped", "[telemetry]") {
    // Such rows carry no reading; a file of them cost a sample each (RSS 696 MiB at 16 MiB).
    const GpuTelemetry d = parse_nvidia_smi_dmon("# gpu sm mem\n0 50 1\n0\n1 60\n", "d");
    CHECK(d.samples.size() == 2);
    CHECK(d.notes == std::vector<std::string>{"skipped a row cut short before its first value (line 3)",
                                              "row cut short; its missing columns have no value (line 4)"});
    const GpuTelemetry g = parse_dcgmi_dmon("#Entity GPUTL\nID\nGPU 0 50\nGPU 0\n", "g");
    CHECK(g.samples.size() == 1);
    CHECK(g.notes == std::vector<std::string>{"skipped a row cut short before its first value (line 4)"});
    const GpuTelemetry q = parse_nvidia_smi_query("index, utilization.gpu [%]\n0, 50\n0\n", "q");
    CHECK(q.samples.size() == 1);
    CHECK(q.notes == std::vector<std::string>{"skipped a row cut short before its first value (line 3)"});
}

TEST_CASE("telemetry: notes are escaped, and a file cannot make more than 50 kinds", "[telemetry]") {
    std::string header = "#Entity";
    for (int i = 0; i < 60; ++i) {
        header += " x" + std::to_string(i);
    }
    const GpuTelemetry g = parse_dcgmi_dmon(header + "\x07\nGPU 0 1\n", "g");
    REQUIRE(g.notes.size() == 51);
    CHECK(g.notes[0] == "column 'x0' is not a DCGM field gpusel reads; kept without a metric");
    // 10 more columns and the row cut short
    CHECK(g.notes[50] == "11 more notes of other kinds left out");
    const GpuTelemetry bell = parse_dcgmi_dmon("#Entity GPUTL b\x07\xff\nGPU 0 1 2\n", "g");
    CHECK(bell.notes == std::vector<std::string>{"column 'b\\x07\\xff' is not a DCGM field gpusel reads; kept without "
                                                 "a metric"});
}

TEST_CASE("telemetry::parse_nvidia_smi_topo bounds the matrix", "[telemetry]") {
    const Topology t = parse_nvidia_smi_topo("\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tNV4\t X \nGPU0\tSYS\tSYS\n", "t");
    REQUIRE(t.devices.size() == 2);
    CHECK(t.gpu_link(0, 1)->kind == LinkKind::nvlink);
    CHECK(t.notes == std::vector<std::string>{"skipped a repeated matrix row (line 4)"});
    std::string wide = "\tGPU0";
    for (int i = 1; i <= 1024; ++i) {
        wide += "\tNIC" + std::to_string(i);
    }
    CHECK(error_of([&] { parse_nvidia_smi_topo(wide + "\nGPU0\t X\n", "t"); }).rfind("t:1:", 0) == 0);
    CHECK_THAT(error_of([&] { parse_nvidia_smi_topo(wide + "\nGPU0\t X\n", "t"); }),
               Catch::Matchers::EndsWith("the header names more than 1024 devices; expected `nvidia-smi topo -m` "
                                         "output"));
}

TEST_CASE("telemetry::parse_nvidia_smi_q bounds names, nesting, GPUs and fields", "[telemetry]") {
    const SmiReport r = parse_nvidia_smi_q(
        "GPU 00000000:2F:00.0\n    " + std::string(200, 'S') + "\n        Key : 1\n    Product Name : H100\n", "q");
    REQUIRE(r.gpus.size() == 1);
    CHECK(r.gpus[0].field("Key") != nullptr);  // the over-long section is skipped, its keys kept
    CHECK(r.gpus[0].product_name == "H100");
    CHECK(r.notes == std::vector<std::string>{"skipped a line that is not nvidia-smi's (a name over 128 bytes, or "
                                              "sections nested deeper than 8) (line 2)"});
    std::string many;
    for (int i = 0; i <= 4096; ++i) {
        many += "GPU 00000000:2F:00.0\n";
    }
    CHECK(error_of([&] { parse_nvidia_smi_q(many, "q"); }) ==
          "q:4097:1: more than 4096 GPU sections; expected one `nvidia-smi -q` report");
}
