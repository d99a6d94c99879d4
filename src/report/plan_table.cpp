// The terminal view of a plan: a decision memo read top to bottom (docs/spec/plan-output.md).

#include <algorithm>
#include <ostream>

#include <fmt/format.h>

#include "base/format.hpp"
#include "report/plan_common.hpp"
#include "report/plan_mix_text.hpp"
#include "report/render.hpp"
#include "report/text_table.hpp"

namespace gpusel {

namespace {

using namespace plan_text;

constexpr std::size_t minimum_width = 40;
constexpr int role_indent = 3;
constexpr int procurement_indent = 2;

class Painter {
public:
    explicit Painter(bool color) : m_color(color) {}
    std::string bold(const std::string& text) const { return wrap("1", text); }
    std::string dim(const std::string& text) const { return wrap("2", text); }
    std::string green(const std::string& text) const { return wrap("1;32", text); }
    std::string yellow(const std::string& text) const { return wrap("33", text); }
    std::string red(const std::string& text) const { return wrap("1;31", text); }
    std::string cyan(const std::string& text) const { return wrap("1;36", text); }
    std::string start(const char* code) const { return m_color ? fmt::format("\x1b[{}m", code) : ""; }
    std::string reset() const { return m_color ? "\x1b[0m" : ""; }

private:
    std::string wrap(const char* code, const std::string& text) const {
        return m_color && !text.empty() ? start(code) + text + reset() : text;
    }
    bool m_color;
};

// A paragraph: `first` before the first line, `rest` (spaces) before the others.
void write_wrapped(std::ostream& out, const std::string& first, std::size_t rest, const std::string& text,
                   std::size_t width) {
    const std::size_t first_width = display_width(first);
    const std::size_t measure = width - std::min(width, std::max(first_width, rest));
    const std::vector<std::string> lines = wrap_text(text, std::max<std::size_t>(measure, 10));
    if (lines.empty()) {
        out << first << "\n";
        return;
    }
    for (std::size_t i = 0; i < lines.size(); ++i) {
        out << (i == 0 ? first : std::string(rest, ' ')) << lines[i] << "\n";
    }
}

// Items joined by " · ", each kept whole on a line where it fits (wrap_items).
void write_items(std::ostream& out, const std::string& first, std::size_t rest, const std::vector<std::string>& items,
                 std::size_t width) {
    const std::size_t measure = width - std::min(width, std::max(display_width(first), rest));
    const std::vector<std::string> lines = wrap_items(items, std::max<std::size_t>(measure, 10));
    for (std::size_t i = 0; i < lines.size(); ++i) {
        out << (i == 0 ? first : std::string(rest, ' ')) << lines[i] << "\n";
    }
}

// The first table whose rows fit the width on one line each, else the first whose rows need at
// most two; otherwise `blocks` in the stacked layout: a row wrapped over three lines reads
// worse than a block.
std::string render_first_fitting(const std::vector<TextTable>& tables, const TextTable& blocks, int indent,
                                 std::size_t width) {
    for (const std::size_t max_row_lines : {std::size_t{1}, std::size_t{2}}) {
        for (const TextTable& table : tables) {
            if (table.fits_as_columns(indent, width, max_row_lines)) {
                return table.render_fitted(indent, width);
            }
        }
    }
    return blocks.render_stacked(indent, width);
}

void write_title(std::ostream& out, const PlanReport& report, const Painter& paint, std::size_t width) {
    const std::string horizon =
        report.horizon_months > 0 ? fmt::format(", horizon {} months", months_text(report.horizon_months)) : "";
    const std::string title = fmt::format("{} — {}{}, objective: {}", report.project.empty() ? "plan" : report.project,
                                          role_count_text(report.roles.size()), horizon,
                                          report.objective.empty() ? "not stated" : report.objective);
    for (const std::string& line : wrap_text(title, width)) {
        out << paint.bold(line) << "\n";
    }
    if (const Money money = money_of(report); !money.is_usd()) {
        write_wrapped(out, "money in ", 2, money.rate_note() + "; the catalogs' USD prices converted", width);
    }
}

void write_assumptions(std::ostream& out, const PlanReport& report, const Painter& paint, std::size_t width) {
    if (report.assumptions.empty()) {
        write_wrapped(out, paint.bold("Assumptions:") + " ", 2, "none (every setting was given in the file)", width);
        return;
    }
    write_wrapped(out, paint.bold("Assumptions") + " ", 2, "(defaults applied; set them in the file to change)", width);
    // The planner prefixes each field with "workload: " when a project has several; group by it
    // so that each workload's defaults read as one line.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const Assumption& assumption : report.assumptions) {
        std::string group;
        std::string field = assumption.field;
        if (const std::size_t colon = field.find(": "); colon != std::string::npos) {
            group = field.substr(0, colon);
            field = field.substr(colon + 2);
        }
        std::string item = field + " " + assumption.value;
        if (!assumption.source.empty() && assumption.source != "default") {
            item += " (" + assumption.source + ")";
        }
        auto found =
            std::find_if(groups.begin(), groups.end(), [&](const auto& entry) { return entry.first == group; });
        if (found == groups.end()) {
            groups.push_back({group, {}});
            found = groups.end() - 1;
        }
        found->second.push_back(std::move(item));
    }
    // A default that every workload of a project shares is said once.
    std::vector<std::string> shared;
    if (groups.size() > 1) {
        for (const std::string& item : groups.front().second) {
            const bool everywhere = std::all_of(groups.begin(), groups.end(), [&](const auto& entry) {
                return std::find(entry.second.begin(), entry.second.end(), item) != entry.second.end();
            });
            if (everywhere) {
                shared.push_back(item);
            }
        }
    }
    if (!shared.empty()) {
        write_items(out, "  all roles: ", 4, shared, width);
    }
    for (const auto& [group, items] : groups) {
        std::vector<std::string> own;
        for (const std::string& item : items) {
            if (std::find(shared.begin(), shared.end(), item) == shared.end()) {
                own.push_back(item);
            }
        }
        if (!own.empty()) {
            write_items(out, group.empty() ? "  " : "  " + group + ": ", group.empty() ? 2 : 4, own, width);
        }
    }
}

// "1M tokens" → "1M tok", "1k requests" → "1k req", "1k images" → "1k img": the header is as wide as the column.
std::string unit_abbreviation(std::string unit) {
    for (const auto& [word, short_word] :
         {std::pair<std::string, std::string>{"tokens", "tok"}, {"requests", "req"}, {"images", "img"}}) {
        if (const std::size_t at = unit.find(word); at != std::string::npos) {
            unit.replace(at, word.size(), short_word);
        }
    }
    return unit;
}

TextTable candidate_table(const RolePlan& plan, const Painter& paint, bool separate_count) {
    const Money money = money_of(plan.workload.deployment.currency);
    const SpeedMetric speed = speed_metric(plan);
    const TimeMetric time = time_metric(plan);
    const std::string unit = plan.ranked.front().cost.unit;
    TextTable table;
    table.add_column("#", TextTable::Align::right);
    table.add_column("GPU");
    if (separate_count) {
        table.add_column("n", TextTable::Align::right);
    }
    table.add_column("mode");
    table.add_column("mem/GPU", TextTable::Align::right);
    table.add_column(speed.header, TextTable::Align::right);
    table.add_column(time.header, TextTable::Align::right);
    table.add_column("bottleneck");
    table.add_column(fmt::format("TCO {} mo", months_text(plan.workload.deployment.horizon_months)),
                     TextTable::Align::right);
    // Without a unit of work (a development box serves people, not a dataset) there is no cost
    // per unit to show.
    if (!unit.empty()) {
        table.add_column(money.symbol() + "/" + unit_abbreviation(unit), TextTable::Align::right);
    }
    const std::size_t first_wrappable = separate_count ? 3 : 2;
    // What wraps first reads best wrapped: "memory bw" / "62 %", then "cloud" / "od", the unit
    // under a number; GPU ids, broken at a hyphen, last.
    table.set_wrap(first_wrappable + 4, 7, 0);  // bottleneck
    table.set_wrap(first_wrappable, 5, 1);      // mode
    table.set_wrap(first_wrappable + 1, 7, 2);  // "41.2/80 GB" → "41.2/80" "GB"
    table.set_wrap(first_wrappable + 2, 6, 2);  // "11.8k tok/s" → "11.8k" "tok/s"
    table.set_wrap(1, 8, 3);                    // GPU
    table.set_key_columns(2);
    table.set_header_style(paint.start("2"), paint.reset());
    for (std::size_t rank = 0; rank < plan.ranked.size(); ++rank) {
        const Candidate& candidate = plan.ranked[rank];
        std::string gpu = candidate.gpu + (candidate.precision_fallback ? "*" : "");
        if (!separate_count) {
            gpu = fmt::format("{}× {}", candidate.count, gpu);
        }
        std::string number = fmt::format("{}", rank + 1);
        if (rank == 0) {
            number = paint.green(number);
            gpu = paint.green(gpu);
        }
        std::vector<std::string> cells = {number, gpu};
        if (separate_count) {
            cells.push_back(fmt::format("{}", candidate.count));
        }
        cells.emplace_back(acquisition_short(candidate.acquisition));
        cells.push_back(memory_cell(candidate.memory));
        cells.push_back(speed_cell(speed, candidate));
        cells.push_back(time_cell(time, candidate));
        cells.push_back(bottleneck_cell(candidate.perf.bottleneck));
        cells.push_back(money.whole(candidate.cost.tco_usd));
        if (!unit.empty()) {
            cells.push_back(usd_per_unit_cell(money, candidate.cost.usd_per_unit));
        }
        table.add_row(std::move(cells));
    }
    return table;
}

void write_rejected(std::ostream& out, const RolePlan& plan, const Painter& paint, const PlanTableOptions& options,
                    std::size_t width) {
    if (plan.rejected.empty()) {
        return;
    }
    // The sentence names the count it was measured at; the terminal does not repeat it.
    const auto entry = [](const Rejection& rejection) {
        return rejection.why_not.empty() ? rejection.gpu : rejection.gpu + " — " + rejection.why_not;
    };
    const std::string label = std::string(role_indent, ' ') + paint.dim("rejected:") + " ";
    if (options.show_rejected) {
        out << std::string(role_indent, ' ') << paint.dim(fmt::format("rejected ({}):", plan.rejected.size())) << "\n";
        for (const Rejection& rejection : plan.rejected) {
            write_wrapped(out, std::string(role_indent + 2, ' '), role_indent + 4, entry(rejection), width);
        }
        return;
    }
    std::vector<std::string> items;
    const std::size_t shown = std::min(options.rejected_preview, plan.rejected.size());
    for (std::size_t i = 0; i < shown; ++i) {
        items.push_back(entry(plan.rejected[i]));
    }
    if (shown < plan.rejected.size()) {
        items.push_back(fmt::format("({} more: --show-rejected)", plan.rejected.size() - shown));
    }
    write_items(out, label, role_indent + 10, items, width);
}

// The pick and the order that buys it; where another order stands in the pick's place (a split,
// a mixed fleet, an owned base and rented peak), the pick's own order is what it replaces.
void write_pick(std::ostream& out, const RolePlan& plan, const Candidate& winner, const Painter& paint,
                const Money& money, std::size_t width) {
    const std::string indent(role_indent, ' ');
    write_wrapped(out, indent + paint.green("pick:") + " ", role_indent + 6, pick_text(plan, winner), width);
    if (const std::string order = order_note(money, winner.cost.offer, winner.cost.spare_units); !order.empty()) {
        if (plan.ordered_in_place.empty()) {
            write_wrapped(out, indent + paint.green("order:") + " ", role_indent + 7, order, width);
        } else {
            write_wrapped(out, indent + paint.dim("instead of:") + " ", role_indent + 12, order, width);
        }
    }
}

void write_role(std::ostream& out, const RolePlan& plan, const Painter& paint, const PlanTableOptions& options,
                std::size_t width) {
    const std::string indent(role_indent, ' ');
    const Money money = money_of(plan.workload.deployment.currency);
    const std::string heading = paint.cyan(fmt::format("── {}: {}", to_string(plan.role), plan.workload.name));
    write_wrapped(out, "", role_indent, plan.question.empty() ? heading : heading + " ─ " + plan.question, width);
    write_wrapped(out, indent + "class: ", role_indent + 7,
                  fmt::format("{} — {}", to_string(plan.workload_class), class_priorities(plan.workload_class)), width);
    if (plan.ranked.empty()) {
        write_wrapped(out, indent + paint.red("no feasible option") + ": ", role_indent + 2,
                      fmt::format("{} evaluated, none meets every constraint", plan.evaluated), width);
    } else {
        write_wrapped(out, indent, role_indent, fmt::format("{}; top {}:", search_summary(plan), plan.ranked.size()),
                      width);
        std::vector<TextTable> layouts;
        layouts.push_back(candidate_table(plan, paint, true));
        layouts.push_back(candidate_table(plan, paint, false));
        out << render_first_fitting(layouts, layouts.back(), role_indent, width);
        std::vector<std::string> fallbacks;
        for (const Candidate& candidate : plan.ranked) {
            const std::string note = fmt::format("{} runs {}", candidate.gpu, to_string(candidate.precision));
            if (candidate.precision_fallback &&
                std::find(fallbacks.begin(), fallbacks.end(), note) == fallbacks.end()) {
                fallbacks.push_back(note);
            }
        }
        if (!fallbacks.empty()) {
            std::string text = fmt::format("* no native {}: ", to_string(plan.workload.precision));
            for (std::size_t i = 0; i < fallbacks.size(); ++i) {
                text += (i == 0 ? "" : " · ") + fallbacks[i];
            }
            write_wrapped(out, indent, role_indent + 2, text, width);
        }
        if (plan.pareto.size() > 1) {
            std::string ranks;
            for (const std::size_t index : plan.pareto) {
                ranks += fmt::format("{}#{}", ranks.empty() ? "" : ", ", index + 1);
            }
            write_wrapped(
                out, indent + paint.dim("Pareto front") + " ", role_indent + 2,
                fmt::format("({}): {}", plan.workload.is_training() ? "time vs TCO" : "latency vs TCO", ranks), width);
        }
    }
    write_rejected(out, plan, paint, options, width);
    if (!plan.ordered_in_place.empty()) {
        write_wrapped(out, indent + paint.green("ordered:") + " ", role_indent + 9, plan.ordered_in_place, width);
    }
    if (plan.winner) {
        write_pick(out, plan, *plan.winner, paint, money, width);
    }
    if (plan.alternative) {
        write_wrapped(
            out, indent + paint.bold("alternative:") + " ", role_indent + 13,
            alternative_text(candidate_summary(*plan.alternative), plan.alternative_why_not, plan.alternative->gpu),
            width);
    }
    if (plan.disaggregated) {
        out << indent << paint.bold("Disaggregated serving:") << "\n";
        for (const std::string& line : disaggregated_lines(money, *plan.disaggregated)) {
            write_wrapped(out, indent + "  · ", role_indent + 4, line, width);
        }
    }
    if (plan.calibration_delta) {
        write_wrapped(out, indent + paint.bold("calibration:") + " ", role_indent + 13,
                      calibration_delta_text(money, *plan.calibration_delta), width);
    }
    if (plan.mix) {
        const std::vector<std::string> lines = mix_lines(plan);
        write_wrapped(out, indent + paint.bold("mixed fleet:") + " ", role_indent + 13, lines.front(), width);
        for (std::size_t line = 1; line < lines.size(); ++line) {
            write_wrapped(out, indent + "  · ", role_indent + 4, lines[line], width);
        }
    }
    for (const std::string& advice : plan.advice) {
        write_wrapped(out, indent + paint.yellow("→") + " ", role_indent + 2, advice, width);
    }
    if (const std::vector<std::string> fleet = fleet_lines(plan); !fleet.empty()) {
        out << indent << paint.bold("fleet over the day:") << "\n";
        for (const std::string& line : fleet) {
            write_wrapped(out, indent + "  · ", role_indent + 4, line, width);
        }
    }
    const std::vector<std::string> robustness = robustness_lines(plan, 3);
    if (!robustness.empty()) {
        out << indent << paint.bold("robustness:") << "\n";
        for (const std::string& line : robustness) {
            write_wrapped(out, indent + "  · ", role_indent + 4, line, width);
        }
    }
}

TextTable procurement_table(const PlanReport& report, const Painter& paint, bool with_opex, bool short_acquisition) {
    const std::optional<double> horizon = common_horizon(report);
    const Money money = money_of(report);
    TextTable table;
    table.add_column("role");
    table.add_column("GPU");
    table.add_column("qty", TextTable::Align::right);
    table.add_column("acquisition");
    table.add_column("unit", TextTable::Align::right);
    table.add_column("total", TextTable::Align::right);
    if (with_opex) {
        table.add_column("opex/mo", TextTable::Align::right);
    }
    table.add_column(horizon ? fmt::format("TCO {} mo", months_text(*horizon)) : "TCO", TextTable::Align::right);
    table.set_wrap(3, 5, 0);  // "cloud on-demand" → "cloud" "on-demand"
    table.set_wrap(1, 8, 1);  // GPU
    table.set_key_columns(2);
    table.set_header_style(paint.start("2"), paint.reset());
    for (const ProcurementLine& line : report.procurement) {
        std::vector<std::string> cells = {
            std::string(to_string(line.role)),
            paint.bold(line.gpu),
            fmt::format("{}", line.quantity),
            std::string(short_acquisition ? acquisition_short(line.acquisition) : acquisition_words(line.acquisition)),
            unit_price_cell(money, line.acquisition, line.unit_price_usd, line.offer.price_kind == PriceKind::estimate),
            purchase_total_cell(money, line.acquisition, line.total_usd)};
        if (with_opex) {
            cells.push_back(money.whole(line.monthly_opex_usd));
        }
        std::string tco = money.whole(line.tco_usd);
        if (!horizon) {
            tco += fmt::format(" ({} mo)", months_text(line.horizon_months));
        }
        cells.push_back(std::move(tco));
        table.add_row(std::move(cells));
        if (const std::string order = order_note(money, line.offer, line.quantity - line.offer.units); !order.empty()) {
            table.add_note("order: " + order);
        }
        if (const std::string delivery = plan_text::delivery_text(money, line); !delivery.empty()) {
            table.add_note("delivery: " + delivery);
        }
        if (!line.reason.empty()) {
            table.add_note("why: " + line.reason);
        }
        const std::string alternative = alternative_text(line.alternative, line.alternative_reason,
                                                         line.alternative.substr(0, line.alternative.find(' ')));
        if (!alternative.empty()) {
            table.add_note("alternative: " + alternative);
        }
    }
    return table;
}

// Projects with phases: the fleet they could share, month by month, and the decision.
void write_shared_fleet(std::ostream& out, const PlanReport& report, const Painter& paint, std::size_t width) {
    if (!report.shared_fleet) {
        return;
    }
    const SharedFleet& fleet = *report.shared_fleet;
    const Money money = money_of(report);
    out << paint.bold("Shared fleet over the phases") << "\n";
    write_wrapped(
        out, "  ", 4,
        fmt::format("{} × {} bought ({}): {} over {:g} months, against {} for each phase on its own "
                    "pick — {}",
                    fleet.owned_gpus, fleet.gpu_name, fleet.offer, money.whole(fleet.shared_tco_usd), fleet.span_months,
                    money.whole(fleet.separate_tco_usd), fleet.chosen ? "chosen: " + fleet.why : fleet.why),
        width);
    for (const SharedFleetPhase& part : fleet.phases) {
        write_wrapped(out, "  - ", 4,
                      fmt::format("months {}–{}: {} on {} GPUs, {:.0f} % busy (alone: {}, {})", part.first_month,
                                  part.last_month, part.workload, part.gpus, part.utilisation * 100, part.separate_pick,
                                  money.whole(part.separate_tco_usd)),
                      width);
    }
    for (const std::string& line : fleet.idle_advice) {
        write_wrapped(out, "  - ", 4, line, width);
    }
    out << "\n";
}

void write_procurement(std::ostream& out, const PlanReport& report, const Painter& paint, std::size_t width) {
    if (report.procurement.empty()) {
        write_wrapped(out, paint.bold("Procurement:") + " ", 2, "nothing — no role has a feasible option", width);
        return;
    }
    out << paint.bold("Procurement") << "\n";
    std::vector<TextTable> layouts;
    layouts.push_back(procurement_table(report, paint, true, false));
    layouts.push_back(procurement_table(report, paint, true, true));
    layouts.push_back(procurement_table(report, paint, false, true));
    out << render_first_fitting(layouts, layouts.front(), procurement_indent, width);
    out << "\n";
    const std::optional<double> horizon = common_horizon(report);
    const Money money = money_of(report);
    const std::string tco_label =
        horizon ? fmt::format("{}-month TCO", months_text(*horizon)) : std::string("TCO (each role over its horizon)");
    write_items(
        out, paint.bold("Totals:") + " ", 8,
        {"capex " + money.whole(report.total_capex_usd), "monthly opex " + money.whole(report.total_monthly_opex_usd),
         tco_label + " " + money.whole(report.total_tco_usd)},
        width);
}

}  // namespace

void render_plan_table(const PlanReport& report, std::ostream& out, const TerminalStyle& style,
                       const PlanTableOptions& options) {
    const std::size_t width = std::max(style.width, minimum_width);
    const Painter paint(style.color);
    write_title(out, report, paint, width);
    if (!options.quiet) {
        out << "\n";
        write_assumptions(out, report, paint, width);
    }
    for (const RolePlan& plan : report.roles) {
        out << "\n";
        write_role(out, plan, paint, options, width);
    }
    out << "\n";
    write_shared_fleet(out, report, paint, width);
    write_procurement(out, report, paint, width);
    if (options.quiet) {
        return;
    }
    write_items(out, paint.dim("Export:") + " ", 8,
                {"--format csv -o purchase.csv (finance)", "--format cashflow-csv -o cashflow.csv",
                 "--format xlsx -o plan.xlsx", "--format markdown (pull request)", "--format json"},
                width);
}

}  // namespace gpusel
