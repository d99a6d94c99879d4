// Observed-bottleneck rules over real captures (tests/data/telemetry) and over copies edited to
// show one condition each (derived-*, SOURCES.md says what was changed). Expected numbers were
// computed by hand from the fixtures.

#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "diagnose/diagnose.hpp"
#include "inputs/models.hpp"

using namespace gpusel;
using Catch::Matchers::WithinAbs;

namespace {

std::string fixture(const std::string& name) {
    std::ifstream in(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/" + name, std::ios::binary);
    REQUIRE(in.good());
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

GpuTelemetry dmon(const std::string& name) {
    return parse_nvidia_smi_dmon(fixture(name), name);
}
CpuTelemetry cpu(const std::string& name) {
    return parse_cpu_report(fixture(name), name);
}
PerfProfile perf(const std::string& name) {
    return parse_perf_report(fixture(name), name);
}
Topology topo(const std::string& name) {
    return parse_nvidia_smi_topo(fixture(name), name);
}

const std::vector<std::string> rtx_fields = split_query_fields(
    "index,uuid,name,pci.bus_id,driver_version,utilization.gpu,utilization.memory,memory.total,memory.used,memory.free,"
    "temperature.gpu,temperature.memory,power.draw,power.limit,clocks.gr,clocks.mem,clocks.max.gr,clocks.max.mem,"
    "fan.speed,pstate,pcie.link.gen.current,pcie.link.width.current,encoder.stats.sessionCount",
    "fields");

// A PCIe Gen4 x16 board (the A10 of the host the -o TD capture came from, SOURCES.md).
GpuSpec gen4_card() {
    GpuSpec gpu;
    gpu.id = "TEST-GEN4";
    gpu.memory_bytes = 24.0 * 1024 * 1024 * 1024;  // 24 GiB, as the catalog holds capacities
    gpu.host_link_generation = 4;
    gpu.host_link_lanes = 16;
    return gpu;
}

std::vector<std::string> fired(const Diagnosis& diagnosis) {
    std::vector<std::string> ids;
    for (const Verdict& verdict : diagnosis.verdicts) {
        ids.push_back(verdict.rule->id);
    }
    return ids;
}

bool evaluated(const Diagnosis& diagnosis, const std::string& rule) {
    return std::none_of(diagnosis.not_evaluated.begin(), diagnosis.not_evaluated.end(),
                        [&](const SkippedRule& skipped) { return skipped.rule == rule; });
}

}  // namespace

TEST_CASE("diagnose::summarize interpolates percentiles like numpy", "[diagnose]") {
    const SeriesStats stats = summarize({5, 1, 4, 2, 3});
    CHECK(stats.count == 5);
    CHECK(stats.mean == 3);
    CHECK_THAT(stats.p5, WithinAbs(1.2, 1e-12));   // rank 0.2 between 1 and 2
    CHECK_THAT(stats.p95, WithinAbs(4.8, 1e-12));  // rank 3.8 between 4 and 5
    const SeriesStats one = summarize({7});
    CHECK(one.p5 == 7);
    CHECK(one.p95 == 7);
    CHECK(summarize({}).count == 0);
}

TEST_CASE("diagnose::diagnosis_rules is one consistent table", "[diagnose]") {
    const std::set<std::string> bottlenecks = {"input-pipeline",   "host-transfer",  "memory-capacity",
                                               "memory-bandwidth", "compute",        "communication",
                                               "topology",         "load-imbalance", "idle",
                                               "healthy",          "under-loaded",   "insufficient-data"};
    std::set<std::string> ids;
    for (const DiagnosisRule& rule : diagnosis_rules()) {
        CHECK(ids.insert(rule.id).second);
        CHECK(bottlenecks.count(std::string(to_string(rule.bottleneck))) == 1);
        CHECK_FALSE(rule.rationale.empty());
        CHECK_FALSE(rule.remedies.empty());
        CHECK_FALSE(rule.upgrade_note.empty());
        CHECK(rule.thresholds.empty() == (rule.id == "healthy" || rule.id == "insufficient-data"));
        CHECK(rule.serving_reason.empty() == (rule.scope != RuleScope::not_serving));
    }
    CHECK(ids.size() == 17);
    CHECK(find_rule("under-loaded")->scope == RuleScope::serving_only);
    CHECK(find_rule("under-loaded")->thresholds[0].value == 60);
    CHECK(find_rule("gpu-util-low-fb-full")->scope == RuleScope::not_serving);
    CHECK(find_rule("gpu-util-low-dram-low")->scope == RuleScope::not_serving);
    REQUIRE(find_rule("gpu-util-low-cpu-high") != nullptr);
    CHECK(find_rule("gpu-util-low-cpu-high")->thresholds[0].value == 70);
    CHECK(find_rule("gpu-util-low-cpu-high")->thresholds[1].value == 85);
    CHECK(find_rule("gpu-util-low-dram-low")->thresholds[1].value == 30);
    CHECK(find_rule("gpu-util-low-fb-full")->thresholds[1].value == 90);
    CHECK(find_rule("pcie-saturated")->thresholds[0].value == 85);  // of the achievable rate
    CHECK(find_rule("cpu-jpeg-decode")->thresholds[0].value == 40);
    CHECK(find_rule("cpu-copy-mmap")->thresholds[0].value == 30);
    CHECK(find_rule("no-such-rule") == nullptr);
}

TEST_CASE("diagnose: every bottleneck name round-trips, each perf resource is the verdict diagnose prints for it",
          "[diagnose]") {
    std::set<std::string_view> names;
    for (const auto& [bottleneck, name] : observed_bottleneck_names) {
        CHECK(to_string(bottleneck) == name);
        CHECK(parse_observed_bottleneck(name) == bottleneck);
        CHECK(names.insert(name).second);
    }
    // Every value has its name: none falls through to to_string's "?".
    CHECK(names.size() == static_cast<std::size_t>(ObservedBottleneck::insufficient_data) + 1);
    CHECK_FALSE(parse_observed_bottleneck("interconnect").has_value());  // perf's enum value, not a name
    CHECK_FALSE(parse_observed_bottleneck("Compute").has_value());
    CHECK_FALSE(parse_observed_bottleneck("").has_value());

    // The names `gpusel diagnose` prints in `bottleneck` (docs/diagnose.md), spelled out here.
    const std::pair<Resource, std::string_view> printed[] = {
        {Resource::compute, "compute"},
        {Resource::memory_bandwidth, "memory-bandwidth"},
        {Resource::memory_capacity, "memory-capacity"},
        {Resource::interconnect, "communication"},
        {Resource::host_link, "host-transfer"},
        {Resource::input_pipeline, "input-pipeline"},
        {Resource::launch_overhead, "launch-overhead"},
    };
    CHECK(std::size(printed) == static_cast<std::size_t>(Resource::launch_overhead) + 1);
    for (const auto& [resource, name] : printed) {
        CAPTURE(name);
        CHECK(to_string(from_resource(resource)) == name);
        CHECK(to_string(resource) == name);  // perf's outputs print the same name
        // A diagnose rule gives that verdict, for every resource but launch gaps (no rule sees them).
        const auto& rules = diagnosis_rules();
        const bool diagnosed = std::any_of(rules.begin(), rules.end(), [&](const DiagnosisRule& rule) {
            return rule.bottleneck == from_resource(resource);
        });
        CHECK(diagnosed == (resource != Resource::launch_overhead));
    }
}

TEST_CASE("diagnose: GPU waiting on busy host CPUs", "[diagnose]") {
    DiagnoseInputs in;
    in.dmon = dmon("derived-nvidia-smi-dmon-s-pucm-gpus-2-5-numa-split-40s.txt");
    in.cpu = cpu("derived-mpstat-U-cpu-busy.txt");
    const Diagnosis d = diagnose(in);
    // Both input-pipeline causes hold with high confidence; the error ranks first.
    CHECK(fired(d) == std::vector<std::string>{"gpu-util-low-cpu-high", "gpu-util-low-dram-low"});
    const Verdict& v = d.verdicts[0];
    REQUIRE(v.evidence.size() == 2);
    // sm: the 10-value cycle 50 53 54 47 56 52 49 55 51 48 (+12 on 38 41 ...) per GPU -> mean 51.5
    CHECK(v.evidence[0].metric == "sm_util_pct");
    CHECK(v.evidence[0].mean == 51.5);
    CHECK(v.evidence[0].samples == 160);
    // busy: 100 - 4.88 and 100 - 7.31
    CHECK(v.evidence[1].metric == "cpu_busy_pct");
    CHECK(v.evidence[1].mean == 93.91);
    CHECK(v.evidence[1].share_beyond == 1);
    CHECK(v.expected_gain == 0.485);          // 1 - 0.515
    CHECK(v.confidence == Confidence::high);  // 1 + 0.5 (memory at 16 % < 30 %)
    CHECK(v.score == 1.5);
    CHECK(d.verdicts[1].score == 2);  // data loading: 1 + 1 (saturated CPUs)
    CHECK(v.summary ==
          "The GPUs are busy 52 % of the time while the host CPUs are 94 % busy: the CPU side of the input "
          "pipeline cannot keep up.");
    CHECK(d.job_gpus == std::vector<int>{2, 3, 4, 5});
}

TEST_CASE("diagnose: warm-up is trimmed before the rules look", "[diagnose]") {
    // sm: 5 11 3 10 75 86 99 86 85; median 75: the first four are warm-up, the steady state
    // (75 86 99 86 85, mean 86.2) is neither starved nor GPU-bound.
    DiagnoseInputs in;
    in.dmon = dmon("nvidia-smi-dmon-default-pre535-format.txt");
    in.cpu = cpu("derived-mpstat-U-cpu-busy.txt");
    const Diagnosis d = diagnose(in);
    CHECK(fired(d) == std::vector<std::string>{"healthy"});
    CHECK(d.capture.phases == std::vector<std::string>{"GPU 0: warm-up of 4 samples (lines 3-6) below half the median "
                                                       "utilisation (75 %), left out"});
    REQUIRE(d.capture.per_gpu.size() == 1);
    CHECK_THAT(d.capture.per_gpu[0].busy_pct, WithinAbs(86.2, 1e-9));
    CHECK(d.capture.samples_per_gpu == 5);
    CHECK(d.capture.too_short);
    CHECK(d.verdicts[0].confidence == Confidence::low);
}

TEST_CASE("diagnose: each rule fires on the fixture that shows it", "[diagnose]") {
    SECTION("no-job-running: an idle H100") {
        DiagnoseInputs in;
        in.dmon = dmon("nvidia-smi-dmon-default-H100-590-idle.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"no-job-running"});
        CHECK(d.capture.idle);
        CHECK(d.verdicts[0].confidence == Confidence::low);  // 5 samples: too short
        // All but itself, healthy and insufficient-data (no conditions) and under-loaded (servers only).
        CHECK(d.not_evaluated.size() == diagnosis_rules().size() - 4);
    }
    SECTION("gpu-util-low-fb-full: 4 GPUs at 40 % with 92 % of memory in use") {
        DiagnoseInputs in;
        in.query = parse_nvidia_smi_query(fixture("derived-nvidia-smi-query-noheader-4gpu-low-util-fb-full.txt"), "q",
                                          rtx_fields);
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpu-util-low-fb-full"});
        const Verdict& v = d.verdicts[0];
        CHECK(v.evidence[0].mean == 39.5);  // 38 41 35 44
        CHECK(v.evidence[1].metric == "fb_used_pct");
        CHECK(v.evidence[1].mean == 92.49);  // (90538 + 90536 + 90541 + 90512) / 4 / 97887
        CHECK(v.rule->gpu_upgrade_helps);
    }
    SECTION("pcie-saturated: receive traffic near a Gen4 x16 link's capacity") {
        DiagnoseInputs in;
        in.dmon = dmon("derived-nvidia-smi-dmon-s-mutc-o-TD-pcie-saturated.txt");
        const GpuSpec card = gen4_card();
        in.gpu = &card;
        const Diagnosis d = diagnose(in);
        // The GPU computes 4 % of the time, but the link is busy: not idle, a job waits on copies.
        // Data loading holds too but the busy link argues against it (score 0): ruled out.
        CHECK(fired(d) == std::vector<std::string>{"pcie-saturated"});
        CHECK(d.ruled_out.size() == 2);  // gpu-util-low-dram-low and no-job-running
        const Evidence& e = d.verdicts[0].evidence[0];
        CHECK(e.metric == "pcie_link_use_pct");
        // 28100..29200 MiB/s over 0.8 x 16 x 0.985 x 4 GB/s: 116.85 120.18 121.42 119.14 120.80 119.76 %
        CHECK(e.mean == 119.69);
        CHECK(e.p5 == 117.42);
        CHECK(e.share_beyond == 1);
        CHECK(d.notes ==
              std::vector<std::string>{
                  "framebuffer size from the catalog entry TEST-GEN4 (24 GiB); the usable size nvidia-smi shows "
                  "is a little smaller",
                  "PCIe link capacity from the catalog entry TEST-GEN4 (PCIe Gen4 x16, 31.5 GB/s per direction, "
                  "25.2 GB/s achievable)"});
    }
    SECTION("cpu-jpeg-decode and cpu-copy-mmap: CPU profiles") {
        DiagnoseInputs jpeg;
        jpeg.perf = perf("derived-perf-report-libjpeg-dominant.txt");
        const Diagnosis dj = diagnose(jpeg);
        CHECK(fired(dj) == std::vector<std::string>{"cpu-jpeg-decode"});
        CHECK_THAT(dj.verdicts[0].evidence[0].mean, WithinAbs(27.30 + 24.10 + 19.40, 1e-9));
        CHECK_FALSE(dj.verdicts[0].evidence[0].p5.has_value());

        DiagnoseInputs copy;
        copy.perf = perf("derived-perf-report-memmove-dominant.txt");
        const Diagnosis dc = diagnose(copy);
        CHECK(fired(dc) == std::vector<std::string>{"cpu-copy-mmap"});
        CHECK(dc.verdicts[0].evidence[0].mean == 38.9);
    }
    SECTION("gpu-peers-through-host: two GPUs behind a host bridge") {
        DiagnoseInputs in;
        in.topology = topo("nvidia-smi-topo-m-2x1080ti-phb.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpu-peers-through-host"});
        CHECK(d.verdicts[0].details == std::vector<std::string>{"GPU0-GPU1: PHB"});
        CHECK(d.verdicts[0].evidence[0].mean == 100);
    }
    SECTION("gpus-split-numa: a 2-GPU job on GPUs 0 and 4 of a two-node machine") {
        DiagnoseInputs in;
        in.dmon = dmon("derived-nvidia-smi-dmon-s-m-gpus-0-and-4.txt");
        in.topology = topo("nvidia-smi-topo-m-8xH200-nv18-8nics-tabs-570.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpus-split-numa"});  // NV18 between them: no peer finding
        CHECK(d.job_gpus == std::vector<int>{0, 4});
        CHECK(d.verdicts[0].evidence[0].mean == 2);

        in.topology = topo("nvidia-smi-topo-m-8gpu-pcie-sys-2numa-tabs.txt");
        // Both topology findings; the split ranks first (score 1.5: the split pairs talk over SYS).
        CHECK(fired(diagnose(in)) == std::vector<std::string>{"gpus-split-numa", "gpu-peers-through-host"});
    }
    SECTION("gpu-bound-memory and gpu-bound-compute: busy GPUs") {
        DiagnoseInputs memory;
        memory.dmon = dmon("derived-nvidia-smi-dmon-pucm-memory-bound.txt");
        CHECK(fired(diagnose(memory)) == std::vector<std::string>{"gpu-bound-memory"});
        DiagnoseInputs compute;
        compute.dmon = dmon("nvidia-smi-dmon-default-H100-590-load.txt");
        const Diagnosis d = diagnose(compute);
        CHECK(fired(d) == std::vector<std::string>{"gpu-bound-compute"});
        CHECK(d.verdicts[0].evidence[1].mean == 9.4);  // mem 10 10 9 9 9
        CHECK(d.verdicts[0].rule->gpu_upgrade_helps);
    }
    SECTION("gpu-bound-tensor: the DCGM User Guide's dcgmproftester capture") {
        DiagnoseInputs in;
        in.dcgm = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt"), "d");
        const Diagnosis d = diagnose(in);
        // Three zero samples of warm-up left out: GRACT (0.552 + 0.969 ... 0.972) / 12 = 93.67 %.
        CHECK(fired(d) == std::vector<std::string>{"gpu-bound-tensor"});
        CHECK(d.verdicts[0].evidence[0].metric == "gr_engine_active_pct");
        CHECK(d.verdicts[0].evidence[0].mean == 93.67);
        CHECK(d.verdicts[0].evidence[1].mean == 89.63);      // TENSO
        CHECK(d.verdicts[0].score == 1.5);                   // DRAMA 0 < 60 supports it
        CHECK(d.verdicts[0].confidence == Confidence::low);  // 12 samples: too short
        REQUIRE(d.ruled_out.size() == 1);
        CHECK(d.ruled_out[0].rule->id == "gpu-bound-compute");  // tensor activity argues against plain compute
        CHECK(d.capture.phases.size() == 1);
    }
}

TEST_CASE("diagnose: each rule stays silent on healthy captures it can evaluate", "[diagnose]") {
    SECTION("busy GPU, idle host: no input-pipeline or memory findings") {
        DiagnoseInputs in;
        in.dmon = dmon("nvidia-smi-dmon-default-H100-590-load.txt");
        in.cpu = cpu("mpstat-P-ALL-1-repeated-headers.txt");
        const Diagnosis d = diagnose(in);
        for (const char* rule : {"gpu-util-low-cpu-high", "gpu-util-low-dram-low", "gpu-bound-memory"}) {
            CHECK(evaluated(d, rule));
        }
        CHECK(fired(d) == std::vector<std::string>{"gpu-bound-compute"});
    }
    SECTION("busy GPUs with full memory: no memory-capacity finding") {
        DiagnoseInputs in;
        in.query =
            parse_nvidia_smi_query(fixture("nvidia-smi-query-gpu-csv-noheader-nounits-4gpu-595.txt"), "q", rtx_fields);
        const Diagnosis d = diagnose(in);
        CHECK(evaluated(d, "gpu-util-low-fb-full"));
        CHECK(fired(d) == std::vector<std::string>{"gpu-bound-compute"});
    }
    SECTION("light PCIe traffic: no host-transfer finding") {
        DiagnoseInputs in;
        in.dmon = dmon("nvidia-smi-dmon-s-mutc-o-TD.txt");
        const GpuSpec card = gen4_card();
        in.gpu = &card;
        const Diagnosis d = diagnose(in);
        // The capture is of an idle GPU: 4 % busy, 239 MiB of 24 GiB, the link at 1 %.
        CHECK(fired(d) == std::vector<std::string>{"no-job-running"});
        CHECK(d.ruled_out.empty());
    }
    SECTION("a data-loader profile with 7 % in libjpeg and 4.5 % in memmove") {
        DiagnoseInputs in;
        in.perf = perf("perf-report-python-imagenet-dataloader-libjpeg-rows.txt");
        const Diagnosis d = diagnose(in);
        CHECK(evaluated(d, "cpu-jpeg-decode"));
        CHECK(evaluated(d, "cpu-copy-mmap"));
        // Silent; without GPU utilisation the verdict is insufficient-data, never healthy.
        CHECK(fired(d) == std::vector<std::string>{"insufficient-data"});
    }
    SECTION("NVLink everywhere, the job on all 8 GPUs of two nodes") {
        for (const char* name :
             {"nvidia-smi-topo-m-8xH100-nv18-nonic.txt", "nvidia-smi-topo-m-8xA100-nvlink-nics.txt"}) {
            DiagnoseInputs in;
            in.topology = topo(name);
            const Diagnosis d = diagnose(in);
            CHECK(evaluated(d, "gpu-peers-through-host"));
            CHECK(fired(d) == std::vector<std::string>{"insufficient-data"});  // silent, no utilisation
        }
    }
    SECTION("compute-bound and memory-bound exclude each other") {
        DiagnoseInputs in;
        in.dmon = dmon("derived-nvidia-smi-dmon-pucm-memory-bound.txt");
        const Diagnosis d = diagnose(in);
        CHECK(evaluated(d, "gpu-bound-compute"));
        CHECK(fired(d) == std::vector<std::string>{"gpu-bound-memory"});
    }
}

TEST_CASE("diagnose: verdicts are ordered by confidence, severity, then expected gain", "[diagnose]") {
    DiagnoseInputs in;
    in.dmon = dmon("derived-nvidia-smi-dmon-s-pucm-gpus-2-5-numa-split-40s.txt");
    in.cpu = cpu("derived-mpstat-U-cpu-busy.txt");
    in.perf = perf("derived-perf-report-libjpeg-dominant.txt");
    const Diagnosis d = diagnose(in);
    // All three high: jpeg 70.8 % of samples (gain 0.708) beats the GPUs' 48.5 % idle time; the
    // data-loading warning after both errors.
    CHECK(fired(d) == std::vector<std::string>{"cpu-jpeg-decode", "gpu-util-low-cpu-high", "gpu-util-low-dram-low"});
    CHECK(d.verdicts[0].expected_gain == 0.708);
    CHECK(d.verdicts[0].score == 2.5);  // 1 + 0.5 (GPUs wait) + 1 (CPUs saturated)
    CHECK(d.tell_apart.empty());        // one bottleneck: input-pipeline
}

TEST_CASE("diagnose: the issue's scenarios rank the right cause first", "[diagnose]") {
    SECTION("idle CPUs and a 98 % full framebuffer: memory capacity, not data loading") {
        DiagnoseInputs in;
        in.query =
            parse_nvidia_smi_query(fixture("derived-nvidia-smi-query-gpu-csv-header-units-fb-full-40s.txt"), "q");
        in.cpu = cpu("mpstat-U-1-2-all-average.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpu-util-low-fb-full"});
        CHECK(d.verdicts[0].confidence == Confidence::high);
        CHECK(d.verdicts[0].score == 1.5);
        REQUIRE(d.ruled_out.size() == 1);
        CHECK(d.ruled_out[0].rule->id == "gpu-util-low-dram-low");
        CHECK(d.ruled_out[0].score == -0.5);  // 1 - 0.5 (idle CPUs) - 1 (full framebuffer)
        CHECK_FALSE(d.capture.too_short);
        CHECK(d.capture.duration_s == 39);
    }
    SECTION("PCIe receive at 23.5 GB/s on a Gen4 x16 link: host transfer") {
        DiagnoseInputs in;
        in.dmon = dmon("derived-nvidia-smi-dmon-s-mutc-o-TD-pcie-23.5GBs-40s.txt");
        const GpuSpec card = gen4_card();
        in.gpu = &card;
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"pcie-saturated"});
        CHECK(d.verdicts[0].confidence == Confidence::high);
        CHECK(d.verdicts[0].evidence[0].mean == 93.19);  // 22410 MiB/s of 25.2 GB/s achievable
        REQUIRE(d.ruled_out.size() == 1);
        CHECK(d.ruled_out[0].rule->id == "gpu-util-low-dram-low");
    }
    SECTION("a 4-GPU job on two NUMA nodes over SYS: topology") {
        DiagnoseInputs in;
        in.dmon = dmon("derived-nvidia-smi-dmon-s-pucm-gpus-2-5-numa-split-40s.txt");
        in.topology = topo("nvidia-smi-topo-m-8gpu-pcie-sys-2numa-tabs.txt");
        in.cpu = cpu("mpstat-U-1-2-all-average.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpus-split-numa", "gpu-peers-through-host"});
        CHECK(d.verdicts[0].score == 2);
        REQUIRE(d.ruled_out.size() == 1);
        CHECK(d.ruled_out[0].rule->id == "gpu-util-low-dram-low");
        CHECK(d.capture.per_gpu.size() == 4);
    }
    SECTION("idle: a real DCGM-exporter scrape of an L40S") {
        DiagnoseInputs in;
        in.prometheus = parse_prometheus(fixture("dcgm-exporter-metrics-L40S-595-idle.txt"), "m");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"no-job-running"});
        CHECK(d.capture.idle);
        CHECK(d.capture.too_short);  // one scrape
    }
    SECTION("one GPU of four busier than the rest: a straggler") {
        // The NUMA-split capture with GPU 5 edited to 97 % busy (the others stay near 51 %).
        GpuTelemetry t = dmon("derived-nvidia-smi-dmon-s-pucm-gpus-2-5-numa-split-40s.txt");
        for (GpuSample& sample : t.samples) {
            if (sample.gpu == 5) {
                sample.set(GpuMetric::sm_util_pct, 97);
            }
        }
        DiagnoseInputs in;
        in.dmon = std::move(t);
        const Diagnosis d = diagnose(in);
        const std::vector<std::string> ids = fired(d);
        CHECK(std::find(ids.begin(), ids.end(), "gpu-straggler") != ids.end());
        CHECK(d.capture.per_gpu.back().busy_pct == 97);
    }
}

TEST_CASE("diagnose: Prometheus exports diagnose like their dcgmi equivalent", "[diagnose]") {
    DiagnoseInputs dcgm;
    dcgm.dcgm = parse_dcgmi_dmon(fixture("dcgmi-dmon-e-1001-1004-1005-dcgm-docs.txt"), "d");
    DiagnoseInputs range;
    range.prometheus = parse_prometheus(fixture("derived-prometheus-query-range-dcgmproftester.json"), "r");
    DiagnoseInputs text;
    text.prometheus = parse_prometheus(fixture("derived-dcgm-exporter-metrics-dcgmproftester-15-scrapes.txt"), "t");
    const Diagnosis a = diagnose(dcgm);
    for (const Diagnosis& b : {diagnose(range), diagnose(text)}) {
        CHECK(fired(b) == fired(a));
        CHECK(b.verdicts[0].score == a.verdicts[0].score);
        for (std::size_t i = 0; i < a.verdicts[0].evidence.size(); ++i) {
            CHECK(b.verdicts[0].evidence[i].mean == a.verdicts[0].evidence[i].mean);
            CHECK(b.verdicts[0].evidence[i].samples == a.verdicts[0].evidence[i].samples);
        }
        CHECK(b.capture.phases.size() == 1);
    }
}

TEST_CASE("diagnose: rules without their inputs say what to capture", "[diagnose]") {
    DiagnoseInputs in;
    in.dmon = dmon("derived-nvidia-smi-dmon-s-mutc-o-TD-pcie-23.5GBs-40s.txt");
    const Diagnosis d = diagnose(in);
    std::map<std::string, std::string> reasons;
    for (const SkippedRule& skipped : d.not_evaluated) {
        reasons[skipped.rule] = skipped.reason;
    }
    CHECK(reasons["gpu-util-low-cpu-high"] == "no host CPU report: pass --cpu (mpstat, sar -u or top -b)");
    CHECK(reasons["gpu-util-low-fb-full"] ==
          "framebuffer size unknown: add memory.total to --query, FBTTL (250) to --dcgm, or pass --gpu ID");
    CHECK(reasons["pcie-saturated"] ==
          "PCIe link capacity unknown: add pcie.link.gen.max,pcie.link.width.max to --query, or pass --gpu ID");
    CHECK(reasons["cpu-jpeg-decode"] == "no CPU profile: pass --perf (perf report --stdio)");
    CHECK(reasons["gpu-peers-through-host"] == "no topology: pass --topo (nvidia-smi topo -m)");
    CHECK(d.inputs.size() == 1);
    CHECK(d.inputs[0].samples == 40);

    DiagnoseInputs nothing;
    nothing.cpu = cpu("mpstat-P-ALL-1-repeated-headers.txt");
    const Diagnosis none = diagnose(nothing);
    // No rule can run on a CPU report alone, and without utilisation the verdict is no "healthy".
    CHECK(fired(none) == std::vector<std::string>{"insufficient-data"});
    CHECK(none.not_evaluated.size() ==
          diagnosis_rules().size() - 3);  // all but the two without conditions, under-loaded
}

TEST_CASE("diagnose::estimate_fix_worth uses the performance model on the job's GPUs", "[diagnose]") {
    const Catalog catalog = builtin_catalog();
    const ModelLibrary models = builtin_models();
    const Workload workload =
        load_workload_file(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/diagnose-workload.yaml",
                           LoadContext{&catalog, &models});
    const EfficiencyTable efficiency = builtin_efficiency();

    DiagnoseInputs in;
    in.dmon = dmon("nvidia-smi-dmon-default-pre535-format.txt");
    in.cpu = cpu("derived-mpstat-U-cpu-busy.txt");
    const Diagnosis d = diagnose(in);
    REQUIRE(d.gpu_busy_pct.has_value());
    CHECK_THAT(*d.gpu_busy_pct, WithinAbs(431.0 / 5, 1e-9));  // the steady state: warm-up left out

    const FixWorth none = estimate_fix_worth(d, workload, nullptr, catalog, efficiency);
    CHECK_FALSE(none.available);
    CHECK(none.note == "pass --gpu ID (the catalog id of the job's GPU) to predict what the fixes are worth");

    const GpuSpec* h100 = catalog.find("H100-SXM5");
    REQUIRE(h100 != nullptr);
    const FixWorth worth = estimate_fix_worth(d, workload, h100, catalog, efficiency);
    REQUIRE(worth.available);
    CHECK(worth.gpu == "H100-SXM5");
    CHECK(worth.gpu_count == 1);
    CHECK(worth.unit == "tokens/s");
    // The same query by hand: one GPU, the default layout, the workload without its data section.
    Workload unobstructed = workload;
    unobstructed.data.given = false;
    PerfQuery query;
    query.layout = fitting_layout(unobstructed, *h100, 1, ServingStack::automatic).layout;
    const PerfEstimate direct = estimate_perf(unobstructed, *h100, query, efficiency);
    REQUIRE(direct.training.has_value());
    CHECK(worth.after_fix_per_s == direct.training->tokens_per_s);
    CHECK(worth.model_busy_share == direct.bottleneck.gpu_utilization);
    REQUIRE(worth.now_per_s.has_value());
    const double ratio = std::min(1.0, (431.0 / 5 / 100) / direct.bottleneck.gpu_utilization);
    CHECK_THAT(*worth.now_per_s, WithinAbs(direct.training->tokens_per_s * ratio, 1e-6));
    CHECK(*worth.now_per_s < worth.after_fix_per_s);
    REQUIRE_FALSE(worth.fastest_gpu.empty());
    CHECK(worth.fastest_per_s >= worth.after_fix_per_s);
    CHECK(catalog.find(worth.fastest_gpu)->memory_bytes >= h100->memory_bytes);
}

TEST_CASE("diagnose: capture lengths read each format's times", "[diagnose]") {
    SECTION("Prometheus text timestamps are milliseconds: 40 scrapes 500 ms apart span 19.5 s") {
        std::string text;
        for (int i = 0; i < 40; ++i) {
            text += "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 90 " + std::to_string(1705416256000 + 500LL * i) + "\n";
        }
        DiagnoseInputs in;
        in.prometheus = parse_prometheus(text, "m");
        const Diagnosis d = diagnose(in);
        REQUIRE(d.capture.duration_s.has_value());
        CHECK(*d.capture.duration_s == 19.5);  // was read as seconds: 19,500 s
        CHECK(d.capture.too_short);            // under 30 s
    }
    SECTION("--query-gpu rows written newest first are read in time order, never wrapped past midnight") {
        std::string text = "timestamp, index, utilization.gpu [%]\n";
        for (int i = 40; i >= 0; --i) {
            text += "2024/01/16 14:44:" + std::to_string(i + 10) + ".000, 0, " + std::to_string(i == 0 ? 0 : 90) +
                    "\n";  // the oldest row (the last line) is idle: the warm-up
        }
        DiagnoseInputs in;
        in.query = parse_nvidia_smi_query(text, "q");
        CHECK(in.query->samples.front().line == 42);  // 14:44:10, the last line
        CHECK(in.query->notes ==
              std::vector<std::string>{"the rows are not in time order (newest first?); they are read in time order"});
        const Diagnosis d = diagnose(in);
        REQUIRE(d.capture.duration_s.has_value());
        CHECK(*d.capture.duration_s == 39);  // 14:44:11 to 14:44:50, the warm-up row left out; was 86,361 s
        CHECK(d.capture.phases ==
              std::vector<std::string>{
                  "GPU 0: warm-up of 1 sample (lines 42-42) below half the median utilisation (90 %), left out"});
    }
    SECTION("times of day alone still wrap past midnight") {
        std::string text = "#Time gpu sm\n";
        for (int i = 0; i < 40; ++i) {
            const int second = 50 + i;  // 23:59:50 to 00:00:29
            text += (second < 60 ? "23:59:" + std::to_string(second)
                                 : "00:00:" + std::string(second < 70 ? "0" : "") + std::to_string(second - 60)) +
                    " 0 90\n";
        }
        DiagnoseInputs in;
        in.dmon = parse_nvidia_smi_dmon(text, "d");
        CHECK_FALSE(in.dmon->samples[0].time()->dated);
        const Diagnosis d = diagnose(in);
        REQUIRE(d.capture.duration_s.has_value());
        CHECK(*d.capture.duration_s == 39);
    }
}

TEST_CASE("diagnose: 3 x 10^4 GPU indices take one pass per input, not one per GPU", "[diagnose]") {
    // Warm-up trimming scanned every sample once per job GPU: 10^5 indices took 43 s, 3 x 10^4
    // about 4 s; now well under a second.
    std::string text = "# gpu sm\n";
    for (int gpu = 0; gpu < 30000; ++gpu) {
        text += std::to_string(gpu) + " " + std::to_string(gpu % 2 == 0 ? 90 : 30) + "\n";
    }
    DiagnoseInputs in;
    in.dmon = parse_nvidia_smi_dmon(text, "d");
    const Diagnosis d = diagnose(in);
    CHECK(d.job_gpus.size() == 30000);
    REQUIRE(d.capture.per_gpu.size() == 30000);
    CHECK(d.capture.per_gpu.back().gpu == 29999);
    CHECK(d.capture.per_gpu.back().busy_pct == 30);
    CHECK(d.capture.samples_per_gpu == 1);
    REQUIRE(d.gpu_busy_pct.has_value());
    CHECK(*d.gpu_busy_pct == 60);
}

namespace {

const std::string vllm_query = "derived-nvidia-smi-query-gpu-csv-header-units-H100-vllm-25pct-fb-92pct-40s.txt";

Workload vllm_workload() {
    static const Catalog catalog = builtin_catalog();
    static const ModelLibrary models = builtin_models();
    return load_workload_file(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/diagnose-vllm-workload.yaml",
                              LoadContext{&catalog, &models});
}

std::string skip_reason(const Diagnosis& diagnosis, const std::string& rule) {
    for (const SkippedRule& skipped : diagnosis.not_evaluated) {
        if (skipped.rule == rule) {
            return skipped.reason;
        }
    }
    return "";
}

}  // namespace

TEST_CASE("diagnose: a lightly loaded vLLM server is under-loaded, not short of memory", "[diagnose][serving]") {
    DiagnoseInputs in;
    in.query = parse_nvidia_smi_query(fixture(vllm_query), "q.csv");

    SECTION("without knowing the job: the training reading (the bug this guards against)") {
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpu-util-low-fb-full"});
        CHECK(d.verdicts[0].remedies[0] == "activation checkpointing to free memory for a larger micro-batch");
        CHECK_FALSE(d.serving.serving);
    }
    SECTION("--workload names vLLM: under-loaded at the workload's 3 req/s, ~12 req/s carried") {
        const Workload workload = vllm_workload();
        in.workload = &workload;
        const Diagnosis d = diagnose(in);
        REQUIRE(fired(d) == std::vector<std::string>{"under-loaded"});
        const Verdict& verdict = d.verdicts[0];
        CHECK(verdict.confidence == Confidence::high);  // 40 samples over 39 s; 1 + 0.5 for the held memory
        CHECK(verdict.score == 1.5);
        // utilization.gpu cycles 22 27 24 29 23 26 25 28 21 25: mean 25 exactly.
        CHECK(verdict.evidence[0].mean == 25);
        CHECK(verdict.summary == "under-loaded: 25 % util at 3 req/s; this replica could carry ~12 req/s.");
        CHECK(verdict.expected_gain == 0.75);
        CHECK(d.serving.engine == "vllm");
        CHECK(d.serving.paged);
        CHECK(d.serving.engine_source == "workload chat-vllm (runtime.engine)");
        CHECK(d.serving.requests_per_s == 3);
        CHECK(d.serving.carry_requests_per_s == 12);
        CHECK(d.serving.gpu_memory_utilization == 0.9);
        // 75036-75038 of 81559 MiB: 92.0 %; the detail names it the pre-allocation.
        CHECK(std::find(verdict.details.begin(), verdict.details.end(),
                        "92 % of the framebuffer in use is vllm's pre-allocation (gpu_memory_utilization 0.9), not "
                        "memory pressure") != verdict.details.end());
        CHECK(skip_reason(d, "gpu-util-low-fb-full") ==
              "vllm pre-allocates its memory (gpu_memory_utilization): framebuffer use is not memory pressure, and "
              "training remedies do not apply to a serving job");
        CHECK(skip_reason(d, "gpu-util-low-dram-low") ==
              "a serving job waits for requests, not for a data loader: see under-loaded");
        // No training remedy anywhere in the verdicts.
        for (const Verdict& v : d.verdicts) {
            CHECK(v.remedies == v.rule->remedies);
            for (const std::string& remedy : v.remedies) {
                CHECK(remedy.find("checkpointing") == std::string::npos);
                CHECK(remedy.find("ZeRO") == std::string::npos);
                CHECK(remedy.find("8-bit optimizer") == std::string::npos);
            }
        }
    }
    SECTION("--workload and --gpu: what the replica could carry comes from the performance model") {
        static const Catalog catalog = builtin_catalog();
        const EfficiencyTable efficiency = builtin_efficiency();
        const Workload workload = vllm_workload();
        in.workload = &workload;
        in.gpu = catalog.find("H100-SXM5");
        in.efficiency = &efficiency;
        const Diagnosis d = diagnose(in);
        REQUIRE(fired(d) == std::vector<std::string>{"under-loaded"});
        REQUIRE(d.serving.carry_requests_per_s.has_value());
        CHECK(d.serving.carry_from_model);
        CHECK(d.serving.carry_method ==
              "gpusel's performance model: workload chat-vllm on 1 x H100-SXM5 sustains its load (the workload sets "
              "no latency SLO) up to 18.95 req/s (`gpusel perf` shows the layout)");
        // The same figure as the model gives directly (what `gpusel perf` prints), rounded to 0.01.
        const FittingLayout fitting = fitting_layout(workload, *in.gpu, 1, ServingStack::automatic);
        REQUIRE(fitting.found());
        PerfQuery query;
        query.layout = fitting.layout;
        const PerfEstimate estimate = estimate_perf(workload, *in.gpu, query, efficiency);
        REQUIRE(estimate.inference.has_value());
        CHECK_THAT(*d.serving.carry_requests_per_s,
                   WithinAbs(estimate.inference->max_requests_per_s_meeting_slo, 0.005));
        CHECK(*d.serving.carry_requests_per_s == 18.95);  // pinned: a change of the model shows here
        CHECK(d.verdicts[0].summary == "under-loaded: 25 % util at 3 req/s; this replica could carry ~19 req/s.");
    }
    SECTION("no workload, but VLLM::EngineCore in nvidia-smi's process table: the same verdict") {
        in.processes =
            parse_nvidia_smi_processes(fixture("derived-nvidia-smi-H100-vllm-enginecore-processes.txt"), "smi.txt");
        const Diagnosis d = diagnose(in);
        REQUIRE(fired(d) == std::vector<std::string>{"under-loaded"});
        CHECK(d.serving.engine == "vllm");
        CHECK(d.serving.engine_source == "process 'VLLM::EngineCore' on GPU 0 in smi.txt (line 19)");
        CHECK_FALSE(d.serving.requests_per_s.has_value());  // no workload, no metrics: no rate
        CHECK_FALSE(d.serving.carry_requests_per_s.has_value());
        CHECK(d.verdicts[0].summary ==
              "under-loaded: the GPU is busy 25 % of the time: the replica waits for requests (pass --workload with "
              "inference.requests_per_s, or the engine's metrics with --prom, for the rate it could carry).");
        CHECK(skip_reason(d, "gpu-util-low-fb-full").rfind("vllm pre-allocates", 0) == 0);
    }
    SECTION("busy host CPUs: the engine's host side, with serving remedies, not a data loader's") {
        const Workload workload = vllm_workload();
        in.workload = &workload;
        in.cpu = cpu("derived-mpstat-U-cpu-busy.txt");
        const Diagnosis d = diagnose(in);
        REQUIRE(fired(d) == std::vector<std::string>{"gpu-util-low-cpu-high", "under-loaded"});
        CHECK(d.verdicts[0].summary ==
              "The GPU is busy 25 % of the time while the host CPUs are 94 % busy: the CPU side of the serving "
              "engine cannot keep up.");
        CHECK(d.verdicts[0].remedies == remedies_for(*find_rule("gpu-util-low-cpu-high"), true));
        CHECK(d.verdicts[0].remedies != find_rule("gpu-util-low-cpu-high")->remedies);
        CHECK(d.verdicts[1].confidence == Confidence::low);  // 1 + 0.5 held memory - 1 busy CPUs
        for (const std::string& remedy : d.verdicts[0].remedies) {
            CHECK(remedy.find("DataLoader") == std::string::npos);
            CHECK(remedy.find("DALI") == std::string::npos);
        }
    }
    SECTION("a training workload keeps the training reading, whatever runs beside it") {
        static const Catalog catalog = builtin_catalog();
        static const ModelLibrary models = builtin_models();
        const Workload training =
            load_workload_file(std::string(GPUSEL_SOURCE_DIR) + "/tests/data/telemetry/diagnose-workload.yaml",
                               LoadContext{&catalog, &models});
        in.workload = &training;
        in.processes =
            parse_nvidia_smi_processes(fixture("derived-nvidia-smi-H100-vllm-enginecore-processes.txt"), "smi.txt");
        const Diagnosis d = diagnose(in);
        CHECK(fired(d) == std::vector<std::string>{"gpu-util-low-fb-full"});
        CHECK(d.serving.training);
        CHECK_FALSE(d.serving.serving);
    }
}

TEST_CASE("diagnose: vLLM's own metrics give the measured rate and what the replica could carry",
          "[diagnose][serving]") {
    DiagnoseInputs in;
    in.prometheus = parse_prometheus(fixture("derived-prometheus-federate-vllm-dcgm-H100-5-scrapes.txt"), "fed.txt");
    const Diagnosis d = diagnose(in);
    REQUIRE(fired(d) == std::vector<std::string>{"under-loaded"});
    CHECK(d.verdicts[0].confidence == Confidence::low);  // 5 scrapes: too short
    const ServingContext& s = d.serving;
    CHECK(s.engine == "vllm");
    CHECK(s.engine_source == "metric vllm:generation_tokens_total in fed.txt (line 20)");
    // Hand-computed from the fixture (SOURCES.md): +120 requests, +24000 generated and +122880
    // prompt tokens over 40 s; running 4 5 4 5 4; KV 0.021 0.034 0.019 0.030 0.021.
    CHECK(s.requests_per_s == 3);
    CHECK(s.requests_source == "the engine's finished-request counter in fed.txt");
    CHECK(s.output_tokens_per_s == 600);
    CHECK(s.prompt_tokens_per_s == 3072);
    CHECK(s.running_requests == 4.4);
    CHECK(s.kv_cache_used_pct == 2.5);
    CHECK(s.tpot_s == 0.0072);  // 171.936 s over 23880 tokens
    CHECK(s.ttft_s == 0.045);   // 5.4 s over 120 requests
    CHECK(d.gpu_busy_pct == 25);
    CHECK(s.carry_requests_per_s == 12);
    CHECK(d.verdicts[0].summary == "under-loaded: 25 % util at 3 req/s; this replica could carry ~12 req/s.");
}

TEST_CASE("diagnose: a capture without utilisation is insufficient data, never healthy", "[diagnose]") {
    DiagnoseInputs in;
    in.query = parse_nvidia_smi_query(fixture("derived-nvidia-smi-query-gpu-csv-header-units-inventory-4xH100.txt"),
                                      "inventory.csv");
    const Diagnosis d = diagnose(in);
    REQUIRE(fired(d) == std::vector<std::string>{"insufficient-data"});
    CHECK(d.verdicts[0].rule->bottleneck == ObservedBottleneck::insufficient_data);
    CHECK(d.verdicts[0].summary ==
          "The capture holds no GPU utilisation, so whether the GPUs work or wait cannot be told.");
    CHECK_FALSE(d.gpu_busy_pct.has_value());

    SECTION("with a topology whose rules find nothing: still not healthy") {
        in.topology = topo("nvidia-smi-topo-m-8xH100-nv18-nonic.txt");
        const Diagnosis with_topology = diagnose(in);
        REQUIRE(fired(with_topology) == std::vector<std::string>{"insufficient-data"});
        CHECK(with_topology.verdicts[0].summary ==
              "The capture holds no GPU utilisation, so whether the GPUs work or wait cannot be told (2 rules could "
              "be evaluated and found nothing).");
    }
}

TEST_CASE("diagnose: the process table of nvidia-smi and --query-compute-apps", "[diagnose][telemetry]") {
    const GpuProcessTable box =
        parse_nvidia_smi_processes(fixture("derived-nvidia-smi-H100-vllm-enginecore-processes.txt"), "smi.txt");
    REQUIRE(box.processes.size() == 1);
    CHECK(box.processes[0].gpu == 0);
    CHECK(box.processes[0].pid == "1187342");
    CHECK(box.processes[0].type == "C");
    CHECK(box.processes[0].name == "VLLM::EngineCore");
    CHECK(box.processes[0].used_bytes == 75028.0 * 1024 * 1024);

    const GpuProcessTable old = parse_nvidia_smi_processes(
        "| Processes:                                                       GPU Memory |\n"
        "|  GPU       PID   Type   Process name                             Usage      |\n"
        "|=============================================================================|\n"
        "|    1      4242      C   /usr/bin/python3 -m sglang.launch_server   N/A      |\n"
        "+-----------------------------------------------------------------------------+\n",
        "old.txt");
    REQUIRE(old.processes.size() == 1);
    CHECK(old.processes[0].gpu == 1);
    CHECK(old.processes[0].name == "/usr/bin/python3 -m sglang.launch_server");
    CHECK_FALSE(old.processes[0].used_bytes.has_value());

    const GpuProcessTable csv = parse_nvidia_smi_processes(
        "pid, process_name, used_gpu_memory [MiB]\n1187342, VLLM::EngineCore, 75028 MiB\n", "apps.csv");
    REQUIRE(csv.processes.size() == 1);
    CHECK_FALSE(csv.processes[0].gpu.has_value());
    CHECK(csv.processes[0].name == "VLLM::EngineCore");
    CHECK(csv.processes[0].used_bytes == 75028.0 * 1024 * 1024);

    CHECK(parse_nvidia_smi_processes("+---+\n| Processes: |\n|===|\n|  No running processes found |\n+---+\n", "none")
              .processes.empty());
    CHECK_THROWS_AS(parse_nvidia_smi_processes("GPU 0: NVIDIA H100\n", "x"), InputError);
}

TEST_CASE("diagnose::calibration_yaml writes the measured speeds in the workload format", "[diagnose][serving]") {
    const Catalog catalog = builtin_catalog();
    DiagnoseInputs in;
    in.prometheus = parse_prometheus(fixture("derived-prometheus-federate-vllm-dcgm-H100-5-scrapes.txt"), "fed.txt");
    const Diagnosis d = diagnose(in);
    const GpuSpec* h100 = catalog.find("H100-SXM5");
    REQUIRE(h100 != nullptr);
    const std::string yaml = calibration_yaml(d, h100);
    CHECK(yaml ==
          "# Written by gpusel diagnose --write-calibration: what the capture measured (docs/diagnose.md).\n"
          "# The calibration section of a workload file (docs/workload.md, calibration).\n"
          "calibration:\n"
          "  speed:\n"
          "    # from fed.txt: vllm's generated-token counter over the capture, at 4.4 running requests on average; "
          "1 x H100-SXM5\n"
          "    - {gpu: H100-SXM5, count: 1, metric: output_tokens_per_s, measured: 600, batch: 4}\n"
          "# Measured, but not calibration points:\n"
          "#   mean time per output token 0.0072 s, at 4.4 running requests on average: under load, not the one "
          "request alone the model's tpot is\n"
          "#   GPU utilisation 25.00 % (prometheus-text fed.txt)\n"
          "#   request rate 3 req/s (the engine's finished-request counter in fed.txt)\n"
          "#   prompt tokens 3072/s (fed.txt)\n"
          "#   KV cache 2.5 % used on average (fed.txt)\n"
          "#   framebuffer use is what the device shows (allocations, CUDA context, caches, a serving engine's "
          "pre-allocation); calibration.memory takes the allocated peak at a micro-batch\n");

    // The block loads as a workload's calibration: the same points, read back.
    const ModelLibrary models = builtin_models();
    const Workload workload =
        load_workload_text("format: 1\nname: w\nkind: inference\nmodel: {preset: llama-3.1-8b}\n" + yaml, "w.yaml",
                           LoadContext{&catalog, &models});
    REQUIRE(workload.calibration.speed.size() == 1);
    CHECK(workload.calibration.speed[0].metric == MeasuredMetric::output_tokens_per_s);
    CHECK(workload.calibration.speed[0].measured == 600);
    CHECK(workload.calibration.speed[0].batch == 4);

    SECTION("one request at a time: the time per output token is a tpot point") {
        Diagnosis alone = d;
        alone.serving.running_requests = 1.0;
        const Workload measured = load_workload_text(
            "format: 1\nname: w\nkind: inference\nmodel: {preset: "
            "llama-3.1-8b}\n" +
                calibration_yaml(alone, h100),
            "w.yaml", LoadContext{&catalog, &models});
        REQUIRE(measured.calibration.speed.size() == 2);
        CHECK(measured.calibration.speed[1].metric == MeasuredMetric::tpot);
        CHECK(measured.calibration.speed[1].measured == 0.0072);
    }

    SECTION("no GPU named: refused") {
        CHECK_THROWS_AS(calibration_yaml(d, nullptr), UsageError);
    }
    SECTION("nothing measured that a point holds: refused") {
        DiagnoseInputs plain;
        plain.query = parse_nvidia_smi_query(fixture(vllm_query), "q.csv");
        CHECK_THROWS_AS(calibration_yaml(diagnose(plain), h100), UsageError);
    }
}
