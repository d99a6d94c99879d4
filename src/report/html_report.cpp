#include "report/html_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/text.hpp"
#include "base/units.hpp"
#include "report/plan_common.hpp"
#include "report/plan_mix_text.hpp"

namespace gpusel {

namespace {

constexpr std::size_t cost_chart_candidates = 3;  // more lines than this stop being readable

// Screen: a centred column. Print: A4 with 12 mm margins, each role on a new page, tables
// and figures kept whole. Fonts are generic families only (no downloads).
constexpr const char* style_sheet = R"css(
:root { color-scheme: light; }
* { box-sizing: border-box; }
body { font: 14px/1.45 "DejaVu Sans", "Liberation Sans", Arial, Helvetica, sans-serif; color: #1a1a1a;
       background: #ffffff; margin: 0 auto; max-width: 1080px; padding: 24px 28px 40px; }
h1 { font-size: 24px; margin: 0 0 2px; }
h2 { font-size: 19px; margin: 30px 0 8px; padding-bottom: 3px; border-bottom: 2px solid #1f2f5f; }
h3 { font-size: 15px; margin: 20px 0 6px; }
p { margin: 4px 0 8px; }
.lede { color: #333333; margin-bottom: 14px; }
.question { font-size: 15px; font-weight: 600; margin: 6px 0 2px; }
.class { color: #444444; margin: 0 0 10px; }
.decision { border-left: 4px solid #1f2f5f; background: #f4f6fa; padding: 6px 12px; margin: 10px 0 14px; }
.decision p { margin: 3px 0; }
.muted { color: #555555; }
.none { font-weight: 600; color: #8a1020; }
table { border-collapse: collapse; width: 100%; font-size: 12px; margin: 6px 0 14px; }
th, td { border-bottom: 1px solid #d6d6d6; padding: 4px 5px; text-align: left; vertical-align: top; }
td { overflow-wrap: anywhere; }
th { background: #eef1f6; font-weight: 600; border-bottom: 1.5px solid #9aa3b5; }
th.num { text-align: right; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
td.num.wrap { white-space: normal; }
tr.winner td { font-weight: 600; background: #f7f8fb; }
td.gpu { white-space: nowrap; }
td.gpu .muted { font-size: 0.92em; white-space: normal; }
tr.total td { font-weight: 600; border-top: 1.5px solid #9aa3b5; }
figure { margin: 16px 0 18px; break-inside: avoid; page-break-inside: avoid; }
figcaption { font-size: 12px; color: #444444; max-width: 720px; margin-top: 4px; }
svg.chart { display: block; max-width: 100%; height: auto; border: 1px solid #e4e4e4; }
ul { margin: 4px 0 10px; padding-left: 22px; }
.rejected td:first-child { width: 38%; }
ul.assumptions { columns: 2; column-gap: 32px; list-style: none; padding-left: 0; margin: 2px 0 10px;
                 font-size: 12px; }
ul.assumptions li { break-inside: avoid; padding: 1px 0; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 0.95em; }
p.group { font-weight: 600; margin: 10px 0 2px; }
footer { margin-top: 30px; font-size: 11px; color: #555555; border-top: 1px solid #d6d6d6; padding-top: 6px; }
@page { size: A4; margin: 12mm; }
@media print {
  body { max-width: none; padding: 0; font-size: 11px; }
  h2 { break-after: avoid; page-break-after: avoid; }
  h3 { break-after: avoid; page-break-after: avoid; }
  section.role { break-before: page; page-break-before: always; }
  table { font-size: 8.5px; }
  th, td { padding: 2px 3px; }
  td.num { white-space: normal; }
  td.gpu { white-space: normal; }
  thead { display: table-header-group; }
  tr { break-inside: avoid; page-break-inside: avoid; }
  svg.chart { border: none; }
  .decision { background: none; }
}
)css";

std::string html(std::string_view text) {
    return xml_escape(text);
}

// Words for a reader; the JSON names (to_string) are for machines.
std::string resource_words(Resource resource) {
    switch (resource) {
        case Resource::compute:
            return "compute";
        case Resource::memory_bandwidth:
            return "memory bandwidth";
        case Resource::memory_capacity:
            return "memory capacity";
        case Resource::interconnect:
            return "interconnect";
        case Resource::host_link:
            return "host link (PCIe)";
        case Resource::input_pipeline:
            return "input pipeline";
        case Resource::launch_overhead:
            return "kernel launch overhead";
    }
    return "";
}

// Inference candidates carry their replicas as data parallelism; those are named separately.
std::string layout_words(const Layout& layout, bool include_data_parallel = true) {
    std::vector<std::string> parts;
    if (layout.tensor_parallel > 1) {
        parts.push_back(fmt::format("TP{}", layout.tensor_parallel));
    }
    if (layout.pipeline_parallel > 1) {
        parts.push_back(fmt::format("PP{}", layout.pipeline_parallel));
    }
    if (include_data_parallel && layout.data_parallel > 1) {
        parts.push_back(fmt::format("DP{}", layout.data_parallel));
    }
    if (layout.expert_parallel > 1) {
        parts.push_back(fmt::format("EP{}", layout.expert_parallel));
    }
    if (layout.context_parallel > 1) {
        parts.push_back(fmt::format("CP{}", layout.context_parallel));
    }
    switch (layout.sharding) {
        case Sharding::zero1:
            parts.emplace_back("ZeRO-1");
            break;
        case Sharding::zero2:
            parts.emplace_back("ZeRO-2");
            break;
        case Sharding::zero3:
            parts.emplace_back("ZeRO-3/FSDP");
            break;
        case Sharding::none:
            break;
    }
    if (layout.offload == Offload::optimizer) {
        parts.emplace_back("optimizer offload");
    } else if (layout.offload == Offload::optimizer_and_params) {
        parts.emplace_back("optimizer+params offload");
    }
    return parts.empty() ? std::string("1 GPU") : fmt::format("{}", fmt::join(parts, " "));
}

std::string gpu_label(const Candidate& candidate) {
    return fmt::format("{} × {}", candidate.gpu, candidate.count);
}

std::string role_words(Role role) {
    return std::string(to_string(role));
}

std::string months_words(double months) {
    return fmt::format("{:g} month{}", months, months == 1 ? "" : "s");
}

std::string gb_pair(const MemoryEstimate& memory) {
    return fmt::format("{:.1f} / {:.0f} GB", memory.per_gpu.total_bytes / bytes_per_gb,
                       memory.capacity_bytes / bytes_per_gb);
}

std::string per_unit(const Money& money, const CostEstimate& cost) {
    if (cost.usd_per_unit <= 0 || cost.unit.empty()) {
        return "—";
    }
    return fmt::format("{} / {}", money.cents(cost.usd_per_unit), cost.unit);
}

std::string break_even_words(const CostEstimate& cost, double horizon_months) {
    if (!is_purchase(cost.acquisition)) {
        return "—";
    }
    if (!(cost.cloud_equivalent_usd > 0)) {
        return "no rental offer to compare";
    }
    const std::optional<double> month = buy_versus_rent_break_even_month(cost, horizon_months);
    if (!month) {
        return "never (renting costs less per month)";
    }
    if (*month > horizon_months) {
        return fmt::format("month {:.0f} (beyond)", *month);
    }
    return fmt::format("month {:.1f}", *month);
}

// "H100-SXM5 ×2 cloud on-demand: 9 % faster" already names the alternative; print it alone
// then, otherwise "alternative — why".
std::string alternative_words(const std::string& gpu, const std::string& alternative, const std::string& why) {
    if (why.empty()) {
        return alternative;
    }
    if (!gpu.empty() && why.rfind(gpu, 0) == 0) {
        return why;
    }
    return alternative.empty() ? why : alternative + " — " + why;
}

std::string training_speed(const TrainingPerf& perf) {
    if (perf.tokens_per_s > 0) {
        return format_rate(perf.tokens_per_s, "tok/s");
    }
    return format_rate(perf.samples_per_s, "samples/s");
}

std::string training_time(const TrainingPerf& perf) {
    if (perf.time_to_train_s) {
        return format_duration(*perf.time_to_train_s);
    }
    return "step " + format_duration(perf.step_time_s);
}

std::string optional_duration(const std::optional<double>& seconds) {
    return seconds ? format_duration(*seconds) : "over capacity";
}

std::string table_cell(std::string_view text, bool numeric = false) {
    return fmt::format("<td{}>{}</td>", numeric ? " class=\"num\"" : "", html(text));
}

std::string header_cell(std::string_view text, bool numeric = false) {
    return fmt::format("<th{}>{}</th>", numeric ? " class=\"num\"" : "", html(text));
}

std::string figure(const std::string& svg_text, std::string_view caption) {
    return fmt::format("<figure>\n{}<figcaption>{}</figcaption>\n</figure>\n", svg_text, html(caption));
}

// ---- sections ---------------------------------------------------------------------------

std::string assumptions_section(const PlanReport& report) {
    std::string out = "<section id=\"assumptions\">\n<h2>Assumptions</h2>\n";
    if (report.assumptions.empty()) {
        out += "<p class=\"muted\">Every input was set in the file; no defaults were applied.</p>\n</section>\n";
        return out;
    }
    out += "<p class=\"muted\">Defaults that shaped the answer; set them in the workload file to change them.</p>\n";
    // With several workloads the planner prefixes each field with "workload: "; group by it.
    std::vector<std::pair<std::string, std::vector<const Assumption*>>> groups;
    for (const Assumption& assumption : report.assumptions) {
        std::string group;
        for (const RolePlan& plan : report.roles) {
            if (report.roles.size() > 1 && assumption.field.rfind(plan.workload.name + ": ", 0) == 0) {
                group = plan.workload.name;
            }
        }
        if (groups.empty() || groups.back().first != group) {
            groups.push_back({group, {}});
        }
        groups.back().second.push_back(&assumption);
    }
    for (const auto& [group, assumptions] : groups) {
        if (!group.empty()) {
            out += fmt::format("<p class=\"group\">{}</p>\n", html(group));
        }
        out += "<ul class=\"assumptions\">\n";
        for (const Assumption* assumption : assumptions) {
            const std::string field = group.empty() ? assumption->field : assumption->field.substr(group.size() + 2);
            out += fmt::format("<li><code>{}</code> = {} <span class=\"muted\">({})</span></li>\n", html(field),
                               html(assumption->value), html(assumption->source));
        }
        out += "</ul>\n";
    }
    out += "</section>\n";
    return out;
}

std::string procurement_section(const PlanReport& report) {
    const Money money = plan_text::money_of(report);
    std::string out = "<section id=\"procurement\">\n<h2>Procurement</h2>\n";
    if (report.procurement.empty()) {
        out += "<p class=\"none\">Nothing to buy or rent: no role has a candidate that meets every constraint.</p>\n";
        out += "</section>\n";
        return out;
    }
    // One row per order line (the GPU units, then their hosts), one unit per column.
    out += "<table>\n<thead><tr>" + header_cell("role") + header_cell("GPU") + header_cell("line") +
           header_cell("units", true) + header_cell("GPUs", true) + header_cell("acquisition") +
           header_cell("unit price", true) + header_cell("per") + header_cell("price kind") +
           header_cell("capex", true) + header_cell("opex / month", true) + header_cell("rent", true) +
           header_cell("TCO", true) + header_cell("order") + header_cell("why") + header_cell("alternative") +
           "</tr></thead>\n<tbody>\n";
    for (const ProcurementLine& procured : report.procurement) {
        const std::string alternative_gpu = procured.alternative.substr(0, procured.alternative.find(' '));
        const std::string alternative =
            alternative_words(alternative_gpu, procured.alternative, procured.alternative_reason);
        for (const OrderLine& line : order_lines(procured)) {
            const bool units = line.item == OrderItem::gpus;
            std::string gpu_cell = "<td class=\"gpu\">" + html(procured.gpu);
            if (units && !procured.gpu_name.empty()) {
                gpu_cell += "<br><span class=\"muted\">" + html(procured.gpu_name) + "</span>";
            }
            if (units) {
                // The compute precision the estimate ran at, which deploy launches.
                gpu_cell += fmt::format("<br><span class=\"muted\">{} compute</span>", to_string(procured.precision));
            }
            gpu_cell += "</td>";
            const std::string estimated = line.price_kind == PriceKind::estimate ? "~" : "";
            const std::string price = !std::isfinite(line.unit_price_usd) ? "—"
                                      : line.price_per == "unit-hour"
                                          ? estimated + money.cents(line.unit_price_usd) + "/h"
                                          : estimated + money.whole(line.unit_price_usd);
            std::string tco_cell = money.whole(line.tco_usd);
            tco_cell += fmt::format(" over {:g} mo", line.horizon_months);
            out +=
                "<tr>" + table_cell(role_words(line.role)) + gpu_cell +
                table_cell(units ? std::string(to_string(line.item)) : "host: " + line.name) +
                table_cell(std::to_string(line.quantity_units), true) + table_cell(std::to_string(line.gpus), true) +
                table_cell(describe(line.acquisition)) + table_cell(price, true) +
                table_cell(std::string(line.price_per)) + table_cell(std::string(to_string(line.price_kind))) +
                table_cell(money.whole(line.capex_usd), true) + table_cell(money.whole(line.opex_usd_per_month), true) +
                table_cell(money.whole(line.rent_usd), true) + table_cell(tco_cell, true) +
                table_cell(units
                               ? plan_text::order_note(money, procured.offer, procured.quantity - procured.offer.units)
                               : "") +
                table_cell(units ? procured.reason : "") +
                table_cell(units ? (alternative.empty() ? "—" : alternative) : "") + "</tr>\n";
        }
    }
    const OrderLineTotals sums = order_line_totals(report.procurement);
    out += fmt::format(
        "<tr class=\"total\"><td colspan=\"4\">total</td>{}<td colspan=\"4\"></td>{}{}{}{}<td "
        "colspan=\"3\"></td></tr>\n",
        table_cell(std::to_string(sums.gpus), true), table_cell(money.whole(sums.capex_usd), true),
        table_cell(money.whole(sums.opex_usd_per_month), true), table_cell(money.whole(sums.rent_usd), true),
        table_cell(money.whole(sums.tco_usd), true));
    out += "</tbody>\n</table>\n";
    // Generated from the lines above: only the prices, estimates and resale they hold.
    out += "<ul class=\"muted footnotes\">\n";
    for (const std::string& note : plan_text::procurement_footnotes(report)) {
        out += "<li>" + html(note) + "</li>\n";
    }
    out += "</ul>\n";
    out += "</section>\n";
    return out;
}

std::string workload_summary(const RolePlan& plan) {
    const Workload& workload = plan.workload;
    std::string out;
    out += fmt::format("<p class=\"question\">{}</p>\n", html(plan.question));
    out += fmt::format("<p class=\"class\">class: {} — {}</p>\n", html(to_string(plan.workload_class)),
                       html(class_priorities(plan.workload_class)));
    std::vector<std::string> facts;
    facts.push_back(fmt::format("model {} ({} parameters)",
                                workload.model_label.empty() ? workload.model.name : workload.model_label,
                                format_count(workload.model.params)));
    facts.push_back(fmt::format("horizon {}", months_words(workload.deployment.horizon_months)));
    facts.push_back(fmt::format("utilisation {}", format_percent(workload.deployment.utilization)));
    facts.push_back(
        fmt::format("energy {:g} USD/kWh, PUE {:g}", workload.deployment.energy_usd_per_kwh, workload.deployment.pue));
    facts.push_back(fmt::format("{} of {} options evaluated meet every constraint", plan.feasible, plan.evaluated));
    out += fmt::format("<p class=\"muted\">{}</p>\n", html(fmt::format("{}", fmt::join(facts, " · "))));
    return out;
}

std::string decision_block(const RolePlan& plan) {
    if (!plan.winner) {
        return "<div class=\"decision\"><p class=\"none\">No candidate meets every constraint.</p></div>\n";
    }
    const Candidate& winner = *plan.winner;
    std::string out = "<div class=\"decision\">\n";
    if (!plan.ordered_in_place.empty()) {
        out += fmt::format("<p><strong>Ordered: {}</strong></p>\n", html(plan.ordered_in_place));
    }
    out += fmt::format("<p><strong>Choice: {}, {}</strong> — {}</p>\n", html(gpu_label(winner)),
                       html(describe(winner.acquisition)), html(winner.reason));
    if (plan.alternative) {
        const std::string named =
            fmt::format("{}, {}", gpu_label(*plan.alternative), describe(plan.alternative->acquisition));
        out += fmt::format("<p>Alternative: {}</p>\n",
                           html(alternative_words(plan.alternative->gpu, named, plan.alternative_why_not)));
    }
    if (const std::vector<std::string> mix = plan_text::mix_lines(plan); !mix.empty()) {
        out += fmt::format("<p>Mixed fleet: {}</p>\n", html(mix.front()));
        if (mix.size() > 1) {
            out += "<ul>\n";
            for (std::size_t line = 1; line < mix.size(); ++line) {
                out += fmt::format("<li>{}</li>\n", html(mix[line]));
            }
            out += "</ul>\n";
        }
    }
    out += "</div>\n";
    return out;
}

std::string ranked_table(const RolePlan& plan) {
    const Money money = plan_text::money_of(plan.workload.deployment.currency);
    const bool training = plan.workload.is_training();
    // Workloads that generate no tokens have no TPOT: their latency is the request's end to end.
    const bool generates = !training && plan.workload.task() == InferenceTask::generation;
    const bool diffusion = !training && plan.workload.task() == InferenceTask::diffusion;
    std::string out = "<table>\n<thead><tr>" + header_cell("#", true) + header_cell("GPU × count") +
                      header_cell("layout · precision") + header_cell("acquisition") +
                      header_cell("memory / GPU", true);
    if (training) {
        out += header_cell("speed", true) + header_cell("time", true);
    } else {
        out += header_cell("batch", true) + header_cell("output", true) +
               header_cell(generates ? fmt::format("P{:g} TTFT / TPOT", plan.workload.inference.slo.percentile)
                                     : fmt::format("P{:g} end to end", plan.workload.inference.slo.percentile),
                           true);
    }
    // The unit of work in the header when all candidates share it, so that cells stay short.
    std::string unit = plan.ranked.empty() ? std::string() : plan.ranked.front().cost.unit;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.cost.unit != unit) {
            unit.clear();
        }
    }
    const double horizon = plan.workload.deployment.horizon_months;
    out += header_cell("bottleneck") + header_cell(fmt::format("TCO {:g} mo", horizon), true) +
           header_cell(unit.empty() ? std::string("cost per unit") : money.symbol() + " per " + unit, true) +
           header_cell("buying pays off", true) + "</tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
        const Candidate& candidate = plan.ranked[i];
        out += i == 0 ? "<tr class=\"winner\">" : "<tr>";
        std::string layout = layout_words(candidate.layout, training);
        if (!training && candidate.replicas > 1) {
            layout = layout == "1 GPU" ? fmt::format("{} replicas", candidate.replicas)
                                       : fmt::format("{} replicas of {}", candidate.replicas, layout);
        }
        layout += fmt::format(" · {}", to_string(candidate.precision));
        if (candidate.precision_fallback) {
            layout += " (fallback)";
        }
        out += table_cell(std::to_string(i + 1), true) + "<td class=\"gpu\">" + html(gpu_label(candidate)) + "</td>" +
               table_cell(layout) + table_cell(describe(candidate.acquisition)) +
               table_cell(gb_pair(candidate.memory), true);
        if (training) {
            if (candidate.perf.training) {
                out += table_cell(training_speed(*candidate.perf.training), true) +
                       table_cell(training_time(*candidate.perf.training), true);
            } else {
                out += table_cell("—", true) + table_cell("—", true);
            }
        } else if (candidate.perf.inference) {
            const InferencePerf& perf = *candidate.perf.inference;
            out += table_cell(std::to_string(perf.batch > 0 ? perf.batch : candidate.batch), true) +
                   table_cell(perf.output_tokens_per_s > 0 ? format_rate(perf.output_tokens_per_s, "tok/s")
                              : diffusion                  ? format_rate(perf.images_per_s, "images/s")
                                                           : format_rate(perf.requests_per_s, "req/s"),
                              true) +
                   table_cell(generates ? fmt::format("{} / {}", optional_duration(perf.p99_ttft_s),
                                                      perf.p99_tpot_s ? format_duration(*perf.p99_tpot_s) : "—")
                                        : optional_duration(perf.p99_e2e_s),
                              true);
        } else {
            out += table_cell("—", true) + table_cell("—", true) + table_cell("—", true);
        }
        out += table_cell(fmt::format("{} {}", resource_words(candidate.perf.bottleneck.resource),
                                      format_percent(candidate.perf.bottleneck.share))) +
               table_cell(money.whole(candidate.cost.tco_usd), true) +
               table_cell(unit.empty() ? per_unit(money, candidate.cost) : money.cents(candidate.cost.usd_per_unit),
                          true) +
               "<td class=\"num wrap\">" + html(break_even_words(candidate.cost, horizon)) + "</td></tr>\n";
    }
    out += "</tbody>\n</table>\n";
    out +=
        "<p class=\"muted\">Buying pays off: the month from which a bought candidate has cost less than renting "
        "the same GPU-hours on demand (where its lines cross in the cost chart below); beyond: after the "
        "horizon.</p>\n";
    return out;
}

// Log scale when the values span more than a factor of 20 (all positive): otherwise the
// small ones crowd into one corner.
svg::Scale scale_for(const std::vector<double>& values) {
    double low = 0;
    double high = 0;
    bool first = true;
    for (const double value : values) {
        if (!std::isfinite(value)) {
            continue;
        }
        if (value <= 0) {
            return svg::Scale::linear;
        }
        low = first ? value : std::min(low, value);
        high = first ? value : std::max(high, value);
        first = false;
    }
    return !first && high > 20 * low ? svg::Scale::log : svg::Scale::linear;
}

std::string chart_id(std::size_t role_index, std::string_view chart) {
    return fmt::format("role{}-{}", role_index + 1, chart);
}

// The band of a ranked candidate (plan/uncertainty.hpp), when the robustness analysis sampled it.
const EstimateBand* band_of(const RolePlan& plan, const Candidate& candidate) {
    const std::vector<EstimateBand>& bands = plan.uncertainty.bands;
    for (std::size_t i = 0; i < plan.ranked.size() && i < bands.size(); ++i) {
        if (&plan.ranked[i] == &candidate) {
            return bands[i].tco_high_usd > 0 ? &bands[i] : nullptr;
        }
    }
    return nullptr;
}

// What moves the pick's score: one bar per input over a plausible span (plan/robustness.hpp).
std::string tornado_chart(const RolePlan& plan, std::size_t role_index) {
    const RoleUncertainty& uncertainty = plan.uncertainty;
    if (!uncertainty.computed || uncertainty.tornado.empty()) {
        return {};
    }
    svg::TornadoSpec spec;
    spec.id_prefix = chart_id(role_index, "tornado");
    const Money money_format = plan_text::money_of(plan.workload.deployment.currency);
    const bool money = uncertainty.score_unit.rfind("USD", 0) == 0;
    // A money score is drawn in the report's currency (the unit's "USD" replaced by its code).
    const double scale = money ? money_format.per_usd : 1;
    spec.tick_prefix = money ? money_format.symbol() : "";
    spec.value_label =
        fmt::format("Score of the pick ({})",
                    money ? money_format.code + uncertainty.score_unit.substr(3) : uncertainty.score_unit);
    spec.base = uncertainty.score * scale;
    for (const Swing& swing : uncertainty.tornado) {
        svg::TornadoBar bar;
        bar.label =
            fmt::format("{} {}–{}", swing.label, plan_text::input_value_text(money_format, swing.unit, swing.low_value),
                        plan_text::input_value_text(money_format, swing.unit, swing.high_value));
        bar.low_output = swing.low_score * scale;
        bar.high_output = swing.high_score * scale;
        bar.note = swing.flips_low && swing.flips_high ? "pick changes at both ends"
                   : swing.flips_low                   ? "pick changes at the low end"
                   : swing.flips_high                  ? "pick changes at the high end"
                                                       : "";
        spec.bars.push_back(std::move(bar));
    }
    spec.title = "What moves the pick's score";
    spec.description =
        "For each input the user controls or guesses, the pick's score with that input at the low "
        "and at the high end of a plausible span, the others held; largest swing first.";
    return figure(svg::render_tornado(spec),
                  "Each bar spans the pick's score as one input moves over the span in its label, the others "
                  "held; the vertical line is the score at the inputs as given. A note says where another "
                  "candidate would be picked instead.");
}

std::string training_scatter(const RolePlan& plan, std::size_t role_index) {
    const Money money = plan_text::money_of(plan.workload.deployment.currency);
    svg::ScatterSpec spec;
    spec.id_prefix = chart_id(role_index, "scatter");
    spec.minimise_x = true;
    spec.minimise_y = true;
    bool have_time = true;
    double longest_s = 0;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.perf.training) {
            have_time = have_time && candidate.perf.training->time_to_train_s.has_value();
            longest_s = std::max(longest_s, candidate.perf.training->time_to_train_s.value_or(0.0));
        }
    }
    // Hours up to two days, days beyond: the unit a reader plans with.
    const bool in_days = longest_s > 2 * 86400;
    const double seconds_per_unit = !have_time ? 1.0 : in_days ? 86400.0 : 3600.0;
    std::map<Acquisition, std::size_t> series_of;
    std::vector<double> xs;
    std::vector<double> ys;
    for (const Candidate& candidate : plan.ranked) {
        if (!candidate.perf.training) {
            continue;
        }
        const TrainingPerf& perf = *candidate.perf.training;
        const double x = (have_time ? perf.time_to_train_s.value_or(0.0) : perf.step_time_s) / seconds_per_unit;
        if (series_of.count(candidate.acquisition) == 0) {
            const std::size_t index = spec.series.size();
            series_of[candidate.acquisition] = index;
            spec.series.emplace_back(describe(candidate.acquisition));
        }
        if (const EstimateBand* band = band_of(plan, candidate)) {
            spec.error_bars.push_back({spec.points.size(), x * band->time_low_factor, x * band->time_high_factor,
                                       band->tco_low_usd, band->tco_high_usd});
        }
        spec.points.push_back(
            {x, money.of(candidate.cost.tco_usd), gpu_label(candidate), series_of[candidate.acquisition]});
        xs.push_back(x);
        ys.push_back(money.of(candidate.cost.tco_usd));
    }
    // The deadline is drawn when it is near the candidates; far beyond them it would squeeze
    // every point into the left edge, so the caption states it instead.
    const double deadline_s = plan.workload.training.deadline_seconds;
    std::string deadline_note;
    if (have_time && deadline_s > 0) {
        if (deadline_s <= 1.5 * longest_s) {
            spec.x_references.push_back({deadline_s / seconds_per_unit, "deadline " + format_duration(deadline_s)});
        } else {
            deadline_note = fmt::format(
                " The {} deadline lies beyond the right edge: every candidate meets it with "
                "room to spare.",
                format_duration(deadline_s));
        }
    }
    // Scatter axes span the data, not zero: the candidates often differ by tens of percent,
    // which a zero-based axis would squeeze into a corner. The tick labels state the scale.
    spec.x_axis = {have_time ? (in_days ? "Time to train (days)" : "Time to train (hours)") : "Step time (s)",
                   scale_for(xs), "", false};
    spec.y_axis = {fmt::format("TCO over {} ({})", months_words(plan.workload.deployment.horizon_months), money.code),
                   scale_for(ys), money.symbol(), false};
    spec.title = have_time ? "Time to train vs total cost" : "Step time vs total cost";
    spec.description =
        "Each candidate's time and total cost of ownership; lower-left is better. The dashed step "
        "line is the Pareto front.";
    return figure(svg::render_scatter(spec),
                  "Lower-left is better. Ringed points are on the Pareto front: no other candidate is both faster "
                  "and cheaper. Marker shape and shade show how the GPUs are acquired." +
                      deadline_note);
}

std::string inference_scatter(const RolePlan& plan, std::size_t role_index) {
    const Workload& workload = plan.workload;
    const SloSpec& slo = workload.inference.slo;
    bool all_tpot = true;
    bool all_tokens = true;
    std::set<int> batches;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.perf.inference) {
            all_tpot = all_tpot && candidate.perf.inference->p99_tpot_s.value_or(0.0) > 0;
            all_tokens = all_tokens && candidate.perf.inference->output_tokens_per_s > 0;
            batches.insert(candidate.perf.inference->batch > 0 ? candidate.perf.inference->batch : candidate.batch);
        }
    }
    // The latency the SLO binds, in the order TPOT, TTFT, end-to-end.
    enum class Latency { tpot, ttft, e2e };
    Latency latency = Latency::e2e;
    if (all_tpot && (slo.tpot_seconds > 0 || (slo.ttft_seconds <= 0 && slo.e2e_seconds <= 0))) {
        latency = Latency::tpot;
    } else if (slo.ttft_seconds > 0) {
        latency = Latency::ttft;
    }
    const auto latency_of = [&](const InferencePerf& perf) {
        // Absent when the offered load exceeds the candidate's capacity: not drawn.
        const std::optional<double>& value = latency == Latency::tpot   ? perf.p99_tpot_s
                                             : latency == Latency::ttft ? perf.p99_ttft_s
                                                                        : perf.p99_e2e_s;
        return value.value_or(std::numeric_limits<double>::quiet_NaN());
    };
    const double slo_s = latency == Latency::tpot   ? slo.tpot_seconds
                         : latency == Latency::ttft ? slo.ttft_seconds
                                                    : slo.e2e_seconds;
    double longest_s = slo_s;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.perf.inference) {
            longest_s = std::max(longest_s, latency_of(*candidate.perf.inference));
        }
    }
    const bool in_seconds = longest_s > 5;
    const double scale = in_seconds ? 1.0 : 1000.0;
    const std::string percentile = fmt::format("P{:g}", slo.percentile);
    const std::string latency_name = latency == Latency::tpot   ? "time per output token"
                                     : latency == Latency::ttft ? "time to first token"
                                                                : "end-to-end latency";
    const std::string latency_short = latency == Latency::tpot ? "TPOT" : latency == Latency::ttft ? "TTFT" : "e2e";

    svg::ScatterSpec spec;
    spec.id_prefix = chart_id(role_index, "scatter");
    spec.minimise_x = true;
    spec.minimise_y = false;
    std::map<Acquisition, std::size_t> series_of;
    std::vector<double> xs;
    std::vector<double> ys;
    for (const Candidate& candidate : plan.ranked) {
        if (!candidate.perf.inference) {
            continue;
        }
        const InferencePerf& perf = *candidate.perf.inference;
        const double x = latency_of(perf) * scale;
        const double y = all_tokens ? perf.output_tokens_per_s : perf.requests_per_s;
        if (series_of.try_emplace(candidate.acquisition, spec.series.size()).second) {
            spec.series.emplace_back(describe(candidate.acquisition));
        }
        std::string label = gpu_label(candidate);
        if (batches.size() > 1) {
            label += fmt::format(" · batch {}", perf.batch > 0 ? perf.batch : candidate.batch);
        }
        if (const EstimateBand* band = band_of(plan, candidate)) {
            // Latency scales as 1 / speed and throughput as speed.
            spec.error_bars.push_back({spec.points.size(), x * band->time_low_factor, x * band->time_high_factor,
                                       y / band->time_high_factor, y / band->time_low_factor});
        }
        spec.points.push_back({x, y, label, series_of[candidate.acquisition]});
        xs.push_back(x);
        ys.push_back(y);
    }
    if (slo_s > 0) {
        spec.x_references.push_back(
            {slo_s * scale, fmt::format("SLO: {} {} ≤ {}", percentile, latency_short, format_duration(slo_s))});
    }
    const double load = all_tokens ? workload.inference.requests_per_s * workload.inference.output_tokens
                                   : workload.inference.requests_per_s;
    if (load > 0) {
        spec.y_references.push_back(
            {load, fmt::format("required load: {}", format_rate(load, all_tokens ? "tok/s" : "req/s"))});
    }
    if (slo_s > 0) {
        xs.push_back(slo_s * scale);
    }
    if (load > 0) {
        ys.push_back(load);
    }
    // Scatter axes span the data (and the SLO and load lines), not zero; see training_scatter.
    spec.x_axis = {fmt::format("{} {} ({})", percentile, latency_name, in_seconds ? "s" : "ms"), scale_for(xs), "",
                   false};
    spec.y_axis = {all_tokens ? "Output tokens/s (whole candidate)" : "Requests/s (whole candidate)", scale_for(ys), "",
                   false};
    spec.title = fmt::format("{} latency vs throughput", percentile);
    spec.description =
        "Each candidate's tail latency and throughput capacity; upper-left is better. The dashed "
        "step line is the Pareto front.";
    std::string caption =
        "Upper-left is better: lower latency, more throughput. Ringed points are on the Pareto "
        "front. ";
    if (batches.size() == 1) {
        caption += fmt::format("All candidates at batch {} per replica.", *batches.begin());
    } else {
        caption += "Each candidate at the batch the planner chose for it (in its label).";
    }
    return figure(svg::render_scatter(spec), caption);
}

std::string memory_chart(const RolePlan& plan, std::size_t role_index) {
    svg::StackedBarSpec spec;
    spec.id_prefix = chart_id(role_index, "memory");
    spec.title = "Memory per GPU by component";
    spec.description =
        "For each candidate, the bytes one GPU holds at peak, stacked by component, against the "
        "GPU's capacity.";
    spec.value_label = "GB per GPU (1 GB = 10⁹ bytes)";
    spec.categories = {"weights", "gradients", "optimizer", "activations", "KV cache", "overhead"};
    spec.capacity_label = "capacity";
    for (const Candidate& candidate : plan.ranked) {
        const MemoryBreakdown& memory = candidate.memory.per_gpu;
        svg::StackedBar bar;
        bar.label = gpu_label(candidate);
        bar.values = {memory.weights_bytes / bytes_per_gb,   memory.gradients_bytes / bytes_per_gb,
                      memory.optimizer_bytes / bytes_per_gb, memory.activations_bytes / bytes_per_gb,
                      memory.kv_cache_bytes / bytes_per_gb,  memory.overhead_bytes / bytes_per_gb};
        if (candidate.memory.capacity_bytes > 0) {
            bar.capacity = candidate.memory.capacity_bytes / bytes_per_gb;
        }
        bar.note = gb_pair(candidate.memory);
        spec.bars.push_back(bar);
    }
    // Components no candidate uses stay out of the legend (inference has no gradients, training no KV cache).
    std::vector<std::size_t> keep;
    for (std::size_t c = 0; c < spec.categories.size(); ++c) {
        const bool used = std::any_of(spec.bars.begin(), spec.bars.end(),
                                      [&](const svg::StackedBar& bar) { return bar.values[c] > 0; });
        if (used) {
            keep.push_back(c);
        }
    }
    if (!keep.empty()) {
        std::vector<std::string> categories;
        for (const std::size_t c : keep) {
            categories.push_back(spec.categories[c]);
        }
        for (svg::StackedBar& bar : spec.bars) {
            std::vector<double> values;
            for (const std::size_t c : keep) {
                values.push_back(bar.values[c]);
            }
            bar.values = std::move(values);
        }
        spec.categories = std::move(categories);
        spec.category_fills = keep;
    }
    const double headroom = plan.workload.constraints.memory_headroom_fraction;
    return figure(svg::render_stacked_bars(spec),
                  fmt::format("What one GPU of each candidate holds at peak, as nvidia-smi would show it; the line "
                              "is the GPU's capacity. A candidate fits when its total stays below capacity minus the "
                              "{} headroom the constraints ask for.",
                              format_percent(headroom)));
}

std::string end_value(const std::vector<svg::Point>& series, const Money& money) {
    return series.empty() ? std::string() : svg::format_tick(series.back().y, money.symbol());
}

// A series of USD amounts in the report's currency.
std::vector<svg::Point> in_money(std::vector<svg::Point> series, const Money& money) {
    for (svg::Point& point : series) {
        point.y = money.of(point.y);
    }
    return series;
}

std::string cost_chart(const RolePlan& plan, std::size_t role_index) {
    const double horizon = plan.workload.deployment.horizon_months;
    svg::LineChartSpec spec;
    spec.id_prefix = chart_id(role_index, "cost");
    spec.title = fmt::format("Cumulative cost over {}", months_words(horizon));
    spec.description = "Cumulative spending by month for the top candidates, bought and rented.";
    // Month ticks by quarter, half-year or year, so that the horizon ends on a tick.
    const double month_step = horizon <= 6 ? 1 : horizon <= 18 ? 3 : horizon <= 48 ? 6 : 12;
    spec.x_axis = {"Month", svg::Scale::linear, "", true, month_step};
    const Money money = plan_text::money_of(plan.workload.deployment.currency);
    spec.y_axis = {fmt::format("Cumulative cost ({})", money.code), svg::Scale::linear, money.symbol(), true};
    std::vector<std::string> crossings;
    bool any_bought = false;
    bool any_resale_counted = false;
    const std::size_t shown = std::min(plan.ranked.size(), cost_chart_candidates);
    for (std::size_t i = 0; i < shown; ++i) {
        const Candidate& candidate = plan.ranked[i];
        const std::string name = fmt::format("#{} {}", i + 1, gpu_label(candidate));
        const bool bought = is_purchase(candidate.acquisition);
        any_bought = any_bought || bought;
        const std::vector<svg::Point> own = in_money(cumulative_cost_by_month(candidate.cost, horizon), money);
        spec.series.push_back({fmt::format("{}, {}", name, describe(candidate.acquisition)), own, i,
                               bought ? svg::Dash::solid : svg::Dash::dashed, end_value(own, money)});
        if (!bought) {
            continue;
        }
        const std::vector<svg::Point> rented = in_money(on_demand_equivalent_by_month(candidate.cost, horizon), money);
        any_resale_counted = any_resale_counted || candidate.cost.resale_counted;
        if (rented.empty()) {
            crossings.push_back(fmt::format("#{} {}: no rental offer of this GPU to compare buying with.", i + 1,
                                            gpu_label(candidate)));
            continue;
        }
        spec.series.push_back(
            {fmt::format("{} rented on demand instead", name), rented, i, svg::Dash::dotted, end_value(rented, money)});
        const std::optional<double> month = buy_versus_rent_break_even_month(candidate.cost, horizon);
        if (month && *month <= horizon) {
            const double y = candidate.cost.capex_usd + candidate.cost.monthly_opex_usd * *month;
            spec.markers.push_back({*month, money.of(y), fmt::format("#{} break-even: month {:.1f}", i + 1, *month)});
            crossings.push_back(
                fmt::format("#{} {} pays for itself against renting the same GPUs on demand after "
                            "{:.1f} months.",
                            i + 1, gpu_label(candidate), *month));
        } else {
            crossings.push_back(fmt::format("#{} {}: buying does not break even against renting within {}.", i + 1,
                                            gpu_label(candidate), months_words(horizon)));
        }
    }
    std::string caption =
        "Solid: bought (purchase at month 0, then running costs); dashed: rented; dotted: the same GPU-hours of a "
        "bought candidate rented on demand. Monthly costs are the cost model's averages over the horizon. ";
    if (any_bought) {
        caption += any_resale_counted ? "The expected resale at the end, subtracted in the TCO, is not drawn. "
                                      : "The expected resale at the end is not drawn, nor subtracted in the TCO. ";
    }
    for (const std::string& crossing : crossings) {
        caption += crossing + " ";
    }
    if (!any_bought) {
        caption += "No bought candidate ranks in the top " + std::to_string(shown) + ".";
    }
    while (!caption.empty() && caption.back() == ' ') {
        caption.pop_back();
    }
    return figure(svg::render_line_chart(spec), caption);
}

// Projects with phases: the shared fleet's GPUs owned and kept busy, month by month.
std::string shared_fleet_section(const PlanReport& report) {
    if (!report.shared_fleet) {
        return {};
    }
    const SharedFleet& fleet = *report.shared_fleet;
    const Money money = plan_text::money_of(report);
    std::string out = "<section id=\"shared-fleet\">\n<h2>Shared fleet over the phases</h2>\n";
    out += "<p>" +
           html(fmt::format("{} × {} bought ({}): {} over {:g} months, against {} for each phase on its own pick. {}.",
                            fleet.owned_gpus, fleet.gpu_name, fleet.offer, money.whole(fleet.shared_tco_usd),
                            fleet.span_months, money.whole(fleet.separate_tco_usd),
                            fleet.chosen ? "Chosen: " + fleet.why : fleet.why)) +
           "</p>\n";
    svg::LineChartSpec spec;
    spec.id_prefix = "shared-fleet";
    spec.title = "Owned GPUs and GPUs the phases keep busy, by month";
    spec.description = "The shared fleet's GPUs owned and busy in each month of the project.";
    const double month_step = fleet.span_months <= 6 ? 1 : fleet.span_months <= 18 ? 3 : 6;
    spec.x_axis = {"Month", svg::Scale::linear, "", false, month_step};
    spec.y_axis = {"GPUs", svg::Scale::linear, "", true};
    std::vector<svg::Point> owned;
    std::vector<svg::Point> busy;
    for (const SharedFleetMonth& row : fleet.months) {
        owned.push_back({static_cast<double>(row.month), static_cast<double>(row.owned_gpus)});
        busy.push_back({static_cast<double>(row.month), row.busy_gpus});
    }
    spec.series.push_back({"owned", owned, 0, svg::Dash::solid, fmt::format("{} owned", fleet.owned_gpus)});
    spec.series.push_back({"busy (GPUs × utilisation)", busy, 1, svg::Dash::dashed, ""});
    std::string caption = "Solid: GPUs owned; dashed: GPUs the running phases keep busy (their GPUs × utilisation). ";
    for (const SharedFleetPhase& part : fleet.phases) {
        caption += fmt::format("Months {}–{}: {} on {} GPUs, {:.0f} % busy. ", part.first_month, part.last_month,
                               part.workload, part.gpus, part.utilisation * 100);
    }
    for (const std::string& line : fleet.idle_advice) {
        caption += line + ". ";
    }
    while (!caption.empty() && caption.back() == ' ') {
        caption.pop_back();
    }
    out += figure(svg::render_line_chart(spec), caption);
    out += "</section>\n";
    return out;
}

std::string bottleneck_table(const RolePlan& plan) {
    std::string out = "<table>\n<thead><tr>" + header_cell("#", true) + header_cell("GPU × count") +
                      header_cell("binding resource") + header_cell("share of time", true) +
                      header_cell("GPU util.", true) + header_cell("evidence") + header_cell("fix that pays most") +
                      "</tr></thead>\n<tbody>\n";
    for (std::size_t i = 0; i < plan.ranked.size(); ++i) {
        const Candidate& candidate = plan.ranked[i];
        const Bottleneck& bottleneck = candidate.perf.bottleneck;
        out += "<tr>" + table_cell(std::to_string(i + 1), true) + "<td class=\"gpu\">" + html(gpu_label(candidate)) +
               "</td>" + table_cell(resource_words(bottleneck.resource)) +
               table_cell(bottleneck.phase == BottleneckPhase::none
                              ? format_percent(bottleneck.share)
                              : fmt::format("{} of {}", format_percent(bottleneck.share), to_string(bottleneck.phase)),
                          true) +
               table_cell(format_percent(bottleneck.gpu_utilization), true) +
               table_cell(bottleneck.detail.empty() ? "—" : bottleneck.detail) +
               table_cell(bottleneck.remedy.empty() ? "—" : bottleneck.remedy) + "</tr>\n";
    }
    out += "</tbody>\n</table>\n";
    return out;
}

std::string rejected_table(const RolePlan& plan) {
    if (plan.rejected.empty()) {
        return "<p class=\"muted\">No catalog entry was rejected.</p>\n";
    }
    // Entries with the same reason share a row; the most specific reasons (fewest GPUs) first.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const Rejection& rejection : plan.rejected) {
        const std::string gpu =
            rejection.count > 0 ? fmt::format("{} × {}", rejection.gpu, rejection.count) : rejection.gpu;
        auto group = std::find_if(groups.begin(), groups.end(),
                                  [&](const auto& entry) { return entry.first == rejection.why_not; });
        if (group == groups.end()) {
            groups.push_back({rejection.why_not, {gpu}});
        } else {
            group->second.push_back(gpu);
        }
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [](const auto& a, const auto& b) { return a.second.size() < b.second.size(); });
    std::string out = "<table class=\"rejected\">\n<thead><tr>" + header_cell("why not") + header_cell("GPU") +
                      "</tr></thead>\n<tbody>\n";
    for (const auto& [why, gpus] : groups) {
        out += "<tr>" + table_cell(why) + table_cell(fmt::format("{}", fmt::join(gpus, ", "))) + "</tr>\n";
    }
    out += "</tbody>\n</table>\n";
    return out;
}

// A value held over each hour: two points per hour, so the line steps where the fleet does.
std::vector<svg::Point> hourly_steps(const std::vector<FleetHour>& hours, double (*value)(const FleetHour&)) {
    std::vector<svg::Point> points;
    for (const FleetHour& hour : hours) {
        points.push_back({static_cast<double>(hour.hour), value(hour)});
        points.push_back({static_cast<double>(hour.hour + 1), value(hour)});
    }
    return points;
}

// RolePlan::fleet: the hourly capacity (owned, owned + rented) against the load in the
// horizon's last month, and the owned base's utilisation month by month.
std::string fleet_section(const RolePlan& plan, std::size_t role_index) {
    if (!plan.fleet || plan.fleet->hours.empty()) {
        return "";
    }
    const FleetPlan& fleet = *plan.fleet;
    std::string out = "<h3>Fleet over the day</h3>\n<ul>\n";
    for (const std::string& line : plan_text::fleet_lines(plan)) {
        out += "<li>" + html(line) + "</li>\n";
    }
    out += "</ul>\n";
    const double owned_capacity =
        fleet.chosen.owned_replicas > 0 && !fleet.capacity_requests_per_s.empty()
            ? fleet.capacity_requests_per_s[static_cast<std::size_t>(
                  std::min<int>(fleet.chosen.owned_replicas, static_cast<int>(fleet.capacity_requests_per_s.size())) -
                  1)]
            : 0.0;
    svg::LineChartSpec hourly;
    hourly.id_prefix = chart_id(role_index, "fleet-hours");
    hourly.title = fmt::format("Capacity against load, hour by hour (month {})", fleet.months.size());
    hourly.description = "Requests per second the load brings and the fleet carries at the SLO, each hour.";
    hourly.x_axis = {fleet.hours.size() > 24 ? "Hour of the week" : "Hour of the day", svg::Scale::linear, "", true,
                     fleet.hours.size() > 24 ? 24.0 : 6.0};
    hourly.y_axis = {"Requests per second", svg::Scale::linear, "", true};
    hourly.series.push_back({"load", hourly_steps(fleet.hours, [](const FleetHour& h) { return h.requests_per_s; }), 0,
                             svg::Dash::solid, ""});
    hourly.series.push_back({fmt::format("capacity: {} owned + rented", fleet.chosen.owned_replicas),
                             hourly_steps(fleet.hours, [](const FleetHour& h) { return h.capacity_requests_per_s; }), 1,
                             svg::Dash::dashed, ""});
    std::vector<svg::Point> owned_line;
    for (const FleetHour& hour : fleet.hours) {
        owned_line.push_back({static_cast<double>(hour.hour), owned_capacity});
        owned_line.push_back({static_cast<double>(hour.hour + 1), owned_capacity});
    }
    hourly.series.push_back(
        {fmt::format("owned base ({} replicas)", fleet.chosen.owned_replicas), owned_line, 2, svg::Dash::dotted, ""});
    out += figure(svg::render_line_chart(hourly),
                  "Capacity is what the replicas running carry at the SLO at the confidence level; above the owned "
                  "base, replicas are rented on demand for the hour.");
    svg::LineChartSpec monthly;
    monthly.id_prefix = chart_id(role_index, "fleet-months");
    monthly.title = "Owned GPUs' utilisation by month";
    monthly.description = "The load the owned base carries over its capacity, month by month.";
    const double months = static_cast<double>(fleet.months.size());
    monthly.x_axis = {"Month", svg::Scale::linear, "", false,
                      months <= 6    ? 1.0
                      : months <= 18 ? 3.0
                      : months <= 48 ? 6.0
                                     : 12.0};
    monthly.y_axis = {"Utilisation (%)", svg::Scale::linear, "", true};
    std::vector<svg::Point> utilisation;
    for (const FleetMonth& month : fleet.months) {
        utilisation.push_back({static_cast<double>(month.month), month.owned_utilization * 100});
    }
    monthly.series.push_back({"owned base", utilisation, 0, svg::Dash::solid,
                              utilisation.empty() ? "" : fmt::format("{:.0f} %", utilisation.back().y)});
    out += figure(svg::render_line_chart(monthly),
                  "Growth raises the owned base's utilisation; the rented replicas are billed only for the hours "
                  "they run.");
    return out;
}

// A role with deployment.disaggregated: the prefill/decode split against the co-located pick,
// a table of the planner's figures and its verdict.
std::string disaggregated_section(const RolePlan& plan) {
    if (!plan.disaggregated) {
        return {};
    }
    const Money money = plan_text::money_of(plan.workload.deployment.currency);
    std::string out = "<h3>Disaggregated serving</h3>\n";
    if (const std::vector<plan_text::DisaggregatedRow> rows = plan_text::disaggregated_rows(money, plan);
        !rows.empty()) {
        out += "<table class=\"disaggregated\">\n<thead><tr>" + header_cell("phase") + header_cell("GPU") +
               header_cell("count") + header_cell("GPUs", true) + header_cell("TP/EP") + header_cell("latency") +
               header_cell(money.symbol() + "/1M output tokens", true) + "</tr></thead>\n<tbody>\n";
        for (const plan_text::DisaggregatedRow& row : rows) {
            out += "<tr>" + table_cell(row.phase) + table_cell(row.gpu) + table_cell(row.count) +
                   table_cell(fmt::format("{}", row.gpus), true) + table_cell(row.layout) + table_cell(row.latency) +
                   table_cell(row.usd_per_million_tokens, true) + "</tr>\n";
        }
        out += "</tbody>\n</table>\n";
    }
    out += "<ul>\n";
    for (const std::string& line : plan_text::disaggregated_lines(money, *plan.disaggregated)) {
        out += "<li>" + html(line) + "</li>\n";
    }
    out += "</ul>\n";
    return out;
}

std::string role_section(const RolePlan& plan, std::size_t role_index) {
    std::string out = fmt::format("<section class=\"role\" id=\"role-{}\">\n<h2>{}: {}</h2>\n", role_index + 1,
                                  html(role_words(plan.role)), html(plan.workload.name));
    out += workload_summary(plan);
    out += decision_block(plan);
    out += disaggregated_section(plan);
    if (!plan.ranked.empty()) {
        out += "<h3>Ranked candidates</h3>\n" + ranked_table(plan);
        out += plan.workload.is_training() ? training_scatter(plan, role_index) : inference_scatter(plan, role_index);
        out += memory_chart(plan, role_index);
        out += cost_chart(plan, role_index);
        out += fleet_section(plan, role_index);
        out += "<h3>Bottleneck per candidate</h3>\n" + bottleneck_table(plan);
    }
    if (!plan.advice.empty()) {
        out += "<h3>Advice</h3>\n<ul>\n";
        for (const std::string& line : plan.advice) {
            out += "<li>" + html(line) + "</li>\n";
        }
        out += "</ul>\n";
    }
    if (const std::vector<std::string> robustness = plan_text::robustness_lines(plan, 5); !robustness.empty()) {
        out += "<h3>Robustness</h3>\n<ul>\n";
        for (const std::string& line : robustness) {
            out += "<li>" + html(line) + "</li>\n";
        }
        out += "</ul>\n" + tornado_chart(plan, role_index);
    }
    out += fmt::format("<h3>Rejected ({})</h3>\n", plan.rejected.size()) + rejected_table(plan);
    out += "</section>\n";
    return out;
}

std::vector<svg::Point> monthly_series(double start_usd, double per_month_usd, double horizon_months) {
    std::vector<svg::Point> points;
    if (!(horizon_months > 0) || !std::isfinite(horizon_months)) {
        return points;
    }
    const int whole = static_cast<int>(std::floor(horizon_months));
    for (int month = 0; month <= whole; ++month) {
        points.push_back({static_cast<double>(month), start_usd + per_month_usd * month});
    }
    if (horizon_months > whole) {
        points.push_back({horizon_months, start_usd + per_month_usd * horizon_months});
    }
    return points;
}

}  // namespace

std::vector<svg::Point> cumulative_cost_by_month(const CostEstimate& cost, double horizon_months) {
    return monthly_series(is_purchase(cost.acquisition) ? cost.capex_usd : 0.0, cost.monthly_opex_usd, horizon_months);
}

std::vector<svg::Point> on_demand_equivalent_by_month(const CostEstimate& cost, double horizon_months) {
    if (!is_purchase(cost.acquisition) || !(cost.cloud_equivalent_usd > 0) || !(horizon_months > 0)) {
        return {};
    }
    return monthly_series(0.0, cost.cloud_equivalent_usd / horizon_months, horizon_months);
}

std::optional<double> buy_versus_rent_break_even_month(const CostEstimate& cost, double horizon_months) {
    if (!is_purchase(cost.acquisition) || !(cost.cloud_equivalent_usd > 0) || !(horizon_months > 0)) {
        return std::nullopt;
    }
    return break_even_month(cost.capex_usd, cost.monthly_opex_usd, cost.cloud_equivalent_usd / horizon_months);
}

std::string render_plan_html(const PlanReport& report) {
    std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
    out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
    out += "<meta name=\"generator\" content=\"gpusel " GPUSEL_VERSION "\">\n";
    out += fmt::format("<title>{} — gpusel report</title>\n", html(report.project));
    out += fmt::format("<style>{}</style>\n</head>\n<body>\n", style_sheet);
    out += fmt::format("<header>\n<h1>{}</h1>\n", html(report.project));
    out += fmt::format("<p class=\"lede\">{} role{} · horizon up to {} · objective: {}</p>\n</header>\n",
                       report.roles.size(), report.roles.size() == 1 ? "" : "s", months_words(report.horizon_months),
                       html(report.objective));
    if (const Money money = plan_text::money_of(report); !money.is_usd()) {
        out += fmt::format("<p class=\"muted\">Money in {}; the catalogs' USD prices converted.</p>\n",
                           html(money.rate_note()));
    }
    out += procurement_section(report);
    out += shared_fleet_section(report);
    out += assumptions_section(report);
    for (std::size_t i = 0; i < report.roles.size(); ++i) {
        out += role_section(report.roles[i], i);
    }
    out += "<footer>Generated by gpusel " GPUSEL_VERSION
           ". Every figure is an estimate from the workload file, the "
           "GPU catalog and the efficiency factors, not a measurement; the assumptions above list the defaults "
           "used.</footer>\n";
    out += "</body>\n</html>\n";
    return out;
}

}  // namespace gpusel
