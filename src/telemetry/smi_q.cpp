// nvidia-smi -q (the full query report) and nvidia-smi nvlink -s.
//
// -q prints "Key : Value" lines and section names, nested by indentation (4 spaces a level).
// The key column is padded to a width that differs between drivers (compare the 535 and 590
// samples), so keys are split at the first " :" rather than at a fixed column.

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "base/units.hpp"
#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

int indentation(std::string_view line) {
    int width = 0;
    for (const char c : line) {
        if (c == ' ') {
            ++width;
        } else if (c == '\t') {
            width += 8;
        } else {
            break;
        }
    }
    return width;
}

// "GPU 00000000:2F:00.0" (domain:bus:device.function, hex)
bool is_gpu_header(std::string_view content) {
    if (!starts_with(content, "GPU ")) {
        return false;
    }
    const std::string_view id = content.substr(4);
    if (id.size() < 7 || id.find(':') == std::string_view::npos || id.find('.') == std::string_view::npos) {
        return false;
    }
    return std::all_of(id.begin(), id.end(), [](char c) {
        return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == ':' || c == '.';
    });
}

// "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)" opens a block of `nvidia-smi nvlink -s`.
bool is_nvlink_header(std::string_view content, int& index, std::string& name) {
    if (!starts_with(content, "GPU ")) {
        return false;
    }
    const std::size_t colon = content.find(':');
    const std::size_t uuid = content.rfind("(UUID:");
    if (colon == std::string_view::npos || uuid == std::string_view::npos || uuid < colon) {
        return false;
    }
    const std::optional<double> number = parse_decimal(content.substr(4, colon - 4));
    if (!number || *number < 0 || *number > 100000 ||
        content.substr(4, colon - 4).find('.') != std::string_view::npos) {
        return false;
    }
    index = static_cast<int>(*number);
    name = std::string(trim(content.substr(colon + 1, uuid - colon - 1)));
    return true;
}

// The leading number of a value: "40960 MiB" -> 40960, "16x" -> 16, "100.00%" -> 100,
// "-8 C" -> -8 (temperatures only). No value for N/A and friends. InputError otherwise.
std::optional<double> number_of(const SmiGpu& gpu, const std::string& path, const std::string& file) {
    const SmiField* field = gpu.field(path);
    if (field == nullptr || is_missing_value(field->value)) {
        return std::nullopt;
    }
    std::string_view text = field->value;
    const std::size_t space = text.find(' ');
    if (space != std::string_view::npos) {
        text = text.substr(0, space);
    }
    if (ends_with(text, "x") || ends_with(text, "%")) {
        text.remove_suffix(1);
    }
    const std::optional<double> value = parse_decimal(text);
    if (!value) {
        throw input_error(file, field->line, field->column,
                          fmt::format("'{}': {} is not a number", path, quote(field->value)));
    }
    // NVML returns these as integers of at most 64 bits (lines.hpp); the bound also keeps every
    // value finite once scaled (MiB to bytes) and summed (ECC counts).
    if (std::fabs(*value) > max_counter_reading) {
        throw input_error(
            file, field->line, field->column,
            fmt::format("'{}': {} is larger than nvidia-smi can print (2^64)", path, quote(field->value)));
    }
    // Only temperatures can be negative: "GPU Shutdown T.Limit Temp : -8 C" is the margin to the
    // limit (H100, drivers 565 and 590, tests/data/telemetry). Memory, counts, power, clocks and
    // utilisation are unsigned in NVML.
    if (*value < 0 && path.find("Temp") == std::string::npos) {
        throw input_error(file, field->line, field->column,
                          fmt::format("'{}': {} is negative", path, quote(field->value)));
    }
    return value;
}

// A memory size in bytes from "81559 MiB", the only unit nvidia-smi -q prints for memory: a
// value in another unit (an edited file) would otherwise be read as MiB and fail `verify`
// for the wrong reason.
std::optional<double> mib_of(const SmiGpu& gpu, const std::string& path, const std::string& file) {
    const std::optional<double> value = number_of(gpu, path, file);
    if (!value) {
        return std::nullopt;
    }
    const SmiField* field = gpu.field(path);
    if (!ends_with(field->value, " MiB")) {
        throw input_error(file, field->line, field->column,
                          fmt::format("'{}': {} is not a size in MiB", path, quote(field->value)));
    }
    return *value * bytes_per_mib;
}

std::optional<double> first_number(const SmiGpu& gpu, std::initializer_list<const char*> paths,
                                   const std::string& file) {
    for (const char* path : paths) {
        if (gpu.field(path) != nullptr) {
            if (std::optional<double> value = number_of(gpu, path, file)) {
                return value;
            }
        }
    }
    return std::nullopt;
}

std::optional<int> integer_of(const SmiGpu& gpu, const std::string& path, const std::string& file) {
    const std::optional<double> value = number_of(gpu, path, file);
    if (!value) {
        return std::nullopt;
    }
    if (*value < 0 || *value > 1e6 || *value != std::floor(*value)) {
        const SmiField* field = gpu.field(path);
        throw input_error(file, field->line, field->column,
                          fmt::format("'{}': {} is not a whole number from 0 to 1000000", path, quote(field->value)));
    }
    return static_cast<int>(*value);
}

std::optional<bool> yes_no(const SmiGpu& gpu, std::initializer_list<const char*> paths) {
    for (const char* path : paths) {
        if (const SmiField* field = gpu.field(path)) {
            if (field->value == "Yes") {
                return true;
            }
            if (field->value == "No") {
                return false;
            }
        }
    }
    return std::nullopt;
}

std::string text_of(const SmiGpu& gpu, std::initializer_list<const char*> paths) {
    for (const char* path : paths) {
        if (const SmiField* field = gpu.field(path); field != nullptr && !is_missing_value(field->value)) {
            return field->value;
        }
    }
    return "";
}

void add_count(std::optional<double>& total, std::optional<double> value) {
    if (value) {
        total = total.value_or(0) + *value;
    }
}

// Sums one of "ECC Errors / Volatile" or "ECC Errors / Aggregate". Current drivers print
// "SRAM Correctable", "DRAM Uncorrectable", "SRAM Uncorrectable Parity", ... as leaves; older
// ones print "Single Bit / Device Memory ... Total" and "Double Bit / ... Total".
EccCounts ecc_counts(const SmiGpu& gpu, const std::string& section, const std::string& file) {
    EccCounts counts;
    const std::string prefix = "ECC Errors / " + section + " / ";
    const bool old_layout =
        gpu.field(prefix + "Single Bit / Total") != nullptr || gpu.field(prefix + "Double Bit / Total") != nullptr;
    if (old_layout) {
        counts.correctable = number_of(gpu, prefix + "Single Bit / Total", file);
        counts.uncorrectable = number_of(gpu, prefix + "Double Bit / Total", file);
        return counts;
    }
    for (const auto& [path, field] : gpu.fields) {
        if (!starts_with(path, prefix)) {
            continue;
        }
        const std::string leaf = path.substr(prefix.size());
        if (leaf.find(" / ") != std::string::npos || field.value == "Yes" || field.value == "No") {
            continue;
        }
        if (leaf.find("Uncorrectable") != std::string::npos) {
            add_count(counts.uncorrectable, number_of(gpu, path, file));
        } else if (leaf.find("Correctable") != std::string::npos) {
            add_count(counts.correctable, number_of(gpu, path, file));
        }
    }
    return counts;
}

void fill_typed_fields(SmiGpu& gpu, const std::string& file) {
    gpu.product_name = text_of(gpu, {"Product Name"});
    gpu.product_brand = text_of(gpu, {"Product Brand"});
    gpu.product_architecture = text_of(gpu, {"Product Architecture"});
    gpu.board_part_number = text_of(gpu, {"Board Part Number"});
    gpu.gpu_part_number = text_of(gpu, {"GPU Part Number"});
    gpu.vbios_version = text_of(gpu, {"VBIOS Version"});
    if (const SmiField* device = gpu.field("PCI / Device Id"); device != nullptr && !is_missing_value(device->value)) {
        // "0x233010DE": device id in the upper 16 bits, vendor id in the lower.
        const std::string& value = device->value;
        char* end = nullptr;
        const unsigned long long combined = std::strtoull(value.c_str(), &end, 16);
        if (!starts_with(value, "0x") || end == nullptr || *end != '\0' || value.size() > 10) {
            throw input_error(file, device->line, device->column,
                              fmt::format("'PCI / Device Id': {} is not a hex id", quote(value)));
        }
        gpu.pci_device_id = static_cast<std::uint32_t>((combined >> 16) & 0xffffu);
        gpu.pci_vendor_id = static_cast<std::uint32_t>(combined & 0xffffu);
    }
    gpu.fb_total_bytes = mib_of(gpu, "FB Memory Usage / Total", file);
    gpu.fb_used_bytes = mib_of(gpu, "FB Memory Usage / Used", file);
    gpu.fb_reserved_bytes = mib_of(gpu, "FB Memory Usage / Reserved", file);

    gpu.ecc_mode = text_of(gpu, {"ECC Mode / Current"});
    gpu.ecc_volatile = ecc_counts(gpu, "Volatile", file);
    gpu.ecc_aggregate = ecc_counts(gpu, "Aggregate", file);
    for (const auto& [path, field] : gpu.fields) {
        if (starts_with(path, "ECC Errors / ") && field.value == "Yes") {
            gpu.ecc_flags.push_back(path.substr(std::string("ECC Errors / ").size()));
        }
    }

    gpu.retired_single_bit = first_number(gpu, {"Retired Pages / Single Bit ECC"}, file);
    gpu.retired_double_bit = first_number(gpu, {"Retired Pages / Double Bit ECC"}, file);
    gpu.retired_pending = yes_no(gpu, {"Retired Pages / Pending Page Blacklist",
                                       "Retired Pages / Pending Page Retirement", "Retired Pages / Pending"});
    gpu.remapped_correctable = first_number(gpu, {"Remapped Rows / Correctable Error"}, file);
    gpu.remapped_uncorrectable = first_number(gpu, {"Remapped Rows / Uncorrectable Error"}, file);
    gpu.remapped_pending = yes_no(gpu, {"Remapped Rows / Pending"});
    gpu.remapped_failure = yes_no(gpu, {"Remapped Rows / Remapping Failure Occurred"});

    const std::string link = "PCI / GPU Link Info / ";
    gpu.pcie_gen_max = integer_of(gpu, link + "PCIe Generation / Max", file);
    gpu.pcie_gen_current = integer_of(gpu, link + "PCIe Generation / Current", file);
    gpu.pcie_gen_device_max = integer_of(gpu, link + "PCIe Generation / Device Max", file);
    gpu.pcie_gen_host_max = integer_of(gpu, link + "PCIe Generation / Host Max", file);
    gpu.pcie_width_max = integer_of(gpu, link + "Link Width / Max", file);
    gpu.pcie_width_current = integer_of(gpu, link + "Link Width / Current", file);
    gpu.pcie_replays = first_number(gpu, {"PCI / Replays Since Reset"}, file);

    gpu.performance_state = text_of(gpu, {"Performance State"});
    for (const char* path : {"Clocks Event Reasons / Idle", "Clocks Throttle Reasons / Idle"}) {
        if (const SmiField* field = gpu.field(path)) {
            gpu.clocks_idle = field->value == "Active";
            break;
        }
    }
    gpu.gpu_util_pct = first_number(gpu, {"Utilization / Gpu", "Utilization / GPU"}, file);

    gpu.power_draw_watts = first_number(gpu,
                                        {"GPU Power Readings / Power Draw", "GPU Power Readings / Average Power Draw",
                                         "Power Readings / Power Draw", "Power Readings / Average Power Draw"},
                                        file);
    gpu.power_limit_watts =
        first_number(gpu,
                     {"GPU Power Readings / Current Power Limit", "Power Readings / Enforced Power Limit",
                      "Power Readings / Power Limit", "Power Readings / Current Power Limit"},
                     file);
    gpu.default_power_limit_watts =
        first_number(gpu, {"GPU Power Readings / Default Power Limit", "Power Readings / Default Power Limit"}, file);
    gpu.max_power_limit_watts =
        first_number(gpu, {"GPU Power Readings / Max Power Limit", "Power Readings / Max Power Limit"}, file);

    gpu.sm_clock_mhz = first_number(gpu, {"Clocks / SM"}, file);
    gpu.memory_clock_mhz = first_number(gpu, {"Clocks / Memory"}, file);
    gpu.max_sm_clock_mhz = first_number(gpu, {"Max Clocks / SM"}, file);
    gpu.max_memory_clock_mhz = first_number(gpu, {"Max Clocks / Memory"}, file);
    gpu.gpu_temp_c = first_number(gpu, {"Temperature / GPU Current Temp"}, file);
    gpu.memory_temp_c = first_number(gpu, {"Temperature / Memory Current Temp"}, file);
    gpu.shutdown_temp_c = first_number(gpu, {"Temperature / GPU Shutdown Temp"}, file);
    gpu.slowdown_temp_c = first_number(gpu, {"Temperature / GPU Slowdown Temp"}, file);

    gpu.mig_mode = text_of(gpu, {"MIG Mode / Current"});
    gpu.fabric_state = text_of(gpu, {"Fabric / State"});
    gpu.fabric_status = text_of(gpu, {"Fabric / Status"});
}

// Bounds that no report of nvidia-smi comes near, so that a hostile file cannot make the
// reader's memory or time grow faster than the file: a field's path is the names of the
// sections above it, which a long or deeply nested name would repeat in every field under it.
constexpr std::size_t max_smi_name_bytes = 128;  // the longest key is under 64 ("... Event Reasons Counters")
constexpr std::size_t max_smi_depth = 8;         // sections nest 4 deep
constexpr std::size_t max_smi_gpus = 4096;       // GPU sections (one report shows at most a few dozen)
constexpr std::size_t max_smi_fields = 65536;    // "Key : Value" lines (about 400 per GPU)

// A new GPU section, at most max_smi_gpus of them.
SmiGpu& add_gpu_section(std::vector<SmiGpu>& gpus, int line, const std::string& file) {
    if (gpus.size() == max_smi_gpus) {
        throw input_error(file, line, 1,
                          fmt::format("more than {} GPU sections; expected one `nvidia-smi -q` report", max_smi_gpus));
    }
    gpus.emplace_back();
    gpus.back().line = line;
    return gpus.back();
}

using Sections = std::vector<std::pair<int, std::string>>;  // indentation, name

// One indented line of a GPU block: a section (onto `sections`) or a "Key : Value" field of
// `gpu` under the sections above it. `fields` counts the report's fields, at most
// max_smi_fields; lines beyond the name and depth bounds are skipped with a note.
void read_block_line(const Line& line, std::string_view content, int indent, const std::string& file,
                     Sections& sections, SmiGpu& gpu, std::size_t& fields, NoteLog& notes) {
    while (!sections.empty() && sections.back().first >= indent) {
        sections.pop_back();
    }
    const std::size_t colon = content.find(" :");
    const std::string_view name = colon == std::string_view::npos ? content : trim(content.substr(0, colon));
    if (name.size() > max_smi_name_bytes || sections.size() == max_smi_depth) {
        notes.add(fmt::format("skipped a line that is not nvidia-smi's (a name over {} bytes, or sections nested "
                              "deeper than {})",
                              max_smi_name_bytes, max_smi_depth),
                  line.number);
        return;
    }
    if (colon == std::string_view::npos) {
        sections.emplace_back(indent, std::string(content));
        return;
    }
    std::string path;
    for (const auto& section : sections) {
        path += section.second + " / ";
    }
    path += std::string(name);
    const std::string_view value = trim(content.substr(colon + 2));
    const int column = value.empty() ? 1 : static_cast<int>(value.data() - line.text.data()) + 1;
    if (gpu.fields.emplace(path, SmiField{std::string(value), line.number, column}).second &&
        ++fields == max_smi_fields + 1) {
        throw input_error(
            file, line.number, 1,
            fmt::format("more than {} 'Key : Value' lines; expected one `nvidia-smi -q` report", max_smi_fields));
    }
}

}  // namespace

SmiReport parse_nvidia_smi_q(std::string_view text, const std::string& file) {
    SmiReport report;
    report.file = file;
    NoteLog notes;
    std::vector<SmiGpu> gpus;
    Sections sections;
    bool in_gpu = false;
    bool in_nvlink = false;
    std::size_t fields = 0;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        const int indent = indentation(line.text);
        if (content == "[...]" || content == "..." || content == "...." || content == "[…]") {
            notes.add("skipped an elision line (an excerpt?)", line.number);
            continue;
        }
        int nvlink_index = 0;
        std::string nvlink_name;
        if (indent == 0 && is_nvlink_header(content, nvlink_index, nvlink_name)) {
            in_nvlink = true;
            continue;
        }
        if (in_nvlink) {
            if (indent > 0 || starts_with(content, "Link ")) {
                continue;  // read by parse_nvidia_smi_nvlink
            }
            in_nvlink = false;
        }
        if (indent == 0) {
            if (is_gpu_header(content)) {
                add_gpu_section(gpus, line.number, file).bus_id = std::string(content.substr(4));
                in_gpu = true;
                sections.clear();
                continue;
            }
            in_gpu = false;
            const std::size_t colon = content.find(" :");
            if (colon != std::string_view::npos) {
                const std::string_view key = trim(content.substr(0, colon));
                const std::string_view value = trim(content.substr(colon + 2));
                if (key == "Driver Version") {
                    report.driver_version = std::string(value);
                    report.driver_version_line = line.number;
                } else if (key == "CUDA Version") {
                    report.cuda_version = std::string(value);
                } else if (key == "Attached GPUs") {
                    if (const std::optional<double> count = parse_decimal(value);
                        count && *count >= 0 && *count < 100000) {
                        report.attached_gpus = static_cast<int>(*count);
                    }
                }
            }
            continue;
        }
        if (!in_gpu) {
            // Sections with no "GPU <bus id>" above them: an excerpt of one GPU's block.
            add_gpu_section(gpus, line.number, file);
            in_gpu = true;
            sections.clear();
        }
        read_block_line(line, content, indent, file, sections, gpus.back(), fields, notes);
    }
    // Indented text that is not "Key : Value" (another tool's output) makes sections but no
    // fields: such a "GPU" is not one.
    gpus.erase(std::remove_if(gpus.begin(), gpus.end(),
                              [](const SmiGpu& gpu) { return gpu.bus_id.empty() && gpu.fields.empty(); }),
               gpus.end());
    const bool any_field = std::any_of(gpus.begin(), gpus.end(), [](const SmiGpu& gpu) { return !gpu.fields.empty(); });
    if (gpus.empty() || !any_field) {
        throw input_error(file, 1, 1,
                          "no 'GPU <bus id>' section with 'Key : Value' lines; expected `nvidia-smi -q` output");
    }
    for (const SmiGpu& gpu : gpus) {
        if (gpu.bus_id.empty()) {
            notes.add("sections without a 'GPU <bus id>' line above them are read as one GPU", gpu.line);
        }
    }
    for (SmiGpu& gpu : gpus) {
        fill_typed_fields(gpu, file);
    }
    if (report.attached_gpus && *report.attached_gpus != static_cast<int>(gpus.size())) {
        notes.add(fmt::format("the report says {} GPUs are attached but holds {} GPU section{}", *report.attached_gpus,
                              gpus.size(), gpus.size() == 1 ? "" : "s"));
    }
    report.gpus = std::move(gpus);
    report.notes = notes.finish();
    return report;
}

std::vector<NvlinkGpu> parse_nvidia_smi_nvlink(std::string_view text, const std::string& file) {
    std::vector<NvlinkGpu> gpus;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        int index = 0;
        std::string name;
        if (is_nvlink_header(content, index, name)) {
            gpus.push_back(NvlinkGpu{index, std::move(name), {}, line.number});
            continue;
        }
        if (gpus.empty() || !starts_with(content, "Link ")) {
            continue;
        }
        // "Link 0: 26.562 GB/s" or "Link 3: <inactive>"; nvlink -e lines ("Link 0: Replay Errors: 0")
        // have a second colon and are not link states.
        const std::size_t colon = content.find(':');
        if (colon == std::string_view::npos) {
            continue;
        }
        const std::optional<double> number = parse_decimal(trim(content.substr(5, colon - 5)));
        const std::string_view state = trim(content.substr(colon + 1));
        if (!number || *number < 0 || *number > 1000 || *number != std::floor(*number) ||
            state.find(':') != std::string_view::npos) {
            continue;
        }
        NvlinkLink link;
        link.link = static_cast<int>(*number);
        link.line = line.number;
        if (state == "<inactive>") {
            link.active = false;
        } else {
            const std::vector<Token> parts = split_whitespace(state);
            const std::optional<double> rate = parts.size() == 2 ? parse_decimal(parts[0].text) : std::nullopt;
            double unit = 0;
            if (parts.size() == 2) {
                unit = parts[1].text == "GB/s" ? 1e9 : parts[1].text == "MB/s" ? 1e6 : 0;
            }
            if (!rate || unit == 0 || *rate < 0) {
                const auto indent_width = static_cast<int>(content.data() - line.text.data());
                throw input_error(file, line.number, indent_width + static_cast<int>(colon) + 3,
                                  fmt::format("link state {} is neither a rate in GB/s nor <inactive>", quote(state)));
            }
            if (*rate > max_counter_reading) {
                const auto indent_width = static_cast<int>(content.data() - line.text.data());
                throw input_error(file, line.number, indent_width + static_cast<int>(colon) + 3,
                                  fmt::format("link rate {} is larger than nvidia-smi can print (2^64)", quote(state)));
            }
            link.active = true;
            link.bytes_per_s = *rate * unit;
        }
        gpus.back().links.push_back(link);
    }
    return gpus;
}

}  // namespace gpusel
