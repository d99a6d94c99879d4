#pragma once
// Telemetry parsers: the text that NVIDIA and Linux tools print, turned into plain samples.
// Formats, capture commands and the samples these parsers were written against:
// docs/diagnose.md and tests/data/telemetry/SOURCES.md.
//
// Inputs are untrusted. Every parser accepts any bytes and never crashes; text that is not the
// expected format, or a cell that should be a number and is not, throws InputError with
// file:line:col. So does a reading no tool prints: a negative value, a percentage above 100 (a
// DCGM ratio above 1), or a counter beyond 2^64 (src/telemetry/lines.hpp). Tolerated on purpose (real captures do all
// of these): header lines repeated mid-stream, blank lines, `-` / `N/A` / `[N/A]` / `[Not Supported]` values (read as
// "no value"), unit suffixes (`23028 MiB`, `0 %`), rows cut short (the missing cells have no value and a note says so),
// tabs, ANSI escapes, CRLF line ends.
//
// Units: values are converted to SI with the unit in the metric name. nvidia-smi's "MB"/"MiB" is
// 2^20 bytes (dmon's `fb` column equals `memory.used [MiB]` of --query-gpu on the same host,
// tests/data/telemetry/SOURCES.md); dmon's `rxpci`/`txpci` "MB/s" is read the same way (2^20 B/s),
// an assumption worth at most 5 % (1e6 vs 2^20).

#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusel {

// Telemetry files are logs and can be long: 16 MiB is about a day of `nvidia-smi dmon -s u` on
// one GPU at one sample per second. Longer captures: sample less often (`-d 5`) or trim.
inline constexpr std::size_t max_telemetry_bytes = 16u << 20;

enum class TelemetryKind {
    nvidia_smi_dmon,
    dcgmi_dmon,
    nvidia_smi_query,
    mpstat,
    sar,
    top,
    perf_report,
    nvidia_smi_topo,
    nvidia_smi_q,
    nvidia_smi_nvlink,
    prometheus_text,         // a DCGM-exporter scrape (/metrics, text exposition format)
    prometheus_query_range,  // a Prometheus HTTP API /api/v1/query_range answer (matrix)
    nvidia_smi_processes,    // the process table of `nvidia-smi`, or --query-compute-apps CSV
};
std::string_view to_string(TelemetryKind kind);  // "nvidia-smi-dmon", "dcgmi-dmon", "mpstat", ...

// ---------------------------------------------------------------------------------------------
// GPU time series: nvidia-smi dmon, dcgmi dmon, nvidia-smi --query-gpu.

enum class GpuMetric {
    sm_util_pct,              // dmon `sm`, query `utilization.gpu`, DCGM 203 GPUTL: % of time a kernel ran
    mem_util_pct,             // dmon `mem`, query `utilization.memory`, DCGM 204 MCUTL: % of time device
                              // memory was read or written
    gr_engine_active_pct,     // DCGM 1001 GRACT (a ratio, × 100)
    sm_active_pct,            // DCGM 1002 SMACT (× 100)
    sm_occupancy_pct,         // DCGM 1003 SMOCC (× 100)
    tensor_active_pct,        // DCGM 1004 TENSO (× 100)
    dram_active_pct,          // DCGM 1005 DRAMA (× 100): share of cycles the memory interface is busy
    fb_used_bytes,            // dmon `fb`, query `memory.used`, DCGM 252 FBUSD
    fb_total_bytes,           // query `memory.total`, DCGM 250 FBTTL
    fb_free_bytes,            // query `memory.free`, DCGM 251 FBFRE
    pcie_tx_bytes_per_s,      // dmon `txpci`, DCGM 1009 PCITX (GPU to host)
    pcie_rx_bytes_per_s,      // dmon `rxpci`, DCGM 1010 PCIRX (host to GPU)
    nvlink_tx_bytes_per_s,    // DCGM 1011 NVLTX
    nvlink_rx_bytes_per_s,    // DCGM 1012 NVLRX
    power_watts,              // dmon `pwr`, query `power.draw`, DCGM 155 POWER
    power_limit_watts,        // query `power.limit`
    gpu_temp_c,               // dmon `gtemp`/`temp`, query `temperature.gpu`, DCGM 150 TMPTR
    mem_temp_c,               // dmon `mtemp`, query `temperature.memory`, DCGM 140 MMTMP
    sm_clock_mhz,             // dmon `pclk`, query `clocks.sm`/`clocks.gr`, DCGM 100 SMCLK
    mem_clock_mhz,            // dmon `mclk`, query `clocks.mem`, DCGM 101 MMCLK
    pcie_link_gen_current,    // query `pcie.link.gen.current`
    pcie_link_gen_max,        // query `pcie.link.gen.max`
    pcie_link_width_current,  // query `pcie.link.width.current` (lanes)
    pcie_link_width_max,      // query `pcie.link.width.max`
};
inline constexpr std::size_t gpu_metric_count = 24;
std::string_view metric_name(GpuMetric metric);  // "sm_util_pct", "fb_used_bytes", ...

// DCGM entity kinds as dcgmi prints them. Other tools report whole GPUs only.
enum class GpuEntity : std::uint8_t { gpu, gpu_instance, compute_instance, other };

// When a sample was taken, as far as the tool printed it.
struct SampleTime {
    double seconds = 0;  // since the Unix epoch when `dated` (the date as printed, read as UTC), else since midnight
    bool dated = false;  // the tool printed a date too: times of different days compare
};

// A time as the tools print it: "20240104 13:54:35" (dmon -o DT), "2024/01/16 14:44:16.977"
// (--query-gpu timestamp), "13:54:35" (dmon -o T, not dated). nullopt for anything else.
std::optional<SampleTime> parse_sample_time(std::string_view text);

// The readings of one sample: at most one value per GpuMetric. Stored compactly: a capture of
// millions of narrow rows holds one or a few values per row, not 24 (docs/diagnose.md, "Limits").
class GpuValues {
public:
    GpuValues() = default;
    GpuValues(const GpuValues& other);
    GpuValues(GpuValues&& other) noexcept;
    GpuValues& operator=(const GpuValues& other);
    GpuValues& operator=(GpuValues&& other) noexcept;
    ~GpuValues();

    std::optional<double> get(GpuMetric metric) const;
    void set(GpuMetric metric, double value);

private:
    std::size_t count() const;
    std::size_t rank(GpuMetric metric) const;  // how many present metrics come before `metric`
    void release();

    std::uint32_t m_present = 0;  // bit i: GpuMetric i has a value
    union {
        double m_one = 0;  // the value, when there is one
        double* m_many;    // the values in metric order, when there are several
    };
};

// Labels of a Prometheus series (DCGM exporter) that say where its samples come from.
struct SampleLabels {
    std::string uuid, host, pod;  // `UUID`, `Hostname`, `pod`
};

// 40 bytes: a 16 MiB capture of 4-byte rows holds four million of them.
struct GpuSample {
    int gpu = 0;                  // the index the tool printed (dmon `gpu`, DCGM entity id, query `index` or row order)
    int line = 0;                 // 1-based line in the file
    std::uint32_t label_set = 0;  // Prometheus: 1 + its index in GpuTelemetry::label_sets; 0 for none
    GpuEntity entity = GpuEntity::gpu;

    std::optional<double> value(GpuMetric metric) const { return m_values.get(metric); }
    void set(GpuMetric metric, double value) { m_values.set(metric, value); }
    // The printed time, read; nullopt when the tool printed none (or only a date).
    std::optional<SampleTime> time() const;
    void set_time(SampleTime time);

private:
    bool m_has_time = false;
    bool m_dated = false;
    double m_seconds = 0;
    GpuValues m_values;
};

// A serving engine's own metrics found in a Prometheus scrape beside (or instead of) the DCGM
// series: vLLM's `vllm:*` and SGLang's `sglang:*` families (their /metrics endpoints). Each
// series is summed over its label sets per scrape (the k-th value of each label set is scrape
// k), so a counter such as vllm:request_success_total{finished_reason=...} is one sum per scrape.
struct ServingPoint {
    double value = 0;
    std::optional<double> time_s;  // the scrape's timestamp (ms in the file), when printed
};
struct ServingMetrics {
    std::string engine;      // "vllm" or "sglang"; empty when the file has none
    std::string first_name;  // the first such metric in the file, for the evidence
    int first_line = 0;
    std::map<std::string, std::vector<ServingPoint>> series;  // by metric name, per scrape

    bool found() const { return !engine.empty(); }
    const std::vector<ServingPoint>* get(const std::string& name) const;
};

struct GpuTelemetry {
    TelemetryKind kind = TelemetryKind::nvidia_smi_dmon;
    std::string file;
    std::vector<std::string> columns;  // column names of the last header, as printed
    // One per GPU per sample time, file order (--query-gpu rows with dated times: time order).
    // A deque: no reallocation that holds every sample twice while a large capture is read.
    std::deque<GpuSample> samples;
    std::vector<SampleLabels> label_sets;  // Prometheus: the distinct label sets of the samples
    std::vector<std::string> notes;        // skipped lines, columns without a value, assumptions
    ServingMetrics serving;                // Prometheus text: vLLM / SGLang metrics, when present

    // Distinct indices of whole GPUs (entity gpu), ascending.
    std::vector<int> gpus() const;
    // Whether any whole-GPU sample has a value for `metric`.
    bool has(GpuMetric metric) const;
    // The Prometheus labels of a sample; empty for the other tools.
    const SampleLabels& labels(const GpuSample& sample) const;
};

// `nvidia-smi dmon` with any -s selection and -o D/T/DT; pre-535 (5-wide) and current (7-wide)
// layouts. Throws InputError when no `# gpu` header is found or a cell is not a number.
GpuTelemetry parse_nvidia_smi_dmon(std::string_view text, const std::string& file);

// `dcgmi dmon -e ID,...`: columns are DCGM field tags (GRACT, SMACT, DRAMA, FBUSD, PCITX, ...);
// unknown tags are kept as columns without a metric (and noted). Entities GPU, GPU-I, GPU-CI.
GpuTelemetry parse_dcgmi_dmon(std::string_view text, const std::string& file);

// `nvidia-smi --query-gpu=FIELDS --format=csv[,noheader][,nounits]`. With a header line the
// columns come from it (units in brackets are used); `fields` must then be empty or name the
// same fields. Without a header (`noheader`), `fields` must list the --query-gpu fields in order
// (nvidia-smi aliases such as `clocks.gr` and `gpu_name` are accepted); otherwise InputError.
GpuTelemetry parse_nvidia_smi_query(std::string_view text, const std::string& file,
                                    const std::vector<std::string>& fields = {});

// Splits a --query-gpu field list ("index,utilization.gpu,memory.used") into names; throws
// InputError (file = `origin`) on an empty name.
std::vector<std::string> split_query_fields(std::string_view list, const std::string& origin);

// DCGM-exporter metrics through Prometheus (docs/diagnose.md has the curl/promtool commands).
// Metric names are the exporter's DCGM_FI_* names; DCGM_FI_PROF_* ratios become percent,
// DCGM_FI_DEV_FB_* MiB become bytes, DCGM_FI_PROF_{PCIE,NVLINK}_*_BYTES stay bytes/s. Labels:
// `gpu` is the index, `UUID`, `Hostname` and `pod` are kept (GpuTelemetry::labels), `GPU_I_ID`
// marks a MIG instance. Series of several hosts are numbered by first appearance of (Hostname, gpu), with a
// note. Other metrics are skipped (noted); DCGM's blank sentinels (values >= 2^63 - 16, e.g.
// DCGM_FI_DEV_MEMORY_TEMP 9223372036854775794 in the exporter's README) read as no value.

// Text exposition format: one scrape, or several appended (`while :; do curl -s URL; sleep
// 1; done`). The k-th value of a series is the k-th sample of its GPU; an optional timestamp
// (milliseconds since the epoch: the exposition format's unit) becomes the sample time, in
// seconds. vLLM (`vllm:`) and SGLang (`sglang:`) metrics in the same text are kept in
// GpuTelemetry::serving. Throws InputError when neither a DCGM_FI_ series nor a serving
// engine's metric is found, or a line is not `name{labels} value [timestamp]`.
GpuTelemetry parse_prometheus_text(std::string_view text, const std::string& file);

// The JSON of /api/v1/query_range (status success, resultType matrix): each result's `metric`
// labels name the series (`__name__`), `values` are [unix seconds, "value"] pairs; samples of
// one GPU at one timestamp form one GpuSample. Errors are positioned (file:line:col).
GpuTelemetry parse_prometheus_query_range(std::string_view text, const std::string& file);

// Either of the two above, told apart by the first non-blank byte ('{' is JSON).
GpuTelemetry parse_prometheus(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// Host CPU: mpstat, sar -u, top -b.

struct CpuSample {
    std::string time;                  // as printed; "Average:" rows are kept apart
    std::string cpu;                   // "all" or a CPU number; top's summary line is "all"
    double busy_pct = 0;               // 100 - %idle
    std::optional<double> user_pct;    // %usr / %user / us
    std::optional<double> system_pct;  // %sys / %system / sy
    std::optional<double> iowait_pct;  // %iowait / wa
    int line = 0;
};

struct CpuProcess {  // a process row of `top -b`
    std::string pid;
    std::string user;
    double cpu_pct = 0;  // of one CPU (top's convention: 400 % = four CPUs busy)
    std::string command;
    int line = 0;
};

struct CpuTelemetry {
    TelemetryKind kind = TelemetryKind::mpstat;  // mpstat, sar or top
    std::string file;
    std::optional<int> cpu_count;  // from the sysstat banner "(9 CPU)"
    // Deques: no reallocation that holds every row twice while a large report is read.
    std::deque<CpuSample> samples;     // interval rows, file order
    std::deque<CpuSample> averages;    // the tool's own "Average:" rows
    std::deque<CpuProcess> processes;  // top: the rows of the last frame, as printed
    std::vector<std::string> notes;

    // Rows for all CPUs together ("all"), in file order.
    std::vector<const CpuSample*> overall() const;
};

// Detects mpstat, sar -u or top -b output. Throws InputError when it is none of them.
CpuTelemetry parse_cpu_report(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// perf report --stdio.

struct PerfSymbol {
    double self_pct = 0;                 // "Overhead", or "Self" with --children
    std::optional<double> children_pct;  // "Children" with --children
    std::optional<double> samples;       // "Samples" with -n
    std::string command;
    std::string shared_object;
    std::string symbol;
    char mode = '.';  // '.' user, 'k' kernel, as printed in [.] / [k]
    int line = 0;
};

struct PerfProfile {
    std::string file;
    std::string event;                    // "cycles", from "# Samples: N of event 'E'"
    std::optional<double> total_samples;  // N from the same line
    std::deque<PerfSymbol> symbols;  // top-level rows in file order (call-graph lines skipped); a deque, as samples
    std::vector<std::string> notes;
};

// Throws InputError when there is no "NN.NN%" row at all.
PerfProfile parse_perf_report(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// nvidia-smi topo -m.

enum class LinkKind { self, nvlink, pix, pxb, phb, node, sys, unknown };
std::string_view to_string(LinkKind kind);  // "X", "NV#", "PIX", "PXB", "PHB", "NODE", "SYS", "?"

struct TopoLink {
    LinkKind kind = LinkKind::unknown;
    int nvlinks = 0;   // # of NV#
    std::string text;  // as printed ("NV18", "SOC")
};

struct TopoDevice {
    std::string name;              // "GPU0", "NIC3", "mlx4_0"
    int gpu_index = -1;            // N of GPUN; -1 for NICs
    std::string nic_name;          // from the NIC legend ("mlx5_0"), NICs only
    std::string cpu_affinity;      // "0-15,32-47"; empty when not printed
    std::optional<int> numa_node;  // "NUMA Affinity"; none for N/A
    int line = 0;
};

struct Topology {
    std::string file;
    std::vector<TopoDevice> devices;           // matrix rows in file order
    std::vector<std::vector<TopoLink>> links;  // [row][column], same order as devices
    std::vector<std::string> notes;

    std::vector<std::size_t> gpu_rows() const;  // rows that are GPUs
    const TopoDevice* gpu(int index) const;     // nullptr when absent
    // Link between two GPUs by index; nullptr when either is absent.
    const TopoLink* gpu_link(int a, int b) const;
};

// Reads the matrix, CPU/NUMA affinity and the NIC legend. Old drivers' SOC reads as SYS
// (same meaning: across the CPU interconnect). Throws InputError without a GPU0 header row.
Topology parse_nvidia_smi_topo(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// nvidia-smi -q and nvidia-smi nvlink -s.

struct SmiField {
    std::string value;
    int line = 0;
    int column = 0;  // of the value
};

struct EccCounts {
    std::optional<double> correctable;    // sum of the printed correctable counts (SRAM + DRAM,
                                          // or "Single Bit" totals on older drivers)
    std::optional<double> uncorrectable;  // the same for uncorrectable / "Double Bit"
};

struct SmiGpu {
    std::string bus_id;  // "00000000:2F:00.0"; empty for an excerpt without a GPU header
    int line = 0;

    std::string product_name, product_brand, product_architecture;
    std::string board_part_number, gpu_part_number, vbios_version;
    std::optional<std::uint32_t> pci_device_id;  // 0x2330 from "Device Id : 0x233010DE"
    std::optional<std::uint32_t> pci_vendor_id;  // 0x10DE

    std::optional<double> fb_total_bytes, fb_used_bytes, fb_reserved_bytes;

    std::string ecc_mode;  // "Enabled", "Disabled", "" when not printed
    EccCounts ecc_volatile, ecc_aggregate;
    std::vector<std::string> ecc_flags;  // keys under ECC Errors that say Yes (SRAM Threshold
                                         // Exceeded, Channel Repair Pending, ...)

    std::optional<double> retired_single_bit, retired_double_bit;
    std::optional<bool> retired_pending;
    std::optional<double> remapped_correctable, remapped_uncorrectable;
    std::optional<bool> remapped_pending, remapped_failure;

    std::optional<int> pcie_gen_max, pcie_gen_current, pcie_gen_device_max, pcie_gen_host_max;
    std::optional<int> pcie_width_max, pcie_width_current;
    std::optional<double> pcie_replays;

    std::string performance_state;    // "P0"
    std::optional<bool> clocks_idle;  // Clocks Event (Throttle) Reasons / Idle: Active
    std::optional<double> gpu_util_pct;

    std::optional<double> power_draw_watts;
    std::optional<double> power_limit_watts;  // current / enforced
    std::optional<double> default_power_limit_watts;
    std::optional<double> max_power_limit_watts;

    std::optional<double> sm_clock_mhz, memory_clock_mhz, max_sm_clock_mhz, max_memory_clock_mhz;
    std::optional<double> gpu_temp_c, memory_temp_c, shutdown_temp_c, slowdown_temp_c;

    std::string mig_mode;  // Current
    std::string fabric_state, fabric_status;

    // Every "key : value" of the block by its path ("PCI / GPU Link Info / Link Width / Max").
    std::map<std::string, SmiField> fields;
    const SmiField* field(const std::string& path) const;
};

struct SmiReport {
    std::string file;
    std::string driver_version;  // "535.129.03"
    int driver_version_line = 0;
    std::string cuda_version;  // "12.2"
    std::optional<int> attached_gpus;
    std::vector<SmiGpu> gpus;
    std::vector<std::string> notes;
};

// Indentation-based: works with the key padding of every driver seen (535, 565, 590). An
// excerpt whose sections come without a "GPU <bus id>" header reads as one GPU with an empty
// bus id. `nvidia-smi nvlink -s` blocks in the same text are skipped. Throws InputError when no
// GPU section is found or a count is not a number.
SmiReport parse_nvidia_smi_q(std::string_view text, const std::string& file);

struct NvlinkLink {
    int link = 0;
    bool active = false;     // false for "<inactive>"
    double bytes_per_s = 0;  // the printed per-link rate (GB/s = 1e9 B/s); 0 when inactive
    int line = 0;
};

struct NvlinkGpu {
    int index = 0;  // N of "GPU N:"
    std::string name;
    std::vector<NvlinkLink> links;
    int line = 0;
};

// `nvidia-smi nvlink -s` (or --status). Lines that are not GPU or link lines ("[...]", "...")
// are skipped. Returns an empty list when the text holds no "GPU N: ... (UUID: ...)" header.
std::vector<NvlinkGpu> parse_nvidia_smi_nvlink(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// Processes on the GPUs: which program holds them (a serving engine names itself there).

struct GpuProcess {
    std::optional<int> gpu;  // the table's GPU index; none in --query-compute-apps (it has no index)
    std::string pid;
    std::string type;  // "C" compute, "G" graphics, "C+G"; empty in --query-compute-apps
    std::string name;  // as printed: "VLLM::EngineCore", "/usr/bin/python3"
    std::optional<double> used_bytes;
    int line = 0;
};

struct GpuProcessTable {
    std::string file;
    std::vector<GpuProcess> processes;
    std::vector<std::string> notes;
};

// The "Processes:" table of plain `nvidia-smi` (drivers 470 to 580: `GPU GI CI PID Type Process
// name GPU Memory Usage`, and the older `GPU PID Type Process name Usage`), or
// `nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv` (with its header).
// Throws InputError when the text is neither; "No running processes found" is an empty table.
GpuProcessTable parse_nvidia_smi_processes(std::string_view text, const std::string& file);

// ---------------------------------------------------------------------------------------------
// Files.

// Reads a telemetry file ("-" = standard input) with the checks of read_input_file and a
// max_telemetry_bytes limit; a UTF-16 file (byte order mark FF FE or FE FF) is refused with a
// hint. Throws InputError.
std::string read_telemetry_file(const std::string& path);

}  // namespace gpusel
