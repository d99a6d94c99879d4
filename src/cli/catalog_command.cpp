// gpusel catalog list | show ID | validate FILE

#include <algorithm>

#include <fmt/format.h>

#include "cli/context.hpp"
#include "gpusel/error.hpp"
#include "gpusel/format.hpp"
#include "gpusel/offer_selection.hpp"
#include "gpusel/text.hpp"
#include "gpusel/text_table.hpp"
#include "gpusel/yaml.hpp"

namespace gpusel::cli {

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
                           offer.price ? price_text(*offer.price, OfferKind::purchase) : "no price", offer.gpus_per_unit,
                           to_string(offer.condition), offer.price ? to_string(offer.price->kind) : "",
                           offer.price ? offer.price->as_of : "", host);
        return;
    }
    out << fmt::format("    rent {} — {} {} ({} × {}){}\n", offer.id, who, offer.instance_type, offer.gpus_per_unit,
                       offer.gpu,
                       offer.availability == Availability::on_demand ? "" : fmt::format(", {}", to_string(offer.availability)));
    for (const RegionalRates& rates : offer.rates) {
        std::vector<std::string> parts;
        const auto add = [&](const char* what, const std::optional<PricePoint>& price) {
            if (price) {
                parts.push_back(fmt::format("{} {} ({} {})", what, price_text(*price, OfferKind::rental),
                                            to_string(price->kind), price->as_of));
            }
        };
        add("on-demand", rates.on_demand);
        add("spot", rates.spot);
        add("reserved 1y", rates.reserved_1y);
        add("reserved 3y", rates.reserved_3y);
        out << fmt::format("         {}: {}\n", rates.region, parts.empty() ? std::string("no published price")
                                                                           : fmt::format("{}", fmt::join(parts, " · ")));
    }
}

void print_list(Context& context) {
    const Catalog& catalog = context.catalog();
    TextTable table;
    table.add_column("id");
    table.add_column("memory", TextTable::Align::right);
    table.add_column("bandwidth", TextTable::Align::right);
    table.add_column("bf16 TF", TextTable::Align::right);
    table.add_column("fp8 TF", TextTable::Align::right);
    table.add_column("power", TextTable::Align::right);
    table.add_column("link");
    table.add_column("segment");
    table.add_column("buy $/GPU", TextTable::Align::right);
    table.add_column("rent $/GPU-h", TextTable::Align::right);
    for (const GpuSpec& gpu : catalog.gpus()) {
        table.add_row({gpu.id, format_gb(gpu.memory_bytes), format_bandwidth(gpu.memory_bandwidth_bytes_per_s),
                       tflops_cell(gpu, Precision::bf16), tflops_cell(gpu, Precision::fp8),
                       fmt::format("{:.0f} W", gpu.power_watts),
                       gpu.has_gpu_interconnect() ? fmt::format("{}×{}", gpu.interconnect.kind, gpu.interconnect.domain_size)
                                                  : fmt::format("pcie{}", gpu.host_link_generation),
                       std::string(to_string(gpu.segment)), cheapest_per_gpu(catalog, gpu, OfferKind::purchase),
                       cheapest_per_gpu(catalog, gpu, OfferKind::rental)});
    }
    context.out << table.render();
    if (!context.quiet) {
        context.out << fmt::format("\n{} GPUs, {} offers · prices as of {} · lowest new purchase and on-demand price per GPU "
                                   "of any offer, ~ = estimate · TF = dense TFLOPS · `gpusel catalog show ID` for the "
                                   "offers and sources\n",
                                   catalog.gpus().size(), catalog.offers().size(),
                                   catalog.as_of.empty() ? "unknown" : catalog.as_of);
    }
}

void print_show(Context& context, const std::string& id) {
    const Catalog& catalog = context.catalog();
    const GpuSpec* gpu = catalog.find(id);
    if (gpu == nullptr) {
        const std::string suggestion = catalog.suggest(id);
        throw UsageError(fmt::format("unknown GPU '{}'{}", id,
                                     suggestion.empty() ? "; `gpusel catalog list` shows the ids"
                                                        : ", did you mean '" + suggestion + "'?"));
    }
    std::ostream& out = context.out;
    out << fmt::format("{} — {}\n", gpu->id, gpu->name);
    out << fmt::format("  vendor {} · architecture {} · compute capability {} · {} · {} · released {}\n", gpu->vendor,
                       gpu->architecture, gpu->compute_capability, to_string(gpu->segment), to_string(gpu->form_factor),
                       gpu->released.empty() ? "?" : gpu->released);
    out << fmt::format("  memory {} ({}) {} · bandwidth {} · ECC {}\n", format_gb(gpu->memory_bytes),
                       format_gib(gpu->memory_bytes), gpu->memory_type, format_bandwidth(gpu->memory_bandwidth_bytes_per_s),
                       gpu->ecc ? "yes" : "no");
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
                           format_bandwidth(gpu->interconnect.bidirectional_bytes_per_s), gpu->interconnect.domain_size);
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

void validate_file(Context& context, const std::string& path) {
    const CheckedCatalogFile checked = check_catalog_file(context, path);
    // Warnings about the entries of this file only, not about the catalog it extends.
    std::size_t shown = 0;
    for (const CatalogWarning& warning : audit_catalog(checked.merged)) {
        const bool in_file = std::any_of(checked.ids.begin(), checked.ids.end(), [&](const std::string& id) {
            return equals_ignore_case(id, warning.id) ||
                   (checked.merged.find(id) != nullptr && checked.merged.find(id) == checked.merged.find(warning.id));
        });
        if (in_file) {
            context.err << fmt::format("{}: warning: {}: {}\n", path, warning.id, warning.message);
            ++shown;
        }
    }
    context.out << fmt::format("{}: valid catalog, {} GPUs, {} offers, {} warnings\n", path, checked.gpus, checked.offers,
                               shown);
}

}  // namespace

CheckedCatalogFile check_catalog_file(Context& context, const std::string& path) {
    CheckedCatalogFile checked{context.catalog(), {}, 0, 0};
    // Read once: the path may be standard input.
    const std::string text = read_input_file(path);
    merge_catalog_text(checked.merged, text, path);
    // The merge succeeded, so the file is a mapping whose `gpus` is a list of entries with ids.
    const YamlNode root = parse_yaml_text(text, path);
    for (const char* list : {"gpus", "purchase", "rental"}) {
        const YamlNode* entries = root.find(list);
        for (const YamlNode& entry : entries != nullptr ? entries->items : std::vector<YamlNode>{}) {
            if (const YamlNode* id = entry.find("id")) {
                checked.ids.push_back(id->scalar);
                ++(std::string_view(list) == "gpus" ? checked.gpus : checked.offers);
            }
        }
    }
    return checked;
}

void register_catalog(CLI::App& app, Context& context) {
    CLI::App* command = app.add_subcommand("catalog", "List, show or validate GPU catalog entries");
    command->require_subcommand(1);
    command->footer("\nExamples:\n  gpusel catalog list\n  gpusel catalog show H100-SXM5\n"
                    "  gpusel catalog validate my-prices.yaml\n");
    command->add_subcommand("list", "One line per GPU: memory, bandwidth, dense BF16/FP8 TFLOPS, power, prices")
        ->callback([&context] { print_list(context); });
    auto id = std::make_shared<std::string>();
    CLI::App* show = command->add_subcommand("show", "Every field of one entry, with its sources");
    show->add_option("id", *id, "Catalog id (case-insensitive)")->required()->type_name("ID");
    show->callback([&context, id] { print_show(context, *id); });
    auto file = std::make_shared<std::string>();
    CLI::App* validate = command->add_subcommand(
        "validate", "Check a catalog file: required fields, units, ranges, unique ids, sources; warn on stale prices");
    validate->add_option("file", *file, "Catalog YAML file")->required()->type_name("FILE");
    validate->callback([&context, file] { validate_file(context, *file); });
}

}  // namespace gpusel::cli
