// `gpusel plan --format json`: format 1 of docs/spec/cli.md. Keys named there come first
// and in that order; extra keys follow. Nothing here computes: every value is copied from the
// report. Numbers follow the one JSON number policy (io/json_output.hpp, json_number): the unit
// suffix of the key chooses the resolution, and a value that is not finite becomes null with a
// note naming where.

#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/offer.hpp"
#include "io/json_output.hpp"
#include "report/perf_render.hpp"
#include "report/plan_common.hpp"
#include "report/render.hpp"

namespace gpusel {

namespace {

using Json = nlohmann::ordered_json;

class JsonBuilder {
public:
    // A number at the resolution of its key's unit (io/json_output.hpp); null and a note
    // naming the path when it is not finite.
    Json number(double value, const std::string& path) { return json_number(path, value, m_notes); }

    Json optional_number(const std::optional<double>& value, const std::string& path) {
        return json_number(path, value, m_notes);
    }

    static Json strings(const std::vector<std::string>& values) {
        Json array = Json::array();
        for (const std::string& value : values) {
            array.push_back(value);
        }
        return array;
    }

    // The `memory` command's estimate fields (per_gpu, capacity_bytes, fits, headroom_bytes,
    // max_*; the max_* that do not apply to the workload's kind are null, as there).
    Json memory(const MemoryEstimate& memory, bool training, const std::string& path) {
        const MemoryBreakdown& per_gpu = memory.per_gpu;
        const std::string at = path + ".per_gpu.";
        Json breakdown;
        breakdown["weights_bytes"] = number(per_gpu.weights_bytes, at + "weights_bytes");
        breakdown["gradients_bytes"] = number(per_gpu.gradients_bytes, at + "gradients_bytes");
        breakdown["optimizer_bytes"] = number(per_gpu.optimizer_bytes, at + "optimizer_bytes");
        breakdown["activations_bytes"] = number(per_gpu.activations_bytes, at + "activations_bytes");
        breakdown["kv_cache_bytes"] = number(per_gpu.kv_cache_bytes, at + "kv_cache_bytes");
        breakdown["overhead_bytes"] = number(per_gpu.overhead_bytes, at + "overhead_bytes");
        breakdown["allocated_bytes"] = number(per_gpu.allocated_bytes, at + "allocated_bytes");
        breakdown["total_bytes"] = number(per_gpu.total_bytes, at + "total_bytes");
        breakdown["total_low_bytes"] = number(per_gpu.total_low_bytes, at + "total_low_bytes");
        breakdown["total_high_bytes"] = number(per_gpu.total_high_bytes, at + "total_high_bytes");
        Json json;
        json["per_gpu"] = std::move(breakdown);
        json["capacity_bytes"] = number(memory.capacity_bytes, path + ".capacity_bytes");
        json["fits"] = memory.fits;
        json["headroom_bytes"] = number(memory.headroom_bytes, path + ".headroom_bytes");
        json["max_micro_batch"] = training ? Json(memory.max_micro_batch) : Json(nullptr);
        json["max_batch"] = training ? Json(nullptr) : Json(memory.max_batch);
        json["max_context_tokens"] = training ? Json(nullptr) : Json(memory.max_context_tokens);
        json["notes"] = strings(memory.notes);
        json["headroom_fraction"] = number(memory.headroom_fraction, path + ".headroom_fraction");
        return json;
    }

    // The `perf` command's training and inference objects; the one that does not apply is null,
    // and so are the token rates of a model without tokens (with a note, as `perf` writes it).
    Json perf(const PerfEstimate& perf, const Workload& workload, const std::string& path) {
        const bool transformer = workload.model.is_transformer();
        const InferenceTask task = workload.task();
        Json json;
        std::vector<std::string> notes = perf.notes;
        if (perf.training) {
            const TrainingPerf& training = *perf.training;
            const std::string at = path + ".training.";
            Json object;
            object["step_time_s"] = number(training.step_time_s, at + "step_time_s");
            if (transformer) {
                object["tokens_per_s"] = number(training.tokens_per_s, at + "tokens_per_s");
            } else {
                object["tokens_per_s"] = nullptr;
                notes.push_back("training.tokens_per_s is null: the model has no tokens; see samples_per_s");
            }
            object["samples_per_s"] = number(training.samples_per_s, at + "samples_per_s");
            object["mfu"] = number(training.mfu, at + "mfu");
            object["time_to_train_s"] = optional_number(plan_text::time_to_train_s(training), at + "time_to_train_s");
            object["meets_deadline"] = training.meets_deadline;
            object["scaling_efficiency"] = number(training.scaling_efficiency, at + "scaling_efficiency");
            object["compute_s"] = number(training.compute_s, at + "compute_s");
            object["memory_s"] = number(training.memory_s, at + "memory_s");
            object["communication_s"] = number(training.communication_s, at + "communication_s");
            object["host_transfer_s"] = number(training.host_transfer_s, at + "host_transfer_s");
            object["input_s"] = number(training.input_s, at + "input_s");
            object["overhead_s"] = number(training.overhead_s, at + "overhead_s");
            object["bubble_fraction"] = number(training.bubble_fraction, at + "bubble_fraction");
            object["micro_batch"] = training.micro_batch;
            object["gradient_accumulation"] = training.gradient_accumulation;
            object["global_batch"] = training.global_batch;
            json["training"] = std::move(object);
        } else {
            json["training"] = nullptr;
        }
        if (perf.inference) {
            const InferencePerf& inference = *perf.inference;
            const std::string at = path + ".inference.";
            Json object;
            object["ttft_s"] = number(inference.ttft_s, at + "ttft_s");
            if (transformer && task != InferenceTask::generation) {
                object["tpot_s"] = nullptr;
                object["output_tokens_per_s"] = nullptr;
                object["prefill_tokens_per_s"] = number(inference.prefill_tokens_per_s, at + "prefill_tokens_per_s");
                notes.push_back(
                    "tpot_s and output_tokens_per_s are null: the workload generates no tokens; ttft_s is "
                    "the latency of one request, prefill_tokens_per_s the input tokens/s");
            } else if (transformer) {
                object["tpot_s"] = number(inference.tpot_s, at + "tpot_s");
                object["output_tokens_per_s"] = number(inference.output_tokens_per_s, at + "output_tokens_per_s");
                object["prefill_tokens_per_s"] = number(inference.prefill_tokens_per_s, at + "prefill_tokens_per_s");
            } else {
                object["tpot_s"] = nullptr;
                object["output_tokens_per_s"] = nullptr;
                object["prefill_tokens_per_s"] = nullptr;
                notes.push_back(
                    "tpot_s, output_tokens_per_s and prefill_tokens_per_s are null: the model generates no tokens; "
                    "ttft_s is the latency of one request, requests_per_s the samples/s");
            }
            object["requests_per_s"] = number(inference.requests_per_s, at + "requests_per_s");
            if (task == InferenceTask::diffusion) {
                object["images_per_s"] = number(inference.images_per_s, at + "images_per_s");
            }
            object["p99_ttft_s"] = optional_number(plan_text::p99_ttft_s(inference), at + "p99_ttft_s");
            object["p99_tpot_s"] = optional_number(plan_text::p99_tpot_s(inference), at + "p99_tpot_s");
            object["p99_e2e_s"] = optional_number(plan_text::p99_e2e_s(inference), at + "p99_e2e_s");
            object["batch"] = inference.batch;
            object["percentile"] = number(inference.percentile, at + "percentile");
            object["replicas"] = inference.replicas;
            object["max_batch_memory"] = inference.max_batch_memory;
            object["meets_slo"] = inference.meets_slo;
            object["max_requests_per_s_meeting_slo"] =
                number(inference.max_requests_per_s_meeting_slo, at + "max_requests_per_s_meeting_slo");
            object["binding_target"] = std::string(to_string(inference.binding_target));
            object["offered_requests_per_s"] = number(inference.offered_requests_per_s, at + "offered_requests_per_s");
            object["mean_concurrency"] = number(inference.mean_concurrency, at + "mean_concurrency");
            // The load as `perf` names it, and the request shape the estimate ran: what a smoke
            // test (`gpusel verify --plan`) replays.
            object["concurrency"] = inference.concurrency > 0 ? Json(inference.concurrency) : Json(nullptr);
            object["input_tokens"] = transformer ? Json(workload.inference.input_tokens) : Json(nullptr);
            object["output_tokens"] = transformer && task == InferenceTask::generation
                                          ? Json(workload.inference.output_tokens)
                                          : Json(nullptr);
            json["inference"] = std::move(object);
        } else {
            json["inference"] = nullptr;
        }
        if (m_role == nullptr || m_role->speed_band_group.empty()) {
            json["band"] = nullptr;
        } else {
            json["band"] = speed_band_json(m_role->speed_band_group, m_role->speed_band, json["training"],
                                           json["inference"], m_notes);
        }
        json["notes"] = strings(notes);
        return json;
    }

    Json cost(const CostEstimate& cost, const std::string& path) {
        const std::string at = path + ".";
        Json json;
        json["capex_usd"] = number(cost.capex_usd, at + "capex_usd");
        json["monthly_opex_usd"] = number(cost.monthly_opex_usd, at + "monthly_opex_usd");
        json["tco_usd"] = number(cost.tco_usd, at + "tco_usd");
        json["cloud_equivalent_usd"] = number(cost.cloud_equivalent_usd, at + "cloud_equivalent_usd");
        json["break_even_month"] = optional_number(cost.break_even_month, at + "break_even_month");
        json["usd_per_unit"] = number(cost.usd_per_unit, at + "usd_per_unit");
        json["unit"] = cost.unit;
        json["acquisition"] = to_string(cost.acquisition);
        json["unit_price_usd"] = number(cost.unit_price_usd, at + "unit_price_usd");
        json["unit_price_per"] = is_purchase(cost.acquisition) ? "unit" : "unit_hour";
        json["spare_gpus"] = cost.spare_gpus;
        json["spare_units"] = cost.spare_units;
        json["resale_counted"] = cost.resale_counted;
        json["warranty_months"] = cost.warranty_months;
        json["site"] = to_string(cost.site);
        Json depreciation;
        depreciation["method"] = "straight-line";
        depreciation["months"] = number(cost.depreciation_months, at + "depreciation.months");
        depreciation["usd_per_month"] = number(cost.depreciation_usd_per_month, at + "depreciation.usd_per_month");
        depreciation["book_value_at_horizon_usd"] =
            number(cost.book_value_at_horizon_usd, at + "depreciation.book_value_at_horizon_usd");
        json["depreciation"] = std::move(depreciation);
        json["energy_kwh"] = number(cost.energy_kwh, at + "energy_kwh");
        json["system_power_watts"] = number(cost.system_power_watts, at + "system_power_watts");
        const CostBreakdown& parts = cost.breakdown;
        const std::string part = at + "breakdown.";
        Json breakdown;
        breakdown["gpus_usd"] = number(parts.gpus_usd, part + "gpus_usd");
        breakdown["servers_usd"] = number(parts.servers_usd, part + "servers_usd");
        breakdown["spares_usd"] = number(parts.spares_usd, part + "spares_usd");
        breakdown["power_usd"] = number(parts.power_usd, part + "power_usd");
        breakdown["operations_usd"] = number(parts.operations_usd, part + "operations_usd");
        breakdown["failures_usd"] = number(parts.failures_usd, part + "failures_usd");
        breakdown["resale_usd"] = number(parts.resale_usd, part + "resale_usd");
        breakdown["rental_usd"] = number(parts.rental_usd, part + "rental_usd");
        breakdown["hidden_usd"] = number(parts.hidden_usd, part + "hidden_usd");
        json["breakdown"] = std::move(breakdown);
        json["notes"] = strings(cost.notes);
        return json;
    }

    // The `offer` object of the JSON contract (docs/catalog.md): what is bought or rented, from
    // whom, in what units, at what price and of what kind.
    Json offer(const OfferUse& use, const std::string& path) {
        Json json;
        json["id"] = use.id;
        json["kind"] = to_string(use.kind);
        json["provider"] = use.provider;
        json["provider_name"] = use.provider_name;
        if (use.kind == OfferKind::rental) {
            json["tier"] = to_string(use.tier);
            json["instance_type"] = use.instance_type;
            json["region"] = use.region;
        } else {
            json["form"] = to_string(use.form);
            json["name"] = use.name;
        }
        json["gpus_per_unit"] = use.gpus_per_unit;
        json["units"] = use.units;
        json["idle_gpus"] = use.idle_gpus;
        json["price_usd"] = number(use.price_usd, path + ".price_usd");
        json["price_per"] = use.price_per();
        if (use.zones_usd.empty()) {
            json["zone_prices"] = nullptr;
        } else {
            // price_usd is the median of these (a spot price seen per availability zone).
            Json zones;
            zones["zones"] = use.zones_usd.size();
            zones["min_usd"] = number(use.zones_usd.front(), path + ".zone_prices.min_usd");
            zones["median_usd"] = number(median_of(use.zones_usd), path + ".zone_prices.median_usd");
            zones["max_usd"] = number(use.zones_usd.back(), path + ".zone_prices.max_usd");
            json["zone_prices"] = std::move(zones);
        }
        json["price_kind"] = to_string(use.price_kind);
        json["as_of"] = use.as_of;
        json["sources"] = strings(use.sources);
        json["estimate"] = use.estimated();
        if (!use.host_id.empty()) {
            Json host;
            host["id"] = use.host_id;
            host["name"] = use.host_name;
            host["units"] = use.hosts;
            host["price_usd"] = number(use.host_price_usd, path + ".host.price_usd");
            host["price_kind"] = to_string(use.host_price_kind);
            host["price_as_of"] = use.host_price_as_of;
            json["host"] = std::move(host);
        } else {
            json["host"] = nullptr;
        }
        json["order"] = use.order;
        return json;
    }

    Json bottleneck(const Bottleneck& bottleneck, const std::string& path) {
        Json json;
        json["resource"] = to_string(bottleneck.resource);
        json["share"] = number(bottleneck.share, path + ".share");
        json["detail"] = bottleneck.detail;
        json["gpu_utilization"] = number(bottleneck.gpu_utilization, path + ".gpu_utilization");
        json["remedy"] = bottleneck.remedy;
        json["phase"] = std::string(to_string(bottleneck.phase));
        return json;
    }

    Json candidate(const Candidate& candidate, const Workload& workload, const std::string& path) {
        Json json;
        json["gpu"] = candidate.gpu;
        json["count"] = candidate.count;
        json["acquisition"] = to_string(candidate.acquisition);
        json["layout"] = layout_json(candidate.layout);
        json["score"] = number(candidate.score, path + ".score");
        json["memory"] = memory(candidate.memory, !candidate.perf.inference, path + ".memory");
        json["perf"] = perf(candidate.perf, workload, path + ".perf");
        if (m_role != nullptr && !m_role->speed_band_group.empty()) {
            // On the GPU and size the calibration measured, the band is the measurement's noise.
            if (const std::optional<SpeedBandFactors> measured = measured_speed_band(
                    m_role->calibration, candidate.gpu, configuration_gpus(workload, candidate.layout))) {
                Json& perf_json = json["perf"];
                perf_json["band"] = speed_band_json(m_role->speed_band_group, *measured, perf_json["training"],
                                                    perf_json["inference"], m_notes);
            }
        }
        json["cost"] = cost(candidate.cost, path + ".cost");
        json["bottleneck"] = bottleneck(candidate.perf.bottleneck, path + ".bottleneck");
        json["reason"] = candidate.reason;
        json["offer"] = offer(candidate.cost.offer, path + ".offer");
        json["gpu_name"] = candidate.gpu_name;
        json["replicas"] = candidate.replicas;
        json["precision"] = to_string(candidate.precision);
        json["precision_fallback"] = candidate.precision_fallback;
        if (candidate.perf.training) {
            json["micro_batch"] = candidate.micro_batch;
            json["checkpointing"] = to_string(candidate.checkpointing);
        } else {
            json["batch"] = candidate.batch;
        }
        return json;
    }

    Json role(const RolePlan& plan, const std::string& path) {
        const Workload& workload = plan.workload;
        m_role = &plan;
        Json json;
        json["role"] = to_string(plan.role);
        json["workload"] = plan.workload.name;
        if (!plan.workload.model.hf_id.empty()) {
            // The Hugging Face id and the snapshot's commit the plan was computed from.
            json["model_hf_id"] = plan.workload.model.hf_id;
            json["model_revision"] = plan.workload.model.revision;
        }
        json["winner"] = plan.winner ? candidate(*plan.winner, workload, path + ".winner") : Json(nullptr);
        if (plan.alternative) {
            Json alternative = candidate(*plan.alternative, workload, path + ".alternative");
            alternative["why_not"] = plan.alternative_why_not;
            json["alternative"] = std::move(alternative);
        } else {
            json["alternative"] = nullptr;
        }
        Json candidates = Json::array();
        for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
            candidates.push_back(candidate(plan.ranked[i], workload, fmt::format("{}.candidates[{}]", path, i)));
        }
        json["candidates"] = std::move(candidates);
        Json rejected = Json::array();
        for (std::size_t i = 0; i < plan.rejected.size(); ++i) {
            const Rejection& rejection = plan.rejected[i];
            Json entry;
            entry["gpu"] = rejection.gpu;
            entry["kind"] = std::string(to_string(rejection.kind));
            entry["limit"] = rejection.limit;
            entry["needed"] = number(rejection.needed, fmt::format("{}.rejected[{}].needed", path, i));
            entry["available"] = number(rejection.available, fmt::format("{}.rejected[{}].available", path, i));
            entry["count"] = rejection.count;
            entry["why_not"] = rejection.why_not;
            rejected.push_back(std::move(entry));
        }
        json["rejected"] = std::move(rejected);
        json["space"] = plan.space;
        json["evaluated"] = plan.evaluated;
        json["feasible"] = plan.feasible;
        json["question"] = plan.question;
        json["workload_class"] = to_string(plan.workload_class);
        json["class_priorities"] = class_priorities(plan.workload_class);
        json["pareto"] = plan.pareto;
        json["advice"] = strings(plan.advice);
        Json relaxations = Json::array();
        for (const Relaxation& relaxation : plan.relaxations) {
            relaxations.push_back({{"field", relaxation.field},
                                   {"from", relaxation.from},
                                   {"to", relaxation.to},
                                   {"pick", relaxation.pick}});
        }
        json["relaxations"] = std::move(relaxations);
        json["calibration"] = speed_calibration_json(plan.calibration, m_notes);
        json["calibration_delta"] = calibration_delta(plan.calibration_delta, path + ".calibration_delta");
        if (plan.mix) {
            json["mix"] = mix(*plan.mix, path + ".mix");
        }
        if (!plan.ordered_in_place.empty()) {
            json["ordered_in_place"] = plan.ordered_in_place;
        }
        if (plan.disaggregated) {
            json["disaggregated"] = disaggregated(*plan.disaggregated, path + ".disaggregated");
        }
        json["robustness"] = robustness(plan.uncertainty, path + ".robustness");
        json["sensitivity"] = sensitivity(plan.uncertainty, path + ".sensitivity");
        if (plan.fleet) {
            // Only with inference.load: every other plan keeps its keys (docs/spec/plan-output.md).
            json["fleet"] = fleet(*plan.fleet, path + ".fleet");
        }
        return json;
    }

    // plan/fleet.hpp: an owned base plus replicas rented on demand, hour by hour.
    Json fleet(const FleetPlan& fleet, const std::string& path) {
        const std::string at = path + ".";
        const auto option = [&](const FleetOption& value, const std::string& where) {
            return Json{{"owned_replicas", value.owned_replicas},
                        {"owned_tco_usd", number(value.owned_tco_usd, where + ".owned_tco_usd")},
                        {"rented_usd", number(value.rented_usd, where + ".rented_usd")},
                        {"rented_replica_hours", number(value.rented_replica_hours, where + ".rented_replica_hours")},
                        {"rented_launches", number(value.rented_launches, where + ".rented_launches")},
                        {"rented_replicas_at_peak", value.rented_replicas_at_peak},
                        {"tco_usd", number(value.tco_usd, where + ".tco_usd")}};
        };
        Json json;
        json["gpu"] = fleet.gpu;
        if (!fleet.not_priced_reason.empty()) {
            json["not_priced_reason"] = fleet.not_priced_reason;
            return json;
        }
        json["gpus_per_replica"] = fleet.gpus_per_replica;
        json["horizon_months"] = number(fleet.horizon_months, at + "horizon_months");
        json["replica_capacity_requests_per_s"] =
            number(fleet.replica_capacity_requests_per_s, at + "replica_capacity_requests_per_s");
        json["peak_replicas_needed"] = fleet.peak_replicas_needed;
        json["owned_replicas"] = fleet.chosen.owned_replicas;
        json["owned_tco_usd"] = number(fleet.chosen.owned_tco_usd, at + "owned_tco_usd");
        json["rented_usd"] = number(fleet.chosen.rented_usd, at + "rented_usd");
        json["rented_replicas_at_peak"] = fleet.chosen.rented_replicas_at_peak;
        json["tco_usd"] = number(fleet.chosen.tco_usd, at + "tco_usd");
        json["all_owned_tco_usd"] = number(fleet.all_owned.tco_usd, at + "all_owned_tco_usd");
        json["all_rented_tco_usd"] = number(fleet.all_rented.tco_usd, at + "all_rented_tco_usd");
        json["owned_load_percentile"] = number(fleet.owned_load_percentile, at + "owned_load_percentile");
        json["one_more_owned_delta_usd"] = number(fleet.one_more_owned_delta_usd, at + "one_more_owned_delta_usd");
        json["break_even_rented_hours_per_month"] =
            number(fleet.break_even_rented_hours_per_month, at + "break_even_rented_hours_per_month");
        json["rented_hours_above_base_per_month"] =
            number(fleet.rented_hours_above_base_per_month, at + "rented_hours_above_base_per_month");
        json["owned_offer"] = fleet.owned_offer;
        json["rental_offer"] = fleet.rental_offer;
        json["rental_usd_per_replica_hour"] =
            number(fleet.rental_usd_per_replica_hour, at + "rental_usd_per_replica_hour");
        json["startup_lag_s"] = number(fleet.startup_lag_s, at + "startup_lag_s");
        json["startup_lag_source"] = fleet.startup_lag_source;
        json["spare_replicas"] = fleet.spare_replicas;
        json["pick_tco_usd"] = number(fleet.pick_tco_usd, at + "pick_tco_usd");
        json["ordered"] = fleet.ordered;
        json["ordered_why"] = fleet.ordered_why;
        json["chosen"] = option(fleet.chosen, at + "chosen");
        json["all_owned"] = option(fleet.all_owned, at + "all_owned");
        json["all_rented"] = option(fleet.all_rented, at + "all_rented");
        Json capacity = Json::array();
        for (std::size_t i = 0; i < fleet.capacity_requests_per_s.size(); ++i) {
            capacity.push_back(
                number(fleet.capacity_requests_per_s[i], fmt::format("{}capacity_requests_per_s[{}]", at, i)));
        }
        json["capacity_requests_per_s"] = std::move(capacity);
        Json hours = Json::array();
        for (std::size_t i = 0; i < fleet.hours.size(); ++i) {
            const FleetHour& hour = fleet.hours[i];
            const std::string where = fmt::format("{}hours[{}].", at, i);
            hours.push_back(Json{
                {"hour", hour.hour},
                {"requests_per_s", number(hour.requests_per_s, where + "requests_per_s")},
                {"replicas_needed", hour.replicas_needed},
                {"owned_replicas", hour.owned_replicas},
                {"rented_replicas", hour.rented_replicas},
                {"capacity_requests_per_s", number(hour.capacity_requests_per_s, where + "capacity_requests_per_s")}});
        }
        json["hours"] = std::move(hours);
        Json months = Json::array();
        for (std::size_t i = 0; i < fleet.months.size(); ++i) {
            const FleetMonth& month = fleet.months[i];
            const std::string where = fmt::format("{}months[{}].", at, i);
            months.push_back(
                Json{{"month", month.month},
                     {"peak_requests_per_s", number(month.peak_requests_per_s, where + "peak_requests_per_s")},
                     {"peak_replicas_needed", month.peak_replicas_needed},
                     {"owned_utilization", number(month.owned_utilization, where + "owned_utilization")},
                     {"rented_replica_hours", number(month.rented_replica_hours, where + "rented_replica_hours")},
                     {"rented_usd", number(month.rented_usd, where + "rented_usd")}});
        }
        json["months"] = std::move(months);
        json["notes"] = strings(fleet.notes);
        return json;
    }

    // plan/mix.hpp MixPlan: only on serving roles with an input length distribution, so the
    // output of every other role is unchanged (docs/spec/plan-output.md, "Mixed fleet").
    Json mix(const MixPlan& value, const std::string& path) {
        Json parts = Json::array();
        for (std::size_t index = 0; index < value.parts.size(); ++index) {
            const MixPart& part = value.parts[index];
            const std::string at = fmt::format("{}.parts[{}]", path, index);
            parts.push_back({{"gpu", part.gpu},
                             {"replicas", part.replicas},
                             {"gpus", part.gpus},
                             {"max_input_tokens", part.max_input_tokens},
                             {"request_share", number(part.request_share, at + ".request_share")},
                             {"tco_usd", number(part.tco_usd, at + ".tco_usd")}});
        }
        const bool found = !value.parts.empty();
        Json json;
        json["parts"] = std::move(parts);
        json["routing_rule"] = found ? Json(value.routing_rule) : Json(nullptr);
        json["tco_usd"] = found ? number(value.tco_usd, path + ".tco_usd") : Json(nullptr);
        json["best_single_tco_usd"] = number(value.best_single_tco_usd, path + ".best_single_tco_usd");
        json["saving_fraction"] = found ? number(value.saving_fraction, path + ".saving_fraction") : Json(nullptr);
        json["chosen"] = value.chosen;
        json["why"] = value.why;
        return json;
    }

    // plan/disaggregation.hpp DisaggregatedPlan; only for roles with deployment.disaggregated.
    Json disaggregated(const DisaggregatedPlan& split, const std::string& path) {
        const auto phase = [&](const DisaggregatedPhase& side, const std::string& at) {
            return Json{{"gpu", side.gpu},
                        {"gpu_name", side.gpu_name},
                        {"count", side.workers},
                        {"layout", fmt::format("tp{} ep{}", side.tensor_parallel, side.expert_parallel)},
                        {"tensor_parallel", side.tensor_parallel},
                        {"expert_parallel", side.expert_parallel},
                        {"spare_workers", side.spare_workers},
                        {"gpus", side.gpus},
                        {"batch", side.batch},
                        {"step_s", number(side.step_s, at + ".step_s")},
                        {"utilisation", number(side.utilisation, at + ".utilisation")}};
        };
        Json json;
        json["prefill"] = phase(split.prefill, path + ".prefill");
        json["decode"] = phase(split.decode, path + ".decode");
        json["replicas"] = split.replicas;
        json["requests_per_s"] = number(split.requests_per_s, path + ".requests_per_s");
        json["speed_margin"] = number(split.speed_margin, path + ".speed_margin");
        json["kv_bytes"] = number(split.kv_bytes, path + ".kv_bytes");
        json["kv_transfer_s"] = number(split.kv_transfer_s, path + ".kv_transfer_s");
        json["kv_link"] = split.kv_link;
        json["percentile"] = number(split.percentile, path + ".percentile");
        json["ttft_s"] = number(split.ttft_s, path + ".ttft_s");
        json["tpot_s"] = number(split.tpot_s, path + ".tpot_s");
        json["meets_slo"] = split.meets_slo;
        json["prefill_share"] = number(split.prefill_share, path + ".prefill_share");
        json["tco_usd"] = number(split.tco_usd, path + ".tco_usd");
        json["usd_per_million_tokens"] = number(split.usd_per_million_tokens, path + ".usd_per_million_tokens");
        json["colocated_tco_usd"] = number(split.colocated_tco_usd, path + ".colocated_tco_usd");
        json["colocated_gpus"] = split.colocated_gpus;
        json["colocated_usd_per_million_tokens"] =
            number(split.colocated_usd_per_million_tokens, path + ".colocated_usd_per_million_tokens");
        json["chosen"] = split.chosen;
        json["requested"] = split.requested;
        json["why"] = split.why;
        return json;
    }

    // plan/plan.hpp CalibrationDelta: null without a calibration; a side without a pick is null.
    Json calibration_delta(const std::optional<CalibrationDelta>& delta, const std::string& path) {
        if (!delta) {
            return nullptr;
        }
        const auto pick = [&](const std::optional<PickSummary>& summary, const std::string& at) {
            if (!summary) {
                return Json(nullptr);
            }
            return Json{{"gpu", summary->gpu},
                        {"count", summary->count},
                        {"acquisition", std::string(to_string(summary->acquisition))},
                        {"tco_usd", number(summary->tco_usd, at + ".tco_usd")}};
        };
        Json json;
        json["role"] = to_string(delta->role);
        json["measured_gpu"] = delta->measured_gpu;
        json["measured_vs_predicted"] = number(delta->measured_vs_predicted, path + ".measured_vs_predicted");
        json["uncalibrated"] = pick(delta->uncalibrated, path + ".uncalibrated");
        json["calibrated"] = pick(delta->calibrated, path + ".calibrated");
        json["tco_delta_usd"] = delta->uncalibrated && delta->calibrated
                                    ? number(delta->tco_delta_usd, path + ".tco_delta_usd")
                                    : Json(nullptr);
        json["text"] =
            plan_text::calibration_delta_text(plan_text::money_of(m_role->workload.deployment.currency), *delta);
        return json;
    }

    // plan/uncertainty.hpp: null when not computed (no winner).
    Json robustness(const RoleUncertainty& uncertainty, const std::string& path) {
        if (!uncertainty.computed) {
            return nullptr;
        }
        const std::string at = path + ".";
        Json json;
        json["p_best"] = number(uncertainty.p_best, at + "p_best");
        json["p_feasible"] = number(uncertainty.p_feasible, at + "p_feasible");
        json["confidence"] = number(uncertainty.confidence, at + "confidence");
        json["tied_with"] = uncertainty.tied_with;
        json["samples"] = uncertainty.samples;
        json["seed"] = uncertainty.seed;
        json["speed_phase"] = uncertainty.speed_phase;
        json["speed_band_fraction"] = number(uncertainty.speed_band_fraction, at + "speed_band_fraction");
        json["price_band_fraction"] = number(uncertainty.price_band_fraction, at + "price_band_fraction");
        json["score"] = number(uncertainty.score, at + "score");
        json["score_unit"] = uncertainty.score_unit;
        json["warnings"] = strings(uncertainty.warnings);
        Json bands = Json::array();
        for (std::size_t i = 0; i < uncertainty.bands.size(); ++i) {
            const EstimateBand& band = uncertainty.bands[i];
            const std::string where = fmt::format("{}bands[{}].", at, i);
            Json entry;
            entry["time_low_factor"] = number(band.time_low_factor, where + "time_low_factor");
            entry["time_high_factor"] = number(band.time_high_factor, where + "time_high_factor");
            entry["tco_low_usd"] = number(band.tco_low_usd, where + "tco_low_usd");
            entry["tco_high_usd"] = number(band.tco_high_usd, where + "tco_high_usd");
            entry["replicas_low"] = band.replicas_low;
            entry["replicas_high"] = band.replicas_high;
            entry["p_feasible"] = number(band.p_feasible, where + "p_feasible");
            bands.push_back(std::move(entry));
        }
        json["bands"] = std::move(bands);
        Json tornado = Json::array();
        for (std::size_t i = 0; i < uncertainty.tornado.size(); ++i) {
            const Swing& swing = uncertainty.tornado[i];
            const std::string where = fmt::format("{}tornado[{}].", at, i);
            Json entry;
            entry["input"] = swing.input;
            entry["unit"] = swing.unit;
            entry["low_value"] = number(swing.low_value, where + "low_value");
            entry["high_value"] = number(swing.high_value, where + "high_value");
            entry["low_score"] = number(swing.low_score, where + "low_score");
            entry["high_score"] = number(swing.high_score, where + "high_score");
            entry["flips_low"] = swing.flips_low;
            entry["flips_high"] = swing.flips_high;
            tornado.push_back(std::move(entry));
        }
        json["tornado"] = std::move(tornado);
        return json;
    }

    Json sensitivity(const RoleUncertainty& uncertainty, const std::string& path) {
        Json list = Json::array();
        for (std::size_t i = 0; i < uncertainty.sensitivity.size(); ++i) {
            const Sensitivity& entry = uncertainty.sensitivity[i];
            const std::string where = fmt::format("{}[{}].", path, i);
            Json json;
            json["input"] = entry.input;
            json["current"] = number(entry.current, where + "current");
            json["break_even"] = number(entry.break_even, where + "break_even");
            json["new_winner"] = entry.new_winner;
            json["unit"] = entry.unit;
            list.push_back(std::move(json));
        }
        return list;
    }

    Json procurement(const ProcurementLine& line, const std::string& path) {
        const std::string at = path + ".";
        Json json;
        json["role"] = to_string(line.role);
        json["gpu"] = line.gpu;
        json["gpu_name"] = line.gpu_name;
        json["quantity"] = line.quantity;
        json["acquisition"] = to_string(line.acquisition);
        json["unit_price_usd"] = number(line.unit_price_usd, at + "unit_price_usd");
        json["total_usd"] = number(line.total_usd, at + "total_usd");
        json["tco_usd"] = number(line.tco_usd, at + "tco_usd");
        json["horizon_months"] = number(line.horizon_months, at + "horizon_months");
        json["reason"] = line.reason;
        json["alternative"] = line.alternative;
        json["alternative_reason"] = line.alternative_reason;
        json["monthly_opex_usd"] = number(line.monthly_opex_usd, at + "monthly_opex_usd");
        json["unit_price_per"] = is_purchase(line.acquisition) ? "unit" : "unit_hour";
        json["gpus"] = line.gpus;
        json["host_usd"] = number(line.host_usd, at + "host_usd");
        json["resale_usd"] = number(line.resale_usd, at + "resale_usd");
        json["resale_counted"] = line.resale_counted;
        json["precision"] = to_string(line.precision);
        json["offer"] = offer(line.offer, at + "offer");
        json["quantity_units"] = line.quantity;
        json["price_per"] = line.offer.price_per();
        if (line.lead_time_weeks > 0) {
            // Only with deployment.deliver_by: every other plan keeps its keys.
            json["delivery"] = Json{{"lead_time_weeks", number(line.lead_time_weeks, at + "delivery.lead_time_weeks")},
                                    {"lead_time_basis", line.lead_time_basis},
                                    {"wait_weeks", number(line.wait_weeks, at + "delivery.wait_weeks")},
                                    {"wait_usd", number(line.wait_usd, at + "delivery.wait_usd")}};
        }
        Json lines = Json::array();
        const std::vector<OrderLine> order = order_lines(line);
        for (std::size_t i = 0; i < order.size(); ++i) {
            lines.push_back(order_line(order[i], fmt::format("{}lines[{}]", at, i)));
        }
        json["lines"] = std::move(lines);
        return json;
    }

    // One unit per key, as the CSV's columns (docs/spec/plan-output.md, "Order lines").
    Json order_line(const OrderLine& line, const std::string& path) {
        const std::string at = path + ".";
        Json json;
        json["item"] = to_string(line.item);
        json["id"] = line.id;
        json["name"] = line.name;
        json["provider"] = line.provider;
        json["quantity_units"] = line.quantity_units;
        json["spare_units"] = line.spare_units;
        json["gpus_per_unit"] = line.gpus_per_unit;
        json["gpus"] = line.gpus;
        json["unit_price_usd"] = number(line.unit_price_usd, at + "unit_price_usd");
        json["price_per"] = line.price_per;
        json["price_kind"] = to_string(line.price_kind);
        json["price_as_of"] = line.price_as_of;
        json["capex_usd"] = number(line.capex_usd, at + "capex_usd");
        json["opex_usd_per_month"] = number(line.opex_usd_per_month, at + "opex_usd_per_month");
        json["rent_usd"] = number(line.rent_usd, at + "rent_usd");
        json["resale_usd"] = number(line.resale_usd, at + "resale_usd");
        json["resale_subtracted_usd"] = number(line.resale_subtracted_usd, at + "resale_subtracted_usd");
        json["tco_usd"] = number(line.tco_usd, at + "tco_usd");
        json["horizon_months"] = number(line.horizon_months, at + "horizon_months");
        json["depreciation_usd_per_month"] = number(line.depreciation_usd_per_month, at + "depreciation_usd_per_month");
        return json;
    }

    Json shared_fleet(const SharedFleet& fleet) {
        const std::string at = "shared_fleet.";
        Json json;
        json["gpu"] = fleet.gpu;
        json["offer"] = fleet.offer;
        json["owned_gpus"] = fleet.owned_gpus;
        json["span_months"] = number(fleet.span_months, at + "span_months");
        json["capex_usd"] = number(fleet.capex_usd, at + "capex_usd");
        json["shared_tco_usd"] = number(fleet.shared_tco_usd, at + "shared_tco_usd");
        json["separate_tco_usd"] = number(fleet.separate_tco_usd, at + "separate_tco_usd");
        json["chosen"] = fleet.chosen;
        json["why"] = fleet.why;
        Json phases = Json::array();
        for (const SharedFleetPhase& part : fleet.phases) {
            Json entry;
            entry["workload"] = part.workload;
            entry["role"] = std::string(to_string(part.role));
            entry["first_month"] = part.first_month;
            entry["last_month"] = part.last_month;
            entry["gpus"] = part.gpus;
            entry["utilisation"] = number(part.utilisation, at + "phases.utilisation");
            entry["power_usd"] = number(part.power_usd, at + "phases.power_usd");
            entry["separate_tco_usd"] = number(part.separate_tco_usd, at + "phases.separate_tco_usd");
            entry["separate_pick"] = part.separate_pick;
            phases.push_back(std::move(entry));
        }
        json["phases"] = std::move(phases);
        Json months = Json::array();
        for (const SharedFleetMonth& row : fleet.months) {
            Json entry;
            entry["month"] = row.month;
            entry["owned_gpus"] = row.owned_gpus;
            entry["busy_gpus"] = number(row.busy_gpus, at + "months.busy_gpus");
            entry["idle_gpus"] = row.idle_gpus;
            entry["utilisation"] = number(row.utilisation(), at + "months.utilisation");
            entry["phases"] = row.phases;
            months.push_back(std::move(entry));
        }
        json["months"] = std::move(months);
        json["idle_advice"] = strings(fleet.idle_advice);
        return json;
    }

    Json report(const PlanReport& report) {
        Json json;
        json["format_version"] = 1;
        json["project"] = report.project;
        Json roles = Json::array();
        for (std::size_t i = 0; i < report.roles.size(); ++i) {
            roles.push_back(role(report.roles[i], fmt::format("roles[{}]", i)));
        }
        json["roles"] = std::move(roles);
        Json lines = Json::array();
        for (std::size_t i = 0; i < report.procurement.size(); ++i) {
            lines.push_back(procurement(report.procurement[i], fmt::format("procurement[{}]", i)));
        }
        json["procurement"] = std::move(lines);
        if (report.shared_fleet) {
            json["shared_fleet"] = shared_fleet(*report.shared_fleet);
        }
        Json assumptions = Json::array();
        for (const Assumption& assumption : report.assumptions) {
            Json entry;
            entry["field"] = assumption.field;
            entry["value"] = assumption.value;
            entry["source"] = assumption.source;
            assumptions.push_back(std::move(entry));
        }
        json["assumptions"] = std::move(assumptions);
        json["objective"] = report.objective;
        json["horizon_months"] = number(report.horizon_months, "horizon_months");
        Json totals;
        totals["capex_usd"] = number(report.total_capex_usd, "totals.capex_usd");
        totals["monthly_opex_usd"] = number(report.total_monthly_opex_usd, "totals.monthly_opex_usd");
        totals["tco_usd"] = number(report.total_tco_usd, "totals.tco_usd");
        // The order lines' column sums: owned running costs apart from rent.
        const OrderLineTotals sums = order_line_totals(report.procurement);
        totals["opex_usd_per_month"] = number(sums.opex_usd_per_month, "totals.opex_usd_per_month");
        totals["rent_usd"] = number(sums.rent_usd, "totals.rent_usd");
        totals["resale_usd"] = number(sums.resale_usd, "totals.resale_usd");
        totals["resale_subtracted_usd"] = number(sums.resale_subtracted_usd, "totals.resale_subtracted_usd");
        json["totals"] = std::move(totals);
        // Outputs in another currency: the user's rate, and the totals above in it (every `_usd`
        // field stays in USD). Absent for USD, so that USD plans are unchanged.
        if (const Money money = plan_text::money_of(report); !money.is_usd()) {
            Json currency;
            currency["code"] = money.code;
            currency["per_usd"] = number(money.per_usd, "currency.per_usd");
            currency["as_of"] = money.as_of;
            currency["source"] = "user-given";
            // Amounts in the currency, to the cent as every `_usd` amount is (the key names no
            // unit; `code` does).
            const auto amount = [&](double usd, const std::string& path) {
                const Json checked = number(money.of(usd), path);
                return checked.is_null() ? checked : Json(round_to(money.of(usd), 2));
            };
            Json converted;
            converted["capex"] = amount(report.total_capex_usd, "currency.totals.capex");
            converted["monthly_opex"] = amount(report.total_monthly_opex_usd, "currency.totals.monthly_opex");
            converted["tco"] = amount(report.total_tco_usd, "currency.totals.tco");
            converted["opex_per_month"] = amount(sums.opex_usd_per_month, "currency.totals.opex_per_month");
            converted["rent"] = amount(sums.rent_usd, "currency.totals.rent");
            converted["resale"] = amount(sums.resale_usd, "currency.totals.resale");
            converted["resale_subtracted"] = amount(sums.resale_subtracted_usd, "currency.totals.resale_subtracted");
            currency["totals"] = std::move(converted);
            json["currency"] = std::move(currency);
        }
        json["notes"] = strings(m_notes);  // last: every non-finite value above has been seen
        return json;
    }

private:
    std::vector<std::string> m_notes;
    const RolePlan* m_role = nullptr;  // the role being written (its speed band)
};

}  // namespace

void render_plan_json(const PlanReport& report, std::ostream& out) {
    JsonBuilder builder;
    const Json json = builder.report(report);
    out << dump_json(json);
}

}  // namespace gpusel
