// Proposal files (`gpusel check`): the hardware a team proposes to buy or rent, line by line
// (role, GPU or offer, count or units, acquisition, unit price, each with its position so that a
// finding can point at it), the workloads it is for and the policy the judge applies
// (docs/ci.md).

#include <filesystem>

#include <fmt/format.h>

#include "base/text.hpp"
#include "base/units.hpp"
#include "inputs/workload_reader.hpp"

namespace gpusel {

using namespace inputs_detail;

namespace {

// An offer named by a hardware entry: it gives the GPU and the acquisition when the entry does
// not.
void read_hardware_offer(MapReader& entry, ProposedHardware& item, const LoadContext& context) {
    if (!entry.text("offer", item.offer) || context.catalog == nullptr) {
        return;
    }
    const Offer* offer = context.catalog->find_offer(item.offer);
    if (offer == nullptr) {
        const std::string suggestion = context.catalog->suggest_offer(item.offer);
        entry.error("offer", fmt::format("unknown offer '{}'{}", item.offer,
                                         suggestion.empty() ? "; `gpusel catalog show GPU` lists a GPU's offers"
                                                            : ", did you mean '" + suggestion + "'?"));
        return;
    }
    if (!entry.has("gpu")) {
        item.gpu = offer->gpu;
    }
    if (!entry.has("acquisition")) {
        item.acquisition =
            offer->kind == OfferKind::rental
                ? Acquisition::cloud_on_demand
                : (offer->condition == UnitCondition::new_unit ? Acquisition::buy_new : Acquisition::buy_used);
    }
}

// units: counts units of the named offer; the GPU count follows from it and must agree with a
// given count.
void read_hardware_units(MapReader& entry, ProposedHardware& item, const LoadContext& context) {
    if (!entry.integer("units", item.units, 1, max_proposed_gpus)) {
        return;
    }
    if (!entry.has("offer")) {
        entry.error("units", "units count units of an offer: name it with offer:");
    } else if (const Offer* offer = context.catalog != nullptr ? context.catalog->find_offer(item.offer) : nullptr) {
        const long long gpus = static_cast<long long>(item.units) * offer->gpus_per_unit;
        if (gpus > max_proposed_gpus) {
            entry.error("units", fmt::format("{} units of {} are {} GPUs, more than the {} one line may give; "
                                             "give at most {} units",
                                             item.units, offer->id, gpus, max_proposed_gpus,
                                             max_proposed_gpus / offer->gpus_per_unit));
            return;
        }
        if (entry.has("count") && item.count != gpus) {
            entry.error("count", fmt::format("count {} disagrees with {} unit{} of {} ({} GPUs); give one of them",
                                             item.count, item.units, item.units == 1 ? "" : "s", offer->id, gpus));
        }
        item.count = static_cast<int>(gpus);
    }
}

ProposedHardware read_proposed_hardware(MapReader& entry, const LoadContext& context) {
    ProposedHardware item;
    item.entry_position = entry.position();
    entry.require("role");
    if (!entry.has("offer")) {
        entry.require("gpu");
    }
    if (!entry.has("units")) {
        entry.require("count");
    }
    entry.choice("role", item.role, role_names);
    read_hardware_offer(entry, item, context);
    if (entry.text("gpu", item.gpu) && context.catalog != nullptr && context.catalog->find(item.gpu) == nullptr) {
        const std::string suggestion = context.catalog->suggest(item.gpu);
        entry.error("gpu", fmt::format("unknown GPU '{}'{}", item.gpu,
                                       suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                          : ", did you mean '" + suggestion + "'?"));
    }
    entry.integer("count", item.count, 1, max_proposed_gpus);
    entry.choice("acquisition", item.acquisition, acquisition_names);
    read_hardware_units(entry, item, context);
    if (entry.has("offer") && entry.has("gpu") && context.catalog != nullptr) {
        const Offer* offer = context.catalog->find_offer(item.offer);
        if (offer != nullptr && !equals_ignore_case(offer->gpu, item.gpu)) {
            entry.error("gpu", fmt::format("offer {} sells {}, not {}", offer->id, offer->gpu, item.gpu));
        }
    }
    double price = 0;
    if (entry.number("unit_price", price, UnitKind::usd, 0, 1e8, true)) {
        item.unit_price_usd = price;
    }
    item.gpu_position = entry.position_of("gpu");
    item.count_position = entry.position_of("count");
    item.acquisition_position = entry.position_of("acquisition");
    item.unit_price_position = entry.position_of("unit_price");
    item.offer_position = entry.position_of("offer");
    entry.finish();
    return item;
}

// workload: (a file) or workloads: (a list), not both; the project is named after the proposal
// when they do not name it.
void read_proposal_workloads(MapReader& top, Proposal& proposal, Diagnostics& diagnostics, const LoadContext& context,
                             const std::string& path) {
    const std::filesystem::path base = directory_of(path);
    std::string workload_file;
    if (top.text("workload", workload_file)) {
        const std::filesystem::path target = std::filesystem::path(workload_file).is_absolute()
                                                 ? std::filesystem::path(workload_file)
                                                 : (base / workload_file).lexically_normal();
        try {
            proposal.project = load_plan_input_file(target.string(), context);
        } catch (const InputError& error) {
            for (const Diagnostic& inner : error.diagnostics()) {
                top.error("workload", "in " + format_diagnostic(inner));
            }
        }
    }
    read_workload_list(top, "workloads", proposal.project, diagnostics, context, base, display_name(path));
    if (!top.has("workload") && !top.has("workloads")) {
        top.require("workload");
    } else if (top.has("workload") && top.has("workloads")) {
        top.error("workloads", "give workload (a file) or workloads (a list), not both");
    }
    if (proposal.project.name.empty()) {
        proposal.project.name = proposal.name;
    }
}

void read_proposal_policy(const YamlNode& policy, ProposalPolicy& result, Diagnostics& diagnostics) {
    MapReader reader(policy, "policy", diagnostics);
    reader.number("memory_headroom", result.memory_headroom_fraction, UnitKind::fraction, 0, 0.9);
    reader.number("max_overspend", result.max_overspend_fraction, UnitKind::fraction, 0, 100);
    reader.number("min_saving", result.min_saving_usd, UnitKind::usd, 0, 1e12);
    reader.boolean("require_slo", result.require_slo);
    reader.boolean("warn_oversize", result.warn_oversize);
    reader.boolean("strict", result.strict);
    reader.number("max_price_gap", result.max_price_gap_fraction, UnitKind::fraction, 0, 1, true);
    reader.finish();
}

}  // namespace

Proposal load_proposal_file(const std::string& path, const LoadContext& context) {
    Diagnostics diagnostics(display_name(path));
    const YamlNode root = read_yaml_file(path, &diagnostics);
    MapReader top(root, "", diagnostics);
    Proposal proposal;
    proposal.file = display_name(path);
    top.require("proposal");
    top.require("hardware");
    top.format_version();
    top.text("proposal", proposal.name);
    read_proposal_workloads(top, proposal, diagnostics, context, path);
    if (const YamlNode* hardware = top.node("hardware")) {
        if (hardware->kind != YamlNode::Kind::sequence || hardware->items.empty()) {
            top.error("hardware", "expected a non-empty list of {role, gpu, count, acquisition}");
        } else {
            for (std::size_t i = 0; i < hardware->items.size(); ++i) {
                MapReader entry(hardware->items[i], fmt::format("hardware[{}]", i), diagnostics);
                proposal.hardware.push_back(read_proposed_hardware(entry, context));
            }
        }
    }
    if (const YamlNode* policy = top.node("policy")) {
        read_proposal_policy(*policy, proposal.policy, diagnostics);
    }
    top.finish();
    diagnostics.throw_if_any();
    return proposal;
}

}  // namespace gpusel
