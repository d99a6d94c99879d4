// `gpusel plan --format markdown`: a pull-request comment (GitHub-flavoured Markdown).

#include <ostream>

#include <fmt/format.h>

#include "base/format.hpp"
#include "report/plan_common.hpp"
#include "report/plan_mix_text.hpp"
#include "report/render.hpp"

namespace gpusel {

namespace {

using namespace plan_text;

// Inline text: backslash-escapes every character GFM could read as markup. '$' too: GitHub
// renders $…$ as math, which would swallow two dollar amounts on one line. '<' and '&' become
// entities so that no HTML passes through. Line breaks would end a table row: spaces instead.
std::string md(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 8);
    for (const char c : text) {
        switch (c) {
            case '\\':
            case '`':
            case '*':
            case '_':
            case '[':
            case ']':
            case '|':
            case '$':
            case '~':
            case '#':
                out.push_back('\\');
                out.push_back(c);
                break;
            case '<':
                out += "&lt;";
                break;
            case '>':
                out += "&gt;";
                break;
            case '&':
                out += "&amp;";
                break;
            case '\r':
            case '\n':
            case '\t':
                out.push_back(' ');
                break;
            default:
                out.push_back(c);
        }
    }
    return out;
}

void table_row(std::ostream& out, const std::vector<std::string>& cells) {
    out << "|";
    for (const std::string& cell : cells) {
        out << " " << cell << " |";
    }
    out << "\n";
}

// `aligns`: 'l' or 'r' per column.
void table_header(std::ostream& out, const std::vector<std::string>& headers, std::string_view aligns) {
    table_row(out, headers);
    out << "|";
    for (const char align : aligns) {
        out << (align == 'r' ? " --: |" : " --- |");
    }
    out << "\n";
}

void write_procurement(std::ostream& out, const PlanReport& report) {
    out << "### Procurement\n\n";
    if (report.procurement.empty()) {
        out << "Nothing to buy or rent: no role has a feasible option.\n\n";
        return;
    }
    const std::optional<double> horizon = common_horizon(report);
    const Money money = money_of(report);
    const std::string tco_header = horizon ? fmt::format("TCO ({} mo)", months_text(*horizon)) : "TCO";
    // One row per order line (the GPU units, then their hosts), one unit per column.
    table_header(out,
                 {"Role", "GPU", "Line", "Units", "GPUs", "Acquisition", "Unit price", "Per", "Price kind", "Capex",
                  "Opex / month", "Rent", tco_header, "Order", "Why", "Alternative"},
                 "lllrrllllrrrrlll");
    for (const ProcurementLine& procured : report.procurement) {
        for (const OrderLine& line : order_lines(procured)) {
            const bool units = line.item == OrderItem::gpus;
            std::string tco = money.whole(line.tco_usd);
            if (!horizon) {
                tco += fmt::format(" ({} mo)", months_text(line.horizon_months));
            }
            table_row(out,
                      {md(to_string(line.role)), "**" + md(procured.gpu) + "**",
                       md(units ? std::string(to_string(line.item)) : "host: " + line.name),
                       fmt::format("{}", line.quantity_units), fmt::format("{}", line.gpus),
                       md(acquisition_words(line.acquisition)),
                       md(unit_price_cell(money, line.acquisition, line.unit_price_usd,
                                          line.price_kind == PriceKind::estimate)),
                       md(line.price_per), md(to_string(line.price_kind)), md(money.whole(line.capex_usd)),
                       md(money.whole(line.opex_usd_per_month)), md(money.whole(line.rent_usd)), md(tco),
                       units ? md(order_note(money, procured.offer, procured.quantity - procured.offer.units)) : "",
                       units ? md(procured.reason) : "",
                       units ? md(alternative_text(procured.alternative, procured.alternative_reason,
                                                   procured.alternative.substr(0, procured.alternative.find(' '))))
                             : ""});
        }
    }
    const OrderLineTotals sums = order_line_totals(report.procurement);
    const double capex = sums.capex_usd;
    const double opex = sums.opex_usd_per_month;
    const double rent = sums.rent_usd;
    const double tco = sums.tco_usd;
    const int gpus = sums.gpus;
    table_row(out, {"**total**", "", "", "", fmt::format("{}", gpus), "", "", "", "", md(money.whole(capex)),
                    md(money.whole(opex)), md(money.whole(rent)), md(money.whole(tco)), "", "", ""});
    out << "\n";
    for (const std::string& note : procurement_footnotes(report)) {
        out << "- " << md(note) << "\n";
    }
    const std::string tco_label =
        horizon ? fmt::format("{}-month TCO", months_text(*horizon)) : std::string("TCO (each role over its horizon)");
    std::vector<std::string> totals = {"capex " + money.whole(capex)};
    if (opex != 0) {
        totals.push_back("opex " + money.whole(opex) + " per month");
    }
    if (rent != 0) {
        totals.push_back("rent " + money.whole(rent));
    }
    totals.push_back(tco_label + " " + money.whole(tco));
    out << "\n**Totals:** " << md(fmt::format("{}", fmt::join(totals, " · "))) << "\n\n";
}

std::string capitalized(std::string text) {
    if (!text.empty() && text.front() >= 'a' && text.front() <= 'z') {
        text.front() = static_cast<char>(text.front() - 'a' + 'A');
    }
    return text;
}

void write_candidates(std::ostream& out, const RolePlan& plan) {
    const SpeedMetric speed = speed_metric(plan);
    const TimeMetric time = time_metric(plan);
    const std::string unit = plan.ranked.front().cost.unit;
    const Money money = money_of(plan.workload.deployment.currency);
    std::vector<std::string> headers = {
        "#",
        "GPU",
        "n",
        "Mode",
        "Mem/GPU",
        md(capitalized(speed.header)),
        md(capitalized(time.header)),
        "Bottleneck",
        fmt::format("TCO ({} mo)", md(months_text(plan.workload.deployment.horizon_months)))};
    // No unit of work (a development box), no cost per unit.
    if (!unit.empty()) {
        headers.push_back(md(money.symbol() + "/" + unit));
    }
    table_header(out, headers, std::string_view("rlrlrrrlrr").substr(0, headers.size()));
    for (std::size_t rank = 0; rank < plan.ranked.size(); ++rank) {
        const Candidate& candidate = plan.ranked[rank];
        std::string gpu = md(candidate.gpu) + (candidate.precision_fallback ? "\\*" : "");
        if (rank == 0) {
            gpu.insert(0, "**").append("**");
        }
        std::vector<std::string> cells = {fmt::format("{}", rank + 1),
                                          gpu,
                                          fmt::format("{}", candidate.count),
                                          md(acquisition_words(candidate.acquisition)),
                                          md(memory_cell(candidate.memory)),
                                          md(speed_cell(speed, candidate)),
                                          md(time_cell(time, candidate)),
                                          md(bottleneck_cell(candidate.perf.bottleneck)),
                                          md(money.whole(candidate.cost.tco_usd))};
        if (!unit.empty()) {
            cells.push_back(md(usd_per_unit_cell(money, candidate.cost.usd_per_unit)));
        }
        table_row(out, cells);
    }
    out << "\n";
    bool any_fallback = false;
    for (const Candidate& candidate : plan.ranked) {
        if (candidate.precision_fallback) {
            out << md(fmt::format("* {} has no native {}: it runs {}.", candidate.gpu,
                                  to_string(plan.workload.precision), to_string(candidate.precision)))
                << "  \n";
            any_fallback = true;
        }
    }
    if (any_fallback) {
        out << "\n";
    }
}

// A role with deployment.disaggregated: the split against the co-located pick as a table, then
// the text renderer's lines (the KV transfer, the verdict).
void write_disaggregated(std::ostream& out, const RolePlan& plan) {
    if (!plan.disaggregated) {
        return;
    }
    const Money money = money_of(plan.workload.deployment.currency);
    out << "#### Disaggregated serving\n\n";
    if (const std::vector<DisaggregatedRow> rows = disaggregated_rows(money, plan); !rows.empty()) {
        table_header(out,
                     {"Phase", "GPU", "Count", "GPUs", "TP/EP", "Latency", md(money.symbol() + "/1M output tokens")},
                     "lllrllr");
        for (const DisaggregatedRow& row : rows) {
            const bool whole = row.phase == "split" || row.phase == "co-located";
            table_row(out,
                      {whole ? "**" + md(row.phase) + "**" : md(row.phase), md(row.gpu), md(row.count),
                       fmt::format("{}", row.gpus), md(row.layout), md(row.latency), md(row.usd_per_million_tokens)});
        }
        out << "\n";
    }
    for (const std::string& line : disaggregated_lines(money, *plan.disaggregated)) {
        out << "- " << md(line) << "\n";
    }
    out << "\n";
}

void write_role(std::ostream& out, const RolePlan& plan) {
    out << "### " << md(fmt::format("{}: {}", to_string(plan.role), plan.workload.name)) << "\n\n";
    if (!plan.question.empty()) {
        out << "> " << md(plan.question) << "\n\n";
    }
    out << "**Class:** "
        << md(fmt::format("{} — {}", to_string(plan.workload_class), class_priorities(plan.workload_class))) << "  \n";
    if (!plan.ordered_in_place.empty()) {
        out << "**Ordered:** " << md(plan.ordered_in_place) << "  \n";
    }
    if (plan.winner) {
        out << "**Pick:** " << md(pick_text(plan, *plan.winner)) << "  \n";
    } else {
        out << "**No feasible option:** "
            << md(fmt::format("{} evaluated, none meets every constraint.", plan.evaluated)) << "  \n";
    }
    if (plan.alternative) {
        out << "**Alternative:** "
            << md(alternative_text(candidate_summary(*plan.alternative), plan.alternative_why_not,
                                   plan.alternative->gpu))
            << "  \n";
    }
    if (plan.calibration_delta) {
        out << "**Calibration:** "
            << md(calibration_delta_text(money_of(plan.workload.deployment.currency), *plan.calibration_delta))
            << "  \n";
    }
    if (plan.mix) {
        const std::vector<std::string> lines = mix_lines(plan);
        out << "**Mixed fleet:** " << md(lines.front()) << "  \n";
        for (std::size_t line = 1; line < lines.size(); ++line) {
            out << "· " << md(lines[line]) << "  \n";
        }
    }
    out << md(search_summary(plan) + ".") << "\n\n";
    if (!plan.ranked.empty()) {
        write_candidates(out, plan);
    }
    write_disaggregated(out, plan);
    for (const std::string& advice : plan.advice) {
        out << "- " << md(advice) << "\n";
    }
    if (!plan.advice.empty()) {
        out << "\n";
    }
    if (const std::vector<std::string> fleet = fleet_lines(plan); !fleet.empty()) {
        out << "#### Fleet over the day\n\n";
        for (const std::string& line : fleet) {
            out << "- " << md(line) << "\n";
        }
        out << "\n";
    }
    const std::vector<std::string> robustness = robustness_lines(plan, 5);
    if (!robustness.empty()) {
        out << "#### Robustness\n\n";
        for (const std::string& line : robustness) {
            out << "- " << md(line) << "\n";
        }
        out << "\n";
    }
    if (!plan.rejected.empty()) {
        out << fmt::format("<details><summary>Rejected ({})</summary>\n\n", plan.rejected.size());
        table_header(out, {"GPU", "n", "Why not"}, "lrl");
        for (const Rejection& rejection : plan.rejected) {
            table_row(out, {md(rejection.gpu), rejection.count > 0 ? fmt::format("{}", rejection.count) : "",
                            md(rejection.why_not)});
        }
        out << "\n</details>\n\n";
    }
}

void write_assumptions(std::ostream& out, const PlanReport& report) {
    if (report.assumptions.empty()) {
        out << "No defaults applied: every setting was given in the file.\n";
        return;
    }
    out << fmt::format("<details><summary>Assumptions ({} defaults applied)</summary>\n\n", report.assumptions.size());
    table_header(out, {"Field", "Value", "Source"}, "lll");
    for (const Assumption& assumption : report.assumptions) {
        table_row(out, {md(assumption.field), md(assumption.value), md(assumption.source)});
    }
    out << "\n</details>\n";
}

// Projects with phases: the shared fleet in one paragraph and its idle months as a list.
void write_shared_fleet(std::ostream& out, const PlanReport& report) {
    if (!report.shared_fleet) {
        return;
    }
    const SharedFleet& fleet = *report.shared_fleet;
    const Money money = money_of(report);
    out << "### Shared fleet over the phases\n\n";
    out << md(fmt::format("{} × {} bought ({}): {} over {:g} months, against {} for each phase on its own pick — {}",
                          fleet.owned_gpus, fleet.gpu_name, fleet.offer, money.whole(fleet.shared_tco_usd),
                          fleet.span_months, money.whole(fleet.separate_tco_usd),
                          fleet.chosen ? "chosen: " + fleet.why : fleet.why))
        << "\n\n";
    for (const SharedFleetPhase& part : fleet.phases) {
        out << "- "
            << md(fmt::format("months {}–{}: {} on {} GPUs, {:.0f} % busy (alone: {}, {})", part.first_month,
                              part.last_month, part.workload, part.gpus, part.utilisation * 100, part.separate_pick,
                              money.whole(part.separate_tco_usd)))
            << "\n";
    }
    for (const std::string& line : fleet.idle_advice) {
        out << "- " << md(line) << "\n";
    }
    out << "\n";
}

}  // namespace

void render_plan_markdown(const PlanReport& report, std::ostream& out) {
    out << "## gpusel plan: " << md(report.project.empty() ? "plan" : report.project) << "\n\n";
    std::string summary = role_count_text(report.roles.size());
    if (report.horizon_months > 0) {
        summary += fmt::format(" · horizon {} months", months_text(report.horizon_months));
    }
    if (!report.objective.empty()) {
        summary += " · objective: " + report.objective;
    }
    if (const Money money = money_of(report); !money.is_usd()) {
        summary += " · money in " + money.rate_note();
    }
    out << md(summary) << "\n\n";
    write_procurement(out, report);
    write_shared_fleet(out, report);
    for (const RolePlan& plan : report.roles) {
        write_role(out, plan);
    }
    write_assumptions(out, report);
}

}  // namespace gpusel
