// The deployment and constraints sections of a workload file: target, horizon, utilization,
// energy, PUE and operations, the money conventions (autoscale, redundancy, seats, resale) and
// the site; the GPU, segment, form-factor, vendor, power and memory limits, and which offers a
// workload may use (providers, tiers, regions, acquisitions, estimates, offer age).
// Every default applied is recorded as an Assumption (docs/workload.md, docs/cost-model.md).

#include <algorithm>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "inputs/workload_reader.hpp"

namespace gpusel {

namespace {

constexpr std::pair<DeploymentTarget, std::string_view> target_names[] = {{DeploymentTarget::automatic, "auto"},
                                                                          {DeploymentTarget::on_prem, "on-prem"},
                                                                          {DeploymentTarget::cloud, "cloud"},
                                                                          {DeploymentTarget::hybrid, "hybrid"},
                                                                          {DeploymentTarget::edge, "edge"}};
constexpr std::pair<NetworkKind, std::string_view> network_names[] = {{NetworkKind::automatic, "auto"},
                                                                      {NetworkKind::nvlink, "nvlink"},
                                                                      {NetworkKind::pcie, "pcie"},
                                                                      {NetworkKind::infiniband, "infiniband"},
                                                                      {NetworkKind::ethernet, "ethernet"}};

template <typename Enum, std::size_t N>
std::optional<Enum> value_of(const std::pair<Enum, std::string_view> (&table)[N], std::string_view name) {
    for (const auto& [value, candidate] : table) {
        if (candidate == name) {
            return value;
        }
    }
    return std::nullopt;
}

template <typename Enum, std::size_t N>
std::vector<std::string> names_of(const std::pair<Enum, std::string_view> (&table)[N]) {
    std::vector<std::string> names;
    for (const auto& [value, name] : table) {
        names.emplace_back(name);
    }
    return names;
}

// Codes for "did you mean" only: any three upper-case letters are accepted as ISO 4217 (the
// standard's list changes; gpusel converts with the user's rate and needs no table of its own).
const std::vector<std::string> common_currency_codes = {"USD", "EUR", "GBP", "JPY", "CHF", "CAD", "AUD", "CNY",
                                                        "SEK", "NOK", "DKK", "INR", "KRW", "SGD", "HKD", "BRL"};

bool is_currency_code(std::string_view code) {
    return code.size() == 3 && std::all_of(code.begin(), code.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

// YYYY-MM or YYYY-MM-DD, month 01..12 and day 01..31.
bool is_rate_date(std::string_view date) {
    const auto digits = [&](std::size_t from, std::size_t count) {
        for (std::size_t i = from; i < from + count; ++i) {
            if (std::isdigit(static_cast<unsigned char>(date[i])) == 0) {
                return false;
            }
        }
        return true;
    };
    if ((date.size() != 7 && date.size() != 10) || !digits(0, 4) || date[4] != '-' || !digits(5, 2)) {
        return false;
    }
    const int month = (date[5] - '0') * 10 + (date[6] - '0');
    if (month < 1 || month > 12) {
        return false;
    }
    if (date.size() == 7) {
        return true;
    }
    if (date[7] != '-' || !digits(8, 2)) {
        return false;
    }
    const int day = (date[8] - '0') * 10 + (date[9] - '0');
    return day >= 1 && day <= 31;
}

// `deployment.currency: {code: EUR, per_usd: 0.86, as_of: 2026-11}` (docs/workload.md). gpusel
// holds no exchange rates: the rate and its date are the user's, and a bare code is refused.
void read_currency(MapReader& deployment, CurrencySpec& currency) {
    const YamlNode* node = deployment.node("currency");
    if (node == nullptr) {
        return;
    }
    const std::string example = "currency: {code: EUR, per_usd: 0.86, as_of: 2026-11}";
    if (node->kind == YamlNode::Kind::scalar) {
        deployment.error("currency", fmt::format(
                                         "give the rate and its date: {} (gpusel holds no exchange rates)",
                                         node->scalar == "USD" ? example : [&] {
                                             std::string code = node->scalar;
                                             std::transform(code.begin(), code.end(), code.begin(),
                                                            [](unsigned char c) { return std::toupper(c); });
                                             return fmt::format("currency: {{code: {}, per_usd: …, as_of: …}}",
                                                                is_currency_code(code) ? code : "EUR");
                                         }()));
        return;
    }
    MapReader reader(*node, deployment.child_path("currency"), deployment.diagnostics());
    reader.require("code");
    reader.require("per_usd");
    reader.require("as_of");
    std::string code;
    if (reader.text("code", code)) {
        if (is_currency_code(code)) {
            currency.code = code;
        } else {
            std::string upper = code;
            std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
            const bool known = std::find(common_currency_codes.begin(), common_currency_codes.end(), upper) !=
                               common_currency_codes.end();
            reader.error("code", fmt::format("'{}' is not an ISO 4217 code (three upper-case letters){}", code,
                                             known ? fmt::format("; did you mean '{}'?", upper)
                                                   : did_you_mean(upper, common_currency_codes)));
        }
    }
    if (reader.number("per_usd", currency.per_usd, UnitKind::plain, 0, 1e9, true) && code == "USD" &&
        currency.per_usd != 1) {
        reader.error("per_usd", "one US dollar is 1 USD; leave out deployment.currency for USD");
    }
    std::string as_of;
    if (reader.text("as_of", as_of)) {
        if (is_rate_date(as_of)) {
            currency.as_of = as_of;
        } else {
            reader.error("as_of", fmt::format("'{}' is not a date; write YYYY-MM or YYYY-MM-DD, e.g. 2026-11", as_of));
        }
    }
    reader.finish();
}

}  // namespace

namespace inputs_detail {

void WorkloadReader::read_deployment(const YamlNode* node, const std::string& path, Position parent) {
    const YamlNode empty = empty_mapping(parent);
    MapReader reader(node != nullptr ? *node : empty, path, m_diagnostics);
    DeploymentSpec& deployment = m_workload.deployment;
    const auto defaulted = [&](std::string_view key, const std::string& value) {
        if (!reader.has(key)) {
            assume(reader.child_path(key), value);
        }
    };
    reader.choice("target", deployment.target, target_names);
    double horizon_seconds = 0;
    if (reader.number("horizon", horizon_seconds, UnitKind::seconds, 86400, 30 * 365.25 * 86400)) {
        deployment.horizon_months = horizon_seconds / seconds_per_month;
    }
    defaulted("horizon", "24mo");
    reader.number("utilization", deployment.utilization, UnitKind::fraction, 0, 1, true);
    defaulted("utilization", "0.7");
    reader.number("energy_price", deployment.energy_usd_per_kwh, UnitKind::usd_per_kwh, 0, 10);
    defaulted("energy_price", "0.12USD/kWh");
    reader.number("pue", deployment.pue, UnitKind::plain, 1, 5);
    if (!reader.has("pue")) {
        assume(reader.child_path("pue"), "1.4", "data centre; 1.0 for a desk-side box or an edge device");
    }
    reader.number("ops_per_gpu_month", deployment.ops_usd_per_gpu_month, UnitKind::usd, 0, 1e6);
    if (!reader.has("ops_per_gpu_month") && deployment.target == DeploymentTarget::edge) {
        // The $150 default is datacenter staff and facility per GPU; an edge device's upkeep
        // is the site's, so it is left out unless given.
        deployment.ops_usd_per_gpu_month = 0;
        assume(reader.child_path("ops_per_gpu_month"), "0USD", "edge device: site upkeep not included");
    } else {
        if (!reader.has("ops_per_gpu_month")) {
            assume(reader.child_path("ops_per_gpu_month"), "150USD",
                   "data centre; 0 for a desk-side box, whose upkeep is the office's");
        }
    }
    reader.choice("interconnect", deployment.interconnect, network_names);
    reader.number("spot_overhead", deployment.spot_overhead_fraction, UnitKind::fraction, 0, 5);
    deployment.spot_overhead_given = reader.has("spot_overhead");
    reader.boolean("used_market", deployment.used_market);
    deployment.ops_given = reader.has("ops_per_gpu_month");
    deployment.pue_given = reader.has("pue");
    read_money_conventions(reader, deployment);
    read_currency(reader, deployment.currency);
    read_disaggregated(reader, deployment);
    read_delivery(reader, deployment);
    Site site = Site::datacenter;
    if (reader.choice("site", site, site_names)) {
        deployment.site = site;
    } else if (!reader.has("site")) {
        assume(reader.child_path("site"),
               deployment.target == DeploymentTarget::edge ? "edge"
               : m_workload.role == Role::inference        ? "datacenter"
                                                           : "datacenter or office",
               deployment.target == DeploymentTarget::edge ? "edge target"
               : m_workload.role == Role::inference        ? "production serving"
                                                           : "a desk-side box is allowed");
    }
    reader.finish();
}

// Autoscale, redundancy, seats and resale (docs/cost-model.md).
void WorkloadReader::read_money_conventions(MapReader& reader, DeploymentSpec& deployment) {
    const bool serving = m_workload.role == Role::inference;
    reader.boolean("autoscale", deployment.autoscale);
    if (!reader.has("autoscale") && serving) {
        assume(reader.child_path("autoscale"), "false", "rented replicas are billed every hour");
    }
    reader.integer("min_replicas", deployment.min_replicas, 1, 1 << 20);
    std::string redundancy;
    if (reader.text("redundancy", redundancy)) {
        if (redundancy == "none") {
            deployment.redundancy = DeploymentSpec::Redundancy::none;
        } else if (redundancy == "n+1") {
            deployment.redundancy = DeploymentSpec::Redundancy::n_plus_one;
        } else if (!redundancy.empty() && redundancy.back() == '%') {
            double fraction = 0;
            if (read_number(*reader.node("redundancy"), reader.child_path("redundancy"), m_diagnostics, fraction,
                            UnitKind::fraction, 0, 10, true)) {
                deployment.redundancy = DeploymentSpec::Redundancy::fraction;
                deployment.redundancy_fraction = fraction;
            }
        } else {
            reader.error("redundancy", fmt::format("'{}' is not a redundancy; write none, n+1 or a percentage "
                                                   "such as 25%",
                                                   redundancy));
        }
    } else if (!reader.has("redundancy") && serving && deployment.target != DeploymentTarget::edge) {
        deployment.redundancy = DeploymentSpec::Redundancy::n_plus_one;
        assume(reader.child_path("redundancy"), "n+1", "production serving: one replica may fail or be updated");
    }
    reader.integer("seats", deployment.seats, 1, 100000);
    if (reader.has("seats") && m_workload.role != Role::development) {
        reader.error("seats", "seats count the engineers of a development role; this workload's role is " +
                                  std::string(to_string(m_workload.role)));
    }
    double asset_life_seconds = 0;
    if (reader.number("asset_life", asset_life_seconds, UnitKind::seconds, 30 * 86400.0, 30 * 365.25 * 86400)) {
        deployment.asset_life_months = asset_life_seconds / seconds_per_month;
    }
    reader.boolean("count_resale", deployment.count_resale);
    if (!reader.has("count_resale")) {
        assume(reader.child_path("count_resale"), "false", "expected resale is reported, not subtracted");
    }
}

// deployment.disaggregated: `auto`, or a mapping of prefill and decode workers whose fields fix
// what they give and leave the rest to the planner (plan/disaggregation.cpp).
void WorkloadReader::read_disaggregated(MapReader& reader, DeploymentSpec& deployment) {
    const YamlNode* node = reader.node("disaggregated");
    if (node == nullptr) {
        return;
    }
    const std::string path = reader.child_path("disaggregated");
    if (m_workload.role != Role::inference || m_workload.task() != InferenceTask::generation) {
        const std::string what = m_workload.role != Role::inference
                                     ? "this workload's role is " + std::string(to_string(m_workload.role))
                                     : "this workload serves " + std::string(to_string(m_workload.task()));
        reader.error("disaggregated",
                     "disaggregation splits prefill from decode and needs token generation (role: inference, "
                     "inference.output_tokens > 0); " +
                         what + ": remove deployment.disaggregated");
        return;
    }
    DisaggregationSpec spec;
    if (node->kind == YamlNode::Kind::scalar) {
        if (node->scalar != "auto") {
            reader.error("disaggregated",
                         fmt::format("'{}' is not a disaggregation; write auto, or {{prefill: {{gpu, count, "
                                     "tensor_parallel, expert_parallel}}, decode: {{...}}}}{}",
                                     node->scalar, did_you_mean(node->scalar, {"auto"})));
            return;
        }
        deployment.disaggregated = spec;
        return;
    }
    if (node->kind != YamlNode::Kind::mapping) {
        reader.error("disaggregated",
                     fmt::format("expected auto or a mapping of prefill and decode, got {}", kind_name(node->kind)));
        return;
    }
    spec.automatic = false;
    MapReader phases(*node, path, m_diagnostics);
    for (const auto& [key, into] : {std::pair<std::string_view, DisaggregatedWorkers*>{"prefill", &spec.prefill},
                                    std::pair<std::string_view, DisaggregatedWorkers*>{"decode", &spec.decode}}) {
        if (const YamlNode* workers = phases.node(key)) {
            read_disaggregated_workers(*workers, phases.child_path(key), *into);
        }
    }
    phases.finish();
    deployment.disaggregated = spec;
}

void WorkloadReader::read_disaggregated_workers(const YamlNode& node, const std::string& path,
                                                DisaggregatedWorkers& into) {
    MapReader reader(node, path, m_diagnostics);
    if (reader.text("gpu", into.gpu)) {
        check_ids(reader, "gpu", {into.gpu});
    }
    reader.integer("count", into.count, 1, 4096);
    reader.integer("tensor_parallel", into.tensor_parallel, 1, 1024);
    reader.integer("expert_parallel", into.expert_parallel, 1, 1024);
    reader.finish();
}

void WorkloadReader::check_ids(MapReader& reader, std::string_view key, const std::vector<std::string>& ids) {
    if (m_context.catalog == nullptr) {
        return;
    }
    for (const std::string& id : ids) {
        if (m_context.catalog->find(id) == nullptr) {
            const std::string suggestion = m_context.catalog->suggest(id);
            reader.error(key, fmt::format("unknown GPU '{}'{}", id,
                                          suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                             : ", did you mean '" + suggestion + "'?"));
        }
    }
}

template <typename Enum, std::size_t N>
void WorkloadReader::read_enum_list(MapReader& reader, std::string_view key, std::vector<Enum>& into,
                                    const std::pair<Enum, std::string_view> (&table)[N]) {
    std::vector<std::string> names;
    if (!reader.text_list(key, names)) {
        return;
    }
    for (const std::string& name : names) {
        if (const std::optional<Enum> value = value_of(table, name)) {
            into.push_back(*value);
        } else {
            const std::vector<std::string> options = names_of(table);
            reader.error(key, fmt::format("'{}' is not one of {}{}", name, fmt::join(options, ", "),
                                          did_you_mean(name, options)));
        }
    }
}

void WorkloadReader::read_constraints(const YamlNode* node, const std::string& path, Position parent) {
    const YamlNode empty = empty_mapping(parent);
    MapReader reader(node != nullptr ? *node : empty, path, m_diagnostics);
    ConstraintSpec& constraints = m_workload.constraints;
    reader.integer("max_gpus", constraints.max_gpus, 1, 1 << 20);
    if (!reader.has("max_gpus")) {
        assume(reader.child_path("max_gpus"), "64");
    }
    reader.integer("gpus_per_node", constraints.gpus_per_node, 1, 1024);
    if (reader.text_list("allow", constraints.allow)) {
        check_ids(reader, "allow", constraints.allow);
    }
    if (reader.text_list("deny", constraints.deny)) {
        check_ids(reader, "deny", constraints.deny);
    }
    read_enum_list(reader, "segment", constraints.segments, segment_names);
    read_enum_list(reader, "form_factor", constraints.form_factors, form_factor_names);
    if (reader.text_list("vendor", constraints.vendors)) {
        const std::vector<std::string> known = {"nvidia", "amd", "intel", "google"};
        for (const std::string& vendor : constraints.vendors) {
            if (std::find(known.begin(), known.end(), vendor) == known.end()) {
                reader.error("vendor", fmt::format("'{}' is not one of {}{}", vendor, fmt::join(known, ", "),
                                                   did_you_mean(vendor, known)));
            }
        }
    }
    reader.number("max_power_per_device", constraints.max_power_per_device_watts, UnitKind::watts, 0, 1e5, true);
    reader.number("memory_headroom", constraints.memory_headroom_fraction, UnitKind::fraction, 0, 0.9);
    if (!reader.has("memory_headroom")) {
        assume(reader.child_path("memory_headroom"), "10%");
    }
    read_offer_constraints(reader);
    reader.finish();
}

void WorkloadReader::read_offer_constraints(MapReader& reader) {
    ConstraintSpec& constraints = m_workload.constraints;
    const auto check_providers = [&](std::string_view key, const std::vector<std::string>& ids) {
        if (m_context.catalog == nullptr) {
            return;
        }
        std::vector<std::string> known;
        for (const Provider& provider : m_context.catalog->providers()) {
            known.push_back(provider.id);
        }
        for (const std::string& id : ids) {
            if (m_context.catalog->find_provider(id) == nullptr) {
                reader.error(key, fmt::format("unknown provider '{}'{}", id, did_you_mean(id, known)));
            }
        }
    };
    if (reader.text_list("providers", constraints.providers)) {
        check_providers("providers", constraints.providers);
    }
    if (reader.text_list("exclude_providers", constraints.exclude_providers)) {
        check_providers("exclude_providers", constraints.exclude_providers);
    }
    read_enum_list(reader, "tiers", constraints.tiers, tier_names);
    if (!reader.has("tiers") && m_workload.role == Role::inference) {
        // A production service needs an SLA and capacity that stays: marketplace hosts are
        // third parties whose prices and machines change by the hour (docs/catalog.md).
        constraints.tiers = {ProviderTier::hyperscaler, ProviderTier::neocloud};
        assume(reader.child_path("tiers"), "[hyperscaler, neocloud]", "production serving: no marketplace hosts");
    }
    reader.text_list("regions", constraints.regions);
    read_enum_list(reader, "acquisitions", constraints.acquisitions, acquisition_names);
    reader.boolean("allow_estimates", constraints.allow_estimates);
    if (!reader.has("allow_estimates")) {
        assume(reader.child_path("allow_estimates"), "true", "estimated prices rank, marked ~");
    }
    double age_seconds = 0;
    if (reader.number("max_offer_age", age_seconds, UnitKind::seconds, 0, 100 * 365.25 * 86400, true)) {
        constraints.max_offer_age_months = age_seconds / seconds_per_month;
    } else if (!reader.has("max_offer_age")) {
        assume(reader.child_path("max_offer_age"), "36mo");
    }
    // A spot price is a market price of its day: AWS moves it with supply and demand, GCP up to
    // once a day (docs/reference/offers.md section 5), so a snapshot ages in weeks, not years.
    if (reader.number("max_spot_age", age_seconds, UnitKind::seconds, 0, 100 * 365.25 * 86400, true)) {
        constraints.max_spot_age_months = age_seconds / seconds_per_month;
    } else if (!reader.has("max_spot_age")) {
        assume(reader.child_path("max_spot_age"), "3mo", "older or undated spot prices do not rank");
    }
}
}  // namespace inputs_detail

}  // namespace gpusel
