// nvidia-smi topo -m: the connection matrix, CPU/NUMA affinity and the NIC legend.
// Columns are TAB-separated in real output, spaces in many published copies; both read the
// same because cells never contain blanks (the " X " self cell is padded, not spaced inside).

#include <algorithm>
#include <map>
#include <set>

#include <fmt/format.h>

#include "telemetry/lines.hpp"
#include "telemetry/notes.hpp"
#include "telemetry/telemetry.hpp"

namespace gpusel {

using namespace telemetry_detail;

namespace {

enum class Label { cpu_affinity, numa_affinity, gpu_numa_id };

std::optional<int> gpu_number(std::string_view name) {
    if (!starts_with(name, "GPU") || name.size() == 3) {
        return std::nullopt;
    }
    const std::string_view digits = name.substr(3);
    if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }) || digits.size() > 5) {
        return std::nullopt;
    }
    return std::stoi(std::string(digits));
}

TopoLink read_link(std::string_view cell) {
    TopoLink link;
    link.text = std::string(cell);
    if (cell == "X") {
        link.kind = LinkKind::self;
    } else if (starts_with(cell, "NV") && cell.size() > 2) {
        const std::optional<double> count = parse_decimal(cell.substr(2));
        if (count && *count >= 1 && *count <= 1000) {
            link.kind = LinkKind::nvlink;
            link.nvlinks = static_cast<int>(*count);
        }
    } else if (cell == "PIX") {
        link.kind = LinkKind::pix;
    } else if (cell == "PXB") {
        link.kind = LinkKind::pxb;
    } else if (cell == "PHB") {
        link.kind = LinkKind::phb;
    } else if (cell == "NODE") {
        link.kind = LinkKind::node;
    } else if (cell == "SYS" || cell == "SOC") {
        // SOC is the older drivers' name for the same path (legend: "traversing PCIe as well as
        // the SMP link between CPU sockets").
        link.kind = LinkKind::sys;
    }
    return link;
}

// "NIC0: mlx5_0": the NIC's device name, onto the matrix row of that NIC (`row_of`: each
// device's row, by name).
void read_nic_legend_line(const std::vector<Token>& tokens, const std::map<std::string, std::size_t>& row_of,
                          Topology& topology) {
    if (tokens.size() != 2 || !ends_with(tokens[0].text, ":")) {
        return;
    }
    const std::string nic(tokens[0].text.substr(0, tokens[0].text.size() - 1));
    if (const auto row = row_of.find(nic); row != row_of.end()) {
        topology.devices[row->second].nic_name = std::string(tokens[1].text);
    }
}

// A real matrix has a few dozen devices (GPUs and NICs; 8 GPUs and 12 NICs on a DGX H200). A
// header naming more is not `nvidia-smi topo -m`, and its matrix would cost devices² cells.
constexpr std::size_t max_topology_devices = 1024;

// The header row: device names (GPU0 GPU1 ... NIC0 ...) then the affinity columns.
void read_header_row(const std::vector<Token>& tokens, int line, std::vector<std::string>& names,
                     std::vector<Label>& labels, const std::string& file, NoteLog& notes) {
    for (std::size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view word = tokens[i].text;
        const std::string_view next = i + 1 < tokens.size() ? tokens[i + 1].text : "";
        const std::string_view after = i + 2 < tokens.size() ? tokens[i + 2].text : "";
        if (word == "CPU" && next == "Affinity") {
            labels.push_back(Label::cpu_affinity);
            ++i;
        } else if (word == "NUMA" && next == "Affinity") {
            labels.push_back(Label::numa_affinity);
            ++i;
        } else if (word == "GPU" && next == "NUMA" && after == "ID") {
            labels.push_back(Label::gpu_numa_id);
            i += 2;
        } else if (labels.empty()) {
            if (names.size() == max_topology_devices) {
                throw input_error(file, line, tokens[i].column,
                                  fmt::format("the header names more than {} devices; expected `nvidia-smi topo -m` "
                                              "output",
                                              max_topology_devices));
            }
            names.emplace_back(word);
        } else {
            notes.add(fmt::format("header column {} after the affinity columns is not read", quote(word)), line);
        }
    }
}

// The affinity cells after a row's links, in header order; NIC rows have none (or empty TAB
// fields).
void read_affinity_cells(const std::vector<Token>& tokens, std::size_t at, const std::vector<Label>& labels,
                         const std::string& file, int line, TopoDevice& device) {
    for (const Label label : labels) {
        if (at >= tokens.size()) {
            break;
        }
        const std::string_view cell = tokens[at++].text;
        if (label == Label::cpu_affinity) {
            device.cpu_affinity = std::string(cell);
        } else if (label == Label::numa_affinity && !is_missing_value(cell)) {
            const std::optional<double> node = parse_decimal(cell);
            if (!node || *node < 0 || *node > 4096) {
                throw input_error(file, line, tokens[at - 1].column,
                                  fmt::format("NUMA Affinity {} is not a node number", quote(cell)));
            }
            device.numa_node = static_cast<int>(*node);
        }
    }
}

// A matrix row of a named device: its links to every device of the header, then its affinities.
void read_matrix_row(const std::vector<Token>& tokens, const Line& line, const std::vector<std::string>& names,
                     const std::vector<Label>& labels, const std::string& file, NoteLog& notes, Topology& topology) {
    TopoDevice device;
    device.name = std::string(tokens.front().text);
    device.line = line.number;
    if (const std::optional<int> index = gpu_number(device.name)) {
        device.gpu_index = *index;
    }
    std::vector<TopoLink> row;
    for (std::size_t c = 0; c < names.size(); ++c) {
        if (1 + c < tokens.size()) {
            row.push_back(read_link(tokens[1 + c].text));
            if (row.back().kind == LinkKind::unknown) {
                notes.add(
                    fmt::format("connection {} is not one of X, NV#, PIX, PXB, PHB, NODE, SYS", quote(row.back().text)),
                    line.number);
            }
        } else {
            row.push_back(TopoLink{});
            notes.add("matrix row cut short; its missing cells are unknown", line.number);
        }
    }
    read_affinity_cells(tokens, 1 + names.size(), labels, file, line.number, device);
    topology.devices.push_back(std::move(device));
    topology.links.push_back(std::move(row));
}

}  // namespace

Topology parse_nvidia_smi_topo(std::string_view text, const std::string& file) {
    Topology topology;
    topology.file = file;
    NoteLog notes;
    std::vector<std::string> names;
    std::set<std::string_view> header_names;           // views of `names`
    std::map<std::string, std::size_t> row_of_device;  // matrix rows read, by device name
    std::vector<Label> labels;
    bool in_matrix = false;
    bool in_nic_legend = false;
    for (const Line& line : split_lines(text)) {
        const std::string_view content = trim(line.text);
        if (content.empty()) {
            continue;
        }
        if (content == "Legend:") {
            in_matrix = false;
            continue;
        }
        if (content == "NIC Legend:") {
            in_matrix = false;
            in_nic_legend = true;
            continue;
        }
        // Columns count from the start of the line, not of the trimmed text: `topo -m` indents
        // its header with a tab.
        std::vector<Token> tokens = split_whitespace(content);
        const int indent = static_cast<int>(content.data() - line.text.data());
        for (Token& token : tokens) {
            token.column += indent;
        }
        if (in_nic_legend) {
            read_nic_legend_line(tokens, row_of_device, topology);
            continue;
        }
        if (names.empty()) {
            if (tokens.empty() || tokens.front().text != "GPU0") {
                continue;  // text before the header
            }
            read_header_row(tokens, line.number, names, labels, file, notes);
            header_names.insert(names.begin(), names.end());
            in_matrix = true;
            continue;
        }
        if (!in_matrix) {
            continue;
        }
        if (header_names.count(tokens.front().text) == 0) {
            notes.add("skipped a line that is not a matrix row", line.number);
            continue;
        }
        // Each device has one row: a repeated one is not the tool's (and would let rows outgrow
        // the header).
        if (!row_of_device.emplace(std::string(tokens.front().text), topology.devices.size()).second) {
            notes.add("skipped a repeated matrix row", line.number);
            continue;
        }
        read_matrix_row(tokens, line, names, labels, file, notes, topology);
    }
    if (names.empty()) {
        throw input_error(file, 1, 1, "no header row starting with GPU0; expected `nvidia-smi topo -m` output");
    }
    if (topology.gpu_rows().empty()) {
        throw input_error(file, 1, 1, "no GPU rows under the GPU0 header");
    }
    topology.notes = notes.finish();
    return topology;
}

}  // namespace gpusel
