#pragma once
// The workload reader, shared by the files of src/inputs/ that read workload, project and
// proposal files, and by nothing else: workload.cpp (the top level, model, precision, runtime,
// projects and the loaders), workload_training.cpp (training and data), workload_serving.cpp
// (inference and the serving engine), workload_deployment.cpp (deployment and constraints),
// workload_calibration.cpp and workload_proposal.cpp. The name tables here are the ones more
// than one of those files reads; the others stay in the file that reads them.

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "inputs/workload.hpp"
#include "io/yaml.hpp"

namespace gpusel::inputs_detail {

inline constexpr std::pair<Role, std::string_view> role_names[] = {
    {Role::development, "development"}, {Role::training, "training"}, {Role::inference, "inference"}};
inline constexpr std::pair<Acquisition, std::string_view> acquisition_names[] = {
    {Acquisition::buy_new, "buy-new"},
    {Acquisition::buy_used, "buy-used"},
    {Acquisition::cloud_on_demand, "cloud-on-demand"},
    {Acquisition::cloud_spot, "cloud-spot"},
    {Acquisition::cloud_reserved, "cloud-reserved"},
    {Acquisition::cloud_reserved_3y, "cloud-reserved-3y"},
    {Acquisition::cloud_capacity_block, "cloud-capacity-block"}};

// Stands in for an absent section so that its defaults are applied and recorded.
YamlNode empty_mapping(Position position);

template <typename Enum, std::size_t N>
std::string_view name_of(const std::pair<Enum, std::string_view> (&table)[N], Enum value) {
    for (const auto& [candidate, name] : table) {
        if (candidate == value) {
            return name;
        }
    }
    return "?";
}

// Reads the fields of one workload; `defaults` records each default applied. Each section's
// readers live in the file named beside them.
class WorkloadReader {
public:
    WorkloadReader(Workload& workload, Diagnostics& diagnostics, const LoadContext& context,
                   std::filesystem::path base_directory, std::string prefix)
        : m_workload(workload),
          m_diagnostics(diagnostics),
          m_context(context),
          m_base(std::move(base_directory)),
          m_prefix(std::move(prefix)) {}

    void read(const YamlNode& root);
    // The `calibration:` block alone (workload_calibration.cpp), for append_calibration_file.
    void read_calibration(const YamlNode& node, const std::string& path);

private:
    // workload.cpp
    void read_objective(MapReader& top);
    void derive_site_from_segments();
    void assume(std::string_view field, std::string_view value, std::string_view source = "default");
    void read_model(const YamlNode& node, const std::string& path);
    void read_precision(MapReader& top);
    void read_precision_options(const YamlNode& node, const std::string& path, const std::vector<std::string>& names);
    void read_runtime(const YamlNode* node, const std::string& path, Position parent);

    // workload_training.cpp
    void read_micro_batch(MapReader& reader, TrainingSpec& training);
    void read_checkpointing(MapReader& reader, TrainingSpec& training);
    void read_training(const YamlNode& node, const std::string& path);
    void read_implementation(MapReader& reader);
    void read_parallel(MapReader& reader, std::string_view key, int& into);
    void read_data(const YamlNode& node, const std::string& path);

    // workload_serving.cpp
    void read_engine(MapReader& reader);
    void read_speculative(const YamlNode& node, const std::string& path);
    template <typename Defaulted>
    void read_diffusion(MapReader& reader, const Defaulted& defaulted);
    template <typename Defaulted>
    void read_rate(MapReader& reader, const Defaulted& defaulted);
    void read_inference(const YamlNode& node, const std::string& path);
    void read_load(const YamlNode& node, const std::string& path);
    bool read_load_trace(MapReader& reader, const std::string& file);
    // After deployment.horizon is read: inference.requests_per_s from inference.load's peak.
    void derive_peak_load();

    // workload_deployment.cpp
    void read_deployment(const YamlNode* node, const std::string& path, Position parent);
    void read_money_conventions(MapReader& reader, DeploymentSpec& deployment);
    void read_disaggregated(MapReader& reader, DeploymentSpec& deployment);
    // workload.cpp: deployment.deliver_by and order_date (YYYY-MM each).
    void read_delivery(MapReader& reader, DeploymentSpec& deployment);
    void read_disaggregated_workers(const YamlNode& node, const std::string& path, DisaggregatedWorkers& into);
    void check_ids(MapReader& reader, std::string_view key, const std::vector<std::string>& ids);
    template <typename Enum, std::size_t N>
    void read_enum_list(MapReader& reader, std::string_view key, std::vector<Enum>& into,
                        const std::pair<Enum, std::string_view> (&table)[N]);
    void read_constraints(const YamlNode* node, const std::string& path, Position parent);
    void read_offer_constraints(MapReader& reader);

    // workload_calibration.cpp
    SpeedCalibrationPoint speed_point_origin(const MapReader& point) const;
    void read_speed_point(MapReader& point);
    void read_vllm_benchmark(MapReader& point, const std::string& file, SpeedCalibrationPoint& value);

    Workload& m_workload;
    Diagnostics& m_diagnostics;
    const LoadContext& m_context;
    std::filesystem::path m_base;
    std::string m_prefix;
};

// The folder relative paths in `path` resolve against: the current directory for "-".
std::filesystem::path directory_of(const std::string& path);
// `path` as diagnostics name it: <stdin> for "-".
std::string display_name(const std::string& path);
// Reads the `workloads:` list of a project or proposal into `project`.
void read_workload_list(MapReader& top, std::string_view key, Project& project, Diagnostics& diagnostics,
                        const LoadContext& context, const std::filesystem::path& base, const std::string& file);

}  // namespace gpusel::inputs_detail
