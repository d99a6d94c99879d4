#include "report/catalog_render.hpp"

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "base/format.hpp"
#include "cost/offer_selection.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

std::string tflops_cell(const GpuSpec& gpu, Precision precision) {
    const double flops = gpu.peak_flops_per_s(precision);
    return flops > 0 ? fmt::format("{:.0f}", flops / 1e12) : "—";
}

// The lowest price per GPU of `gpu` over its offers of `kind` ("~" when it is an estimate).
std::string cheapest_per_gpu(const Catalog& catalog, const GpuSpec& gpu, OfferKind kind) {
    std::optional<PricePoint> best;
    for (const Offer* offer : catalog.offers_for(gpu.id)) {
        if (offer->kind != kind) {
            continue;
        }
        std::vector<PricePoint> prices;
        if (offer->price && offer->condition == UnitCondition::new_unit) {
            prices.push_back(*offer->price);
        }
        for (const RegionalRates& rates : offer->rates) {
            if (rates.on_demand) {
                prices.push_back(*rates.on_demand);
            }
        }
        for (PricePoint price : prices) {
            price.usd /= offer->gpus_per_unit;
            if (!best || price.usd < best->usd) {
                best = price;
            }
        }
    }
    if (!best) {
        return "—";
    }
    const std::string marker = best->kind == PriceKind::estimate ? "~" : "";
    return kind == OfferKind::rental ? fmt::format("{}{:.2f}", marker, best->usd) : marker + format_usd(best->usd);
}

void print_offer(std::ostream& out, const Catalog& catalog, const Offer& offer) {
    const Provider* provider = catalog.find_provider(offer.provider);
    const std::string who = provider != nullptr ? provider->name : offer.provider;
    if (offer.kind == OfferKind::purchase) {
        std::string host;
        if (const HostOffer* needed = catalog.find_host(offer.needs_host)) {
            host = fmt::format(" + host {} {} per {} GPUs", needed->id, price_text(needed->price, OfferKind::purchase),
                               needed->slots);
        }
        out << fmt::format("    buy  {} — {} from {}: {} per unit of {} ({}, {} {}){}\n", offer.id, offer.name, who,
                           offer.price ? price_text(*offer.price, OfferKind::purchase) : "no price",
                           offer.gpus_per_unit, to_string(offer.condition),
                           offer.price ? to_string(offer.price->kind) : "", offer.price ? offer.price->as_of : "",
                           host);
        return;
    }
    out << fmt::format(
        "    rent {} — {} {} ({} × {}){}\n", offer.id, who, offer.instance_type, offer.gpus_per_unit, offer.gpu,
        offer.availability == Availability::on_demand ? "" : fmt::format(", {}", to_string(offer.availability)));
    for (const RegionalRates& rates : offer.rates) {
        std::vector<std::string> parts;
        const auto add = [&](const char* what, const std::optional<PricePoint>& price) {
            if (price) {
                parts.push_back(fmt::format("{} {}{} ({} {})", what, price_text(*price, OfferKind::rental),
                                            zone_range_text(*price), to_string(price->kind), price->as_of));
            }
        };
        add("on-demand", rates.on_demand);
        add("spot", rates.spot);
        add("reserved 1y", rates.reserved_1y);
        add("reserved 3y", rates.reserved_3y);
        add("capacity block", rates.capacity_block);
        out << fmt::format(
            "         {}: {}\n", rates.region,
            parts.empty() ? std::string("no published price") : fmt::format("{}", fmt::join(parts, " · ")));
    }
}

}  // namespace

void render_catalog_list(const Catalog& catalog, std::ostream& out, const CatalogStyle& style) {
    TextTable table{{"id"},
                    {"memory", TextTable::Align::right},
                    {"bandwidth", TextTable::Align::right},
                    {"bf16 TF", TextTable::Align::right},
                    {"fp8 TF", TextTable::Align::right},
                    {"power", TextTable::Align::right},
                    {"link"},
                    {"segment"},
                    {"buy $/GPU", TextTable::Align::right},
                    {"rent $/GPU-h", TextTable::Align::right}};
    for (const GpuSpec& gpu : catalog.gpus()) {
        table.add_row({gpu.id, format_gb(gpu.memory_bytes), format_bandwidth(gpu.memory_bandwidth_bytes_per_s),
                       tflops_cell(gpu, Precision::bf16), tflops_cell(gpu, Precision::fp8),
                       fmt::format("{:.0f} W", gpu.power_watts),
                       gpu.has_gpu_interconnect()
                           ? fmt::format("{}×{}", gpu.interconnect.kind, gpu.interconnect.domain_size)
                           : fmt::format("pcie{}", gpu.host_link_generation),
                       std::string(to_string(gpu.segment)), cheapest_per_gpu(catalog, gpu, OfferKind::purchase),
                       cheapest_per_gpu(catalog, gpu, OfferKind::rental)});
    }
    out << table.render();
    if (!style.quiet) {
        out << fmt::format(
            "\n{} GPUs, {} offers · prices as of {} · lowest new purchase and on-demand price per GPU "
            "of any offer, ~ = estimate · TF = dense TFLOPS · `gpusel catalog show ID` for the "
            "offers and sources\n",
            catalog.gpus().size(), catalog.offers().size(), catalog.as_of.empty() ? "unknown" : catalog.as_of);
    }
}

void render_catalog_show(const Catalog& catalog, const GpuSpec& gpu_spec, std::ostream& out) {
    const GpuSpec* gpu = &gpu_spec;
    out << fmt::format("{} — {}\n", gpu->id, gpu->name);
    out << fmt::format("  vendor {} · architecture {} · compute capability {} · {} · {} · released {}\n", gpu->vendor,
                       gpu->architecture, gpu->compute_capability, to_string(gpu->segment), to_string(gpu->form_factor),
                       gpu->released.empty() ? "?" : gpu->released);
    out << fmt::format("  memory {} ({}) {} · bandwidth {} · ECC {}\n", format_gb(gpu->memory_bytes),
                       format_gib(gpu->memory_bytes), gpu->memory_type,
                       format_bandwidth(gpu->memory_bandwidth_bytes_per_s), gpu->ecc ? "yes" : "no");
    std::vector<std::string> rates;
    for (const Precision precision : all_precisions) {
        if (gpu->supports(precision)) {
            rates.push_back(fmt::format("{} {:g}", to_string(precision), gpu->peak_flops_per_s(precision) / 1e12));
        }
    }
    out << "  dense TFLOPS: " << fmt::format("{}", fmt::join(rates, " · ")) << "\n";
    out << fmt::format("  power {:.0f} W · host link PCIe {} x{}", gpu->power_watts, gpu->host_link_generation,
                       gpu->host_link_lanes);
    if (gpu->has_gpu_interconnect()) {
        out << fmt::format(" · {} {} bidirectional, {} GPUs per domain", gpu->interconnect.kind,
                           format_bandwidth(gpu->interconnect.bidirectional_bytes_per_s),
                           gpu->interconnect.domain_size);
    }
    out << "\n";
    const std::vector<const Offer*> offers = catalog.offers_for(gpu->id);
    out << fmt::format("  offers ({}; prices per unit, rentals per instance-hour, ~ = estimate):\n", offers.size());
    if (offers.empty()) {
        out << "    none: it cannot be bought or rented through the catalog\n";
    }
    for (const Offer* offer : offers) {
        print_offer(out, catalog, *offer);
    }
    out << "  sources:\n";
    for (const std::string& source : gpu->sources) {
        out << "    - " << source << "\n";
    }
    if (!gpu->notes.empty()) {
        out << "  notes: " << gpu->notes << "\n";
    }
}

}  // namespace gpusel
