#include "check/check.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/money.hpp"
#include "cost/cost.hpp"

namespace gpusel {

namespace {

int severity_rank(FindingSeverity severity) {
    switch (severity) {
        case FindingSeverity::error:
            return 0;
        case FindingSeverity::warning:
            return 1;
        case FindingSeverity::note:
            return 2;
    }
    return 3;
}

Position position_or(Position position, Position fallback) {
    return position.line > 0 ? position : fallback;
}

std::string months_words(double months) {
    return fmt::format("{:g} month{}", months, months == 1 ? "" : "s");
}

// Whole units, or cents below 100 (a rented training run can cost a few dollars), in the
// proposal's currency.
std::string money_words(const Money& money, double usd) {
    return std::fabs(money.of(usd)) < 100 ? money.cents(usd) : money.whole(usd);
}

// "$3,500" per unit, or "$2.79/h" per unit-hour for rentals.
std::string unit_price_text(const Money& money, double usd, Acquisition acquisition) {
    return is_purchase(acquisition) ? money.whole(usd) : money.cents(usd) + "/h";
}

Money money_of(const Proposal& proposal) {
    if (proposal.project.workloads.empty()) {
        return {};
    }
    const CurrencySpec& currency = proposal.project.workloads.front().deployment.currency;
    return Money{currency.code, currency.per_usd, currency.as_of};
}

std::string subject(int count, const std::string& gpu) {
    return fmt::format("{}× {}", count, gpu);
}

// "+257 %", or "2.3K× as much" once percentages stop being readable.
std::string overspend_words(double fraction) {
    if (fraction < 10) {
        return "+" + format_percent(fraction);
    }
    return fmt::format("{}× as much", format_count(1 + fraction));
}

std::string candidate_words(const Candidate& candidate) {
    return fmt::format("{}× {} {}", candidate.count, candidate.gpu, to_string(candidate.acquisition));
}

double free_fraction(const MemoryEstimate& memory) {
    return memory.capacity_bytes > 0 ? (memory.capacity_bytes - memory.per_gpu.total_bytes) / memory.capacity_bytes
                                     : 0.0;
}

std::string memory_words(const MemoryEstimate& memory) {
    return fmt::format("{}/{} per GPU", format_gb(memory.per_gpu.total_bytes), format_gb(memory.capacity_bytes));
}

std::optional<double> time_to_train(const Candidate& candidate) {
    if (candidate.perf.training) {
        return candidate.perf.training->time_to_train_s;
    }
    return std::nullopt;
}

bool meets_target(const Candidate& candidate) {
    if (candidate.perf.training) {
        return candidate.perf.training->meets_deadline;
    }
    return candidate.perf.inference ? candidate.perf.inference->meets_slo : true;
}

// The SLO terms the candidate misses at the offered load, as "P99 TPOT 61 ms > 50 ms".
std::vector<std::string> slo_misses(const SloSpec& slo, const InferencePerf& perf) {
    std::vector<std::string> misses;
    const auto check = [&](const char* name, double target, const std::optional<double>& value) {
        if (target > 0 && value && *value > target) {
            misses.push_back(fmt::format("P{:g} {} {} > {}", slo.percentile, name, format_duration(*value),
                                         format_duration(target)));
        }
    };
    check("TTFT", slo.ttft_seconds, perf.p99_ttft_s);
    check("TPOT", slo.tpot_seconds, perf.p99_tpot_s);
    check("e2e", slo.e2e_seconds, perf.p99_e2e_s);
    return misses;
}

bool has_slo(const SloSpec& slo) {
    return slo.ttft_seconds > 0 || slo.tpot_seconds > 0 || slo.e2e_seconds > 0;
}

// What the candidate achieves against the workload's target, for summaries and fixes.
std::string target_words(const Workload& workload, const Candidate& candidate) {
    if (candidate.perf.training) {
        const TrainingPerf& training = *candidate.perf.training;
        if (training.time_to_train_s) {
            if (workload.training.deadline_seconds > 0) {
                return fmt::format("{} per run {} {} deadline", format_duration(*training.time_to_train_s),
                                   training.meets_deadline ? "≤" : ">",
                                   format_duration(workload.training.deadline_seconds));
            }
            return fmt::format("{} per run", format_duration(*training.time_to_train_s));
        }
        return training.tokens_per_s > 0 ? format_rate(training.tokens_per_s, "tok/s")
                                         : format_rate(training.samples_per_s, "samples/s");
    }
    if (candidate.perf.inference) {
        const InferencePerf& inference = *candidate.perf.inference;
        const SloSpec& slo = workload.inference.slo;
        const std::vector<std::string> misses = slo_misses(slo, inference);
        if (!misses.empty()) {
            return fmt::format("{} at {}", fmt::join(misses, ", "), workload.inference.load_text());
        }
        if (!inference.p99_ttft_s || !inference.p99_tpot_s || !inference.p99_e2e_s) {
            // No latency at this load: the queues grow without bound. The limit that binds is the
            // largest load meeting the SLO, not the full-batch throughput (which the queues never
            // reach with prefill and decode interleaved, and which may even exceed the load).
            return fmt::format(
                "{:g} req/s: queues grow without bound; the SLO holds up to {:.3g} req/s on these replicas",
                workload.inference.requests_per_s, inference.max_requests_per_s_meeting_slo);
        }
        std::vector<std::string> terms;
        const auto term = [&](const char* name, double target, double value) {
            if (target > 0) {
                terms.push_back(fmt::format("P{:g} {} {} ≤ {}", slo.percentile, name, format_duration(value),
                                            format_duration(target)));
            }
        };
        term("TTFT", slo.ttft_seconds, *inference.p99_ttft_s);
        term("TPOT", slo.tpot_seconds, *inference.p99_tpot_s);
        term("e2e", slo.e2e_seconds, *inference.p99_e2e_s);
        if (terms.empty()) {
            terms.push_back(fmt::format("P{:g} e2e {}", slo.percentile, format_duration(*inference.p99_e2e_s)));
        }
        return fmt::format("{} at {}", fmt::join(terms, ", "), workload.inference.load_text());
    }
    return "no performance estimate";
}

std::string native_precisions(const GpuSpec& gpu) {
    std::vector<std::string_view> names;
    for (const Precision precision : all_precisions) {
        if (precision != Precision::fp32 && gpu.supports(precision)) {
            names.push_back(to_string(precision));
        }
    }
    return names.empty() ? std::string("fp32 only") : fmt::format("{}", fmt::join(names, ", "));
}

EvidenceItem number(std::string key, double value) {
    return EvidenceItem{std::move(key), value, {}};
}
EvidenceItem word(std::string key, std::string value) {
    return EvidenceItem{std::move(key), std::nullopt, std::move(value)};
}

// Judges one proposal; collects findings and rules left out.
class Judge {
public:
    Judge(const Proposal& proposal, CheckReport& report)
        : m_proposal(proposal), m_report(report), m_money(money_of(proposal)) {}

    void missing_roles() {
        for (const Workload& workload : m_proposal.project.workloads) {
            const bool covered = std::any_of(m_proposal.hardware.begin(), m_proposal.hardware.end(),
                                             [&](const ProposedHardware& line) { return line.role == workload.role; });
            const std::string role(to_string(workload.role));
            if (covered) {
                continue;
            }
            Finding finding;
            finding.severity = FindingSeverity::warning;
            finding.rule = check_rule::missing_role;
            finding.role = role;
            finding.field = "hardware";
            finding.position = m_proposal.hardware.empty() ? Position{} : m_proposal.hardware.front().entry_position;
            finding.message = fmt::format("workload '{}' ({}) has no hardware line: the proposal buys nothing for it",
                                          workload.name, role);
            finding.evidence = {word("workload", workload.name), word("role", role)};
            finding.fix =
                fmt::format("add a hardware line with role: {}, or drop the workload from the proposal", role);
            add(std::move(finding));
            skip_all_but(role, {check_rule::missing_role, check_rule::unknown_role, check_rule::duplicate_role},
                         "no hardware line for this role");
        }
    }

    void line(std::size_t index, const HardwareAssessment* assessment) {
        const ProposedHardware& hardware = m_proposal.hardware[index];
        const std::string role(to_string(hardware.role));
        const auto workload = std::find_if(m_proposal.project.workloads.begin(), m_proposal.project.workloads.end(),
                                           [&](const Workload& item) { return item.role == hardware.role; });
        if (workload == m_proposal.project.workloads.end()) {
            unknown_role(index, role);
            return;
        }
        for (std::size_t earlier = 0; earlier < index; ++earlier) {
            if (m_proposal.hardware[earlier].role == hardware.role) {
                duplicate_role(index, earlier, role);
                break;
            }
        }
        if (assessment == nullptr) {
            skip_all_but(role, {check_rule::missing_role, check_rule::unknown_role, check_rule::duplicate_role},
                         "not assessed");
            return;
        }
        Line line{index, hardware, *workload, *assessment, role};
        // Whether the line could be evaluated at all is itself checked.
        evaluated(role, check_rule::price_missing);
        evaluated(role, check_rule::not_purchasable);
        evaluated(role, check_rule::not_evaluable);
        constraints(line);
        precision(line);
        price_far_from_catalog(line);
        layout(line);
        short_purchase(line);
        if (!assessment->proposed) {
            not_evaluated(line);
            m_report.summary.push_back(fmt::format("{}: {} {} · not evaluated: {}", line.role, line.what(),
                                                   to_string(hardware.acquisition),
                                                   assessment->why_not.empty() ? "no estimate" : assessment->why_not));
            return;
        }
        const Candidate& candidate = *assessment->proposed;
        m_report.summary.push_back(summary(line, candidate));
        headroom(line, candidate);
        target(line, candidate);
        budget(line, candidate);
        overspend(line, candidate);
        oversized(line, candidate);
        long_rental(line, candidate);
    }

    void finish() {
        std::stable_sort(m_report.findings.begin(), m_report.findings.end(), [](const Finding& a, const Finding& b) {
            if (severity_rank(a.severity) != severity_rank(b.severity)) {
                return severity_rank(a.severity) < severity_rank(b.severity);
            }
            if (a.position.line != b.position.line) {
                return a.position.line < b.position.line;
            }
            return a.position.column < b.position.column;
        });
        // A rule skipped for a role but evaluated for it elsewhere (a second line) is not skipped.
        std::vector<SkippedCheck> kept;
        std::set<std::pair<std::string, std::string>> seen;
        for (SkippedCheck& skipped : m_skipped) {
            const auto key = std::make_pair(skipped.role, skipped.rule);
            if (m_evaluated.count(key) == 0 && seen.insert(key).second) {
                kept.push_back(std::move(skipped));
            }
        }
        m_report.skipped = std::move(kept);
    }

private:
    struct Line {
        std::size_t index;
        const ProposedHardware& hardware;
        const Workload& workload;
        const HardwareAssessment& assessment;
        std::string role;

        std::string field(std::string_view name) const { return fmt::format("hardware[{}].{}", index, name); }
        Position gpu_position() const { return position_or(hardware.gpu_position, hardware.entry_position); }
        Position count_position() const { return position_or(hardware.count_position, hardware.entry_position); }
        Position acquisition_position() const {
            return position_or(hardware.acquisition_position, hardware.entry_position);
        }
        Position unit_price_position() const {
            return position_or(hardware.unit_price_position, hardware.entry_position);
        }
        std::string gpu_id() const { return assessment.gpu.id.empty() ? hardware.gpu : assessment.gpu.id; }
        std::string what() const { return subject(hardware.count, gpu_id()); }
        double months() const { return workload.deployment.horizon_months; }
    };

    void add(Finding finding) {
        m_evaluated.insert({finding.role, finding.rule});
        m_report.findings.push_back(std::move(finding));
    }
    void evaluated(const std::string& role, std::string_view rule) { m_evaluated.insert({role, std::string(rule)}); }
    void skip(const std::string& role, std::string_view rule, std::string reason) {
        m_skipped.push_back({role, std::string(rule), std::move(reason)});
    }
    void skip_all_but(const std::string& role, std::initializer_list<std::string_view> keep,
                      const std::string& reason) {
        for (const std::string_view rule : check_rules()) {
            if (std::find(keep.begin(), keep.end(), rule) == keep.end()) {
                skip(role, rule, reason);
            }
        }
    }

    Finding make(const Line& line, FindingSeverity severity, std::string_view rule, std::string_view field,
                 Position position) {
        Finding finding;
        finding.severity = severity;
        finding.rule = rule;
        finding.role = line.role;
        finding.field = line.field(field);
        finding.position = position;
        return finding;
    }

    void unknown_role(std::size_t index, const std::string& role) {
        const ProposedHardware& hardware = m_proposal.hardware[index];
        std::vector<std::string> roles;
        for (const Workload& workload : m_proposal.project.workloads) {
            roles.emplace_back(to_string(workload.role));
        }
        Finding finding;
        finding.severity = FindingSeverity::error;
        finding.rule = check_rule::unknown_role;
        finding.role = role;
        finding.field = fmt::format("hardware[{}].role", index);
        finding.position = hardware.entry_position;
        finding.message = fmt::format(
            "hardware line for role {}, but no workload of the proposal has that role "
            "(roles: {}): nothing to check it against",
            role, fmt::join(roles, ", "));
        finding.evidence = {word("role", role), word("workload_roles", fmt::format("{}", fmt::join(roles, ", ")))};
        finding.fix =
            fmt::format("set role: to one of {}, or add a workload with role: {}", fmt::join(roles, ", "), role);
        add(std::move(finding));
        skip_all_but(role, {check_rule::unknown_role, check_rule::missing_role, check_rule::duplicate_role},
                     "no workload has this role");
    }

    void duplicate_role(std::size_t index, std::size_t earlier, const std::string& role) {
        const ProposedHardware& hardware = m_proposal.hardware[index];
        Finding finding;
        finding.severity = FindingSeverity::error;
        finding.rule = check_rule::duplicate_role;
        finding.role = role;
        finding.field = fmt::format("hardware[{}].role", index);
        finding.position = hardware.entry_position;
        const Position first = m_proposal.hardware[earlier].entry_position;
        finding.message = fmt::format(
            "a second hardware line for role {} (the first is hardware[{}] on line {}): "
            "each line is judged as if it alone served the workload",
            role, earlier, first.line);
        finding.evidence = {word("role", role), number("first_line", first.line)};
        finding.fix = "give one hardware line per role (mixed fleets are not modelled)";
        add(std::move(finding));
    }

    std::string summary(const Line& line, const Candidate& candidate) const {
        std::string quote;
        if (line.hardware.unit_price_usd) {
            quote = fmt::format(" at {}", unit_price_words(*line.hardware.unit_price_usd, line.hardware.acquisition));
        }
        std::string costs = fmt::format("TCO {} over {}", money(candidate.cost.tco_usd), months_words(line.months()));
        if (candidate.cost.capex_usd > 0) {
            costs = fmt::format("capex {} · {}", money(candidate.cost.capex_usd), costs);
        }
        return fmt::format("{}: {} {}{} · {} ({}) · {} · {}", line.role, line.what(),
                           to_string(line.hardware.acquisition), quote, memory_words(candidate.memory),
                           describe(candidate.layout), target_words(line.workload, candidate), costs);
    }

    // ---------------------------------------------------------------------------------------
    // Rules that need no evaluation

    void constraints(const Line& line) {
        const auto rule = check_rule::constraint_violated;
        evaluated(line.role, rule);
        const ConstraintSpec& limits = line.workload.constraints;
        if (!line.assessment.excluded_by.empty()) {
            Finding finding = make(line, FindingSeverity::error, rule, "gpu", line.gpu_position());
            finding.message =
                fmt::format("the workload's constraints exclude {}: {}", line.gpu_id(), line.assessment.excluded_by);
            finding.evidence = {word("gpu", line.gpu_id()), word("constraint", line.assessment.excluded_by),
                                word("segment", std::string(to_string(line.assessment.gpu.segment))),
                                word("form_factor", std::string(to_string(line.assessment.gpu.form_factor))),
                                number("power_watts", line.assessment.gpu.power_watts)};
            finding.fix =
                cheapest_fix("choose a GPU the workload allows, or change its constraints if they are wrong", line);
            add(std::move(finding));
        }
        if (line.hardware.count > limits.max_gpus) {
            Finding finding = make(line, FindingSeverity::error, rule, "count", line.count_position());
            finding.message = fmt::format("{} GPUs exceed the workload's constraints.max_gpus of {}",
                                          line.hardware.count, limits.max_gpus);
            finding.evidence = {number("count", line.hardware.count), number("max_gpus", limits.max_gpus)};
            finding.fix = fmt::format("count: {} at most, or raise constraints.max_gpus", limits.max_gpus);
            add(std::move(finding));
        }
    }

    void price_far_from_catalog(const Line& line) {
        const auto rule = check_rule::price_far_from_catalog;
        if (!line.hardware.unit_price_usd) {
            skip(line.role, rule, "no unit_price quoted");
            return;
        }
        const std::optional<PricePoint>& catalog_price = line.assessment.catalog_price;
        if (!catalog_price || catalog_price->usd <= 0) {
            skip(line.role, rule,
                 fmt::format("the catalog has no {} offer of these units to compare with",
                             to_string(line.hardware.acquisition)));
            return;
        }
        const std::optional<double> catalog = catalog_price->usd;
        evaluated(line.role, rule);
        const double quote = *line.hardware.unit_price_usd;
        const double ratio = quote / *catalog;
        // Strict: any gap beyond policy.max_price_gap fails (a lost zero, 856 against 8,565, is
        // 0.10×); otherwise a quote outside half to twice the catalog's is a warning.
        const ProposalPolicy& policy = m_proposal.policy;
        const double low = policy.strict ? 1 - policy.max_price_gap_fraction : quote_low_ratio;
        const double high = policy.strict ? 1 + policy.max_price_gap_fraction : quote_high_ratio;
        if (ratio >= low && ratio <= high) {
            return;
        }
        const Acquisition acquisition = line.hardware.acquisition;
        const bool rental = !is_purchase(acquisition);
        const std::string as_of = catalog_price->as_of;
        Finding finding = make(line, FindingSeverity::warning, rule, "unit_price", line.unit_price_position());
        finding.message = fmt::format(
            "quoted unit_price {} is {:.2f}× the catalog's {} price of {} for {} ({}){}: a typo or a stale quote?",
            unit_price_words(quote, acquisition), ratio, to_string(acquisition),
            unit_price_words(*catalog, acquisition), line.gpu_id(), line.assessment.catalog_offer,
            as_of.empty() ? "" : fmt::format(" (as of {})", as_of));
        const std::string unit = rental ? "_usd_per_hour" : "_usd";
        finding.evidence = {number("quoted" + unit, quote), number("catalog" + unit, *catalog),
                            number("quote_to_catalog_ratio", ratio)};
        if (!as_of.empty()) {
            finding.evidence.push_back(word("catalog_as_of", as_of));
        }
        finding.fix = fmt::format(
            "check the quote: prices outside {:g}–{:g}× the catalog's are flagged{}; if it is right, "
            "add it to a --catalog file so that every check uses it",
            low, high, policy.strict ? " (policy.max_price_gap, strict)" : "");
        add(std::move(finding));
    }

    void layout(const Line& line) {
        const auto rule = check_rule::layout;
        evaluated(line.role, rule);
        const GpuSpec& gpu = line.assessment.gpu;
        const int domain = gpu.has_gpu_interconnect() ? std::max(1, gpu.interconnect.domain_size) : 1;
        const std::string link = gpu.has_gpu_interconnect() ? gpu.interconnect.kind : std::string("PCIe only");
        const int fixed_tensor = line.workload.is_training() ? line.workload.training.tensor_parallel : 0;
        if (fixed_tensor > domain) {
            Finding finding = make(line, FindingSeverity::note, rule, "gpu", line.gpu_position());
            finding.message = fmt::format(
                "the workload fixes tensor_parallel {}, but {} links {} ({}): tensor-parallel all-reduces "
                "cross PCIe in every layer",
                fixed_tensor, line.gpu_id(),
                domain == 1 ? std::string("no GPUs directly") : fmt::format("groups of {} only", domain), link);
            finding.evidence = {number("tensor_parallel", fixed_tensor), number("nvlink_domain", domain),
                                word("interconnect", link)};
            finding.fix = fmt::format(
                "set training.tensor_parallel ≤ {} (or auto), or choose a GPU whose NVLink "
                "domain holds {} GPUs",
                domain, fixed_tensor);
            add(std::move(finding));
        }
        const int per_node = std::min(line.hardware.count, std::max(1, line.workload.constraints.gpus_per_node));
        if (gpu.has_gpu_interconnect() && per_node > domain) {
            Finding finding = make(line, FindingSeverity::note, rule, "count", line.count_position());
            finding.message = fmt::format(
                "{} GPUs per node, but {}'s {} joins groups of {}: collectives among "
                "the groups cross PCIe",
                per_node, line.gpu_id(), link, domain);
            finding.evidence = {number("gpus_per_node", per_node), number("nvlink_domain", domain),
                                word("interconnect", link)};
            finding.fix = fmt::format(
                "keep tensor parallelism within {} GPUs, or choose a part whose NVLink domain "
                "spans the node (SXM/HGX)",
                domain);
            add(std::move(finding));
        }
    }

    void short_purchase(const Line& line) {
        const auto rule = check_rule::acquisition_mismatch;
        evaluated(line.role, rule);
        if (!is_purchase(line.hardware.acquisition) || line.months() >= rent_below_months) {
            return;
        }
        Finding finding = make(line, FindingSeverity::warning, rule, "acquisition", line.acquisition_position());
        finding.message = fmt::format("buying {} for a {} horizon: below {:g} months the practice is to rent",
                                      line.what(), months_words(line.months()), rent_below_months);
        finding.evidence = {number("horizon_months", line.months()), number("rent_below_months", rent_below_months)};
        const HardwareAssessment& assessment = line.assessment;
        if (assessment.proposed) {
            finding.evidence.push_back(number("capex_usd", assessment.proposed->cost.capex_usd));
            finding.evidence.push_back(number("resale_usd", assessment.proposed->cost.breakdown.resale_usd));
            finding.evidence.push_back(number("bought_tco_usd", assessment.proposed->cost.tco_usd));
        }
        if (assessment.same_count_on_demand) {
            finding.evidence.push_back(number("on_demand_tco_usd", assessment.same_count_on_demand->cost.tco_usd));
            finding.fix = fmt::format("acquisition: cloud-on-demand{} — the same {} rented: {} over {}{}",
                                      line.workload.is_training() ? " (or cloud-spot)" : "", line.what(),
                                      money(assessment.same_count_on_demand->cost.tco_usd), months_words(line.months()),
                                      assessment.proposed ? fmt::format(", no {} up front and no resale to count on",
                                                                        money(assessment.proposed->cost.capex_usd))
                                                          : std::string());
        } else {
            finding.fix =
                "acquisition: cloud-on-demand (or cloud-reserved), unless the GPUs serve other work after "
                "this horizon — then set deployment.horizon to their whole service life";
        }
        add(std::move(finding));
    }

    // ---------------------------------------------------------------------------------------
    // A line that could not be evaluated at its count

    void not_evaluated(const Line& line) {
        const HardwareAssessment& assessment = line.assessment;
        std::string reason;
        switch (assessment.obstacle) {
            case Obstacle::memory:
                does_not_fit(line);
                reason = "the hardware does not fit the workload";
                break;
            case Obstacle::precision:
                reason = "the GPU cannot run the workload's precision";  // precision() reported it
                break;
            case Obstacle::price: {
                Finding finding = make(line, FindingSeverity::error, check_rule::price_missing, "acquisition",
                                       line.acquisition_position());
                finding.message = fmt::format("the catalog has no offer to {} {}: its cost cannot be judged",
                                              describe(line.hardware.acquisition), line.gpu_id());
                finding.evidence = {word("gpu", line.gpu_id()),
                                    word("acquisition", std::string(to_string(line.hardware.acquisition)))};
                finding.fix =
                    "add the offer you were quoted to a --catalog file (docs/catalog.md), or choose an "
                    "acquisition the catalog offers (`gpusel catalog show " +
                    line.gpu_id() + "`)";
                add(std::move(finding));
                reason = "no offer for this acquisition";
                break;
            }
            case Obstacle::not_purchasable: {
                const int unit = std::max(1, assessment.smallest_unit_gpus);
                const int rounded = (line.hardware.count + unit - 1) / unit * unit;
                Finding finding =
                    make(line, FindingSeverity::error, check_rule::not_purchasable, "count", line.count_position());
                finding.message = fmt::format(
                    "{} {} cannot be {} as written: the smallest unit on offer is {} GPUs ({})", line.what(),
                    to_string(line.hardware.acquisition), is_purchase(line.hardware.acquisition) ? "bought" : "rented",
                    unit, assessment.smallest_unit);
                finding.evidence = {number("count", line.hardware.count), number("smallest_unit_gpus", unit),
                                    word("smallest_unit", assessment.smallest_unit)};
                finding.fix = fmt::format("count: {} ({} unit{} of {} GPUs), or a GPU sold in smaller units", rounded,
                                          rounded / unit, rounded / unit == 1 ? "" : "s", unit);
                add(std::move(finding));
                reason = "not whole units of an offer";
                break;
            }
            case Obstacle::spot_serving: {
                Finding finding = make(line, FindingSeverity::error, check_rule::acquisition_mismatch, "acquisition",
                                       line.acquisition_position());
                finding.message = fmt::format(
                    "spot capacity for the always-on {} service: spot GPUs can be reclaimed "
                    "with 30 s to 2 min notice",
                    line.workload.name);
                finding.evidence = {word("acquisition", "cloud-spot"), word("kind", "inference")};
                finding.fix = "acquisition: cloud-on-demand or cloud-reserved (or buy-new for a long horizon)";
                add(std::move(finding));
                reason = "spot capacity cannot serve";
                break;
            }
            case Obstacle::layout:
            case Obstacle::other:
            case Obstacle::none: {
                const bool layout = assessment.obstacle == Obstacle::layout;
                Finding finding =
                    make(line, FindingSeverity::error, layout ? check_rule::layout : check_rule::not_evaluable, "count",
                         line.count_position());
                finding.message =
                    fmt::format("{} cannot be evaluated: {}", line.what(),
                                assessment.why_not.empty() ? std::string("no estimate") : assessment.why_not);
                finding.evidence = {word("reason", assessment.why_not.empty() ? "no estimate" : assessment.why_not)};
                finding.fix = layout ? "make count a multiple of training.tensor_parallel × training.pipeline_parallel"
                                     : "check the workload with `gpusel plan`";
                add(std::move(finding));
                reason = "the hardware could not be evaluated";
                break;
            }
        }
        for (const std::string_view rule : {check_rule::does_not_fit, check_rule::headroom_below_policy,
                                            check_rule::over_budget, check_rule::overspend, check_rule::oversized}) {
            skip(line.role, rule, "not evaluated: " + reason);
        }
        if (line.workload.is_training()) {
            skip(line.role, check_rule::slo_missed, "a training workload has no SLO");
            skip(line.role, check_rule::deadline_missed, "not evaluated: " + reason);
        } else {
            skip(line.role, check_rule::deadline_missed, "an inference workload has no deadline");
            skip(line.role, check_rule::slo_missed, "not evaluated: " + reason);
        }
    }

    void does_not_fit(const Line& line) {
        const HardwareAssessment& assessment = line.assessment;
        const bool more = assessment.fewest_fitting.has_value();
        Finding finding = make(line, FindingSeverity::error, check_rule::does_not_fit, more ? "count" : "gpu",
                               more ? line.count_position() : line.gpu_position());
        if (assessment.closest_miss) {
            const MemoryEstimate& memory = *assessment.closest_miss;
            const MemoryBreakdown& part = memory.per_gpu;
            finding.message =
                fmt::format("{} does not fit: {} per GPU even with the layout that needs least ({}), {} has {}",
                            line.what(), format_gb(part.total_bytes), describe(assessment.closest_layout),
                            line.gpu_id(), format_gb(memory.capacity_bytes));
            finding.evidence = {number("count", line.hardware.count),
                                word("layout", describe(assessment.closest_layout)),
                                number("weights_bytes", part.weights_bytes),
                                number("gradients_bytes", part.gradients_bytes),
                                number("optimizer_bytes", part.optimizer_bytes),
                                number("activations_bytes", part.activations_bytes),
                                number("kv_cache_bytes", part.kv_cache_bytes),
                                number("overhead_bytes", part.overhead_bytes),
                                number("total_bytes", part.total_bytes),
                                number("capacity_bytes", memory.capacity_bytes),
                                number("required_free_fraction", m_proposal.policy.memory_headroom_fraction)};
            if (line.workload.is_training()) {
                finding.evidence.push_back(number("micro_batch", memory.micro_batch));
            } else {
                finding.evidence.push_back(number("batch", memory.batch));
                finding.evidence.push_back(number("context_tokens", memory.context_tokens));
            }
        } else {
            finding.message = fmt::format("{} does not fit: {}", line.what(), assessment.why_not);
            finding.evidence = {number("count", line.hardware.count), word("reason", assessment.why_not)};
        }
        if (more) {
            const Candidate& fitting = *assessment.fewest_fitting;
            finding.fix = fmt::format("count: {} — {} ({}){}", fitting.count, memory_words(fitting.memory),
                                      describe(fitting.layout),
                                      meets_target(fitting) ? "" : "; " + target_words(line.workload, fitting));
        } else {
            finding.fix = cheapest_fix(
                fmt::format("no count of {} up to {} fits; {}", line.gpu_id(),
                            std::max(line.hardware.count, assessment.max_count_searched), shrink_advice(line)),
                line);
        }
        add(std::move(finding));
    }

    // What would make the closest layout fit when more GPUs do not help: the component that
    // does not shrink with them.
    std::string shrink_advice(const Line& line) const {
        const std::optional<MemoryEstimate>& memory = line.assessment.closest_miss;
        if (memory) {
            const MemoryBreakdown& part = memory->per_gpu;
            if (line.workload.is_training() && part.activations_bytes >= 0.5 * part.total_bytes) {
                return fmt::format(
                    "activations take {} per GPU at micro_batch {}: lower training.micro_batch "
                    "or seq_len, or set checkpointing: full",
                    format_gb(part.activations_bytes), memory->micro_batch);
            }
            if (!line.workload.is_training() && part.kv_cache_bytes >= 0.5 * part.total_bytes) {
                return fmt::format("the KV cache takes {} per GPU at batch {}: cap the batch or the context",
                                   format_gb(part.kv_cache_bytes), memory->batch);
            }
        }
        return "choose a GPU with more memory";
    }

    // "…: the planner's cheapest option meeting every constraint is 2× A100-80GB-SXM4 buy-new
    // ($41,200 over 24 months)" when there is one.
    std::string cheapest_fix(std::string lead, const Line& line) const {
        const std::optional<Candidate>& cheapest = line.assessment.cheapest_feasible;
        if (!cheapest) {
            return lead;
        }
        return fmt::format("{}; the planner's cheapest option meeting every constraint: {} ({} over {}, {})", lead,
                           candidate_words(*cheapest), money(cheapest->cost.tco_usd), months_words(line.months()),
                           target_words(line.workload, *cheapest));
    }

    // ---------------------------------------------------------------------------------------
    // Rules on the evaluated line

    void headroom(const Line& line, const Candidate& candidate) {
        evaluated(line.role, check_rule::does_not_fit);
        const auto rule = check_rule::headroom_below_policy;
        evaluated(line.role, rule);
        if (line.assessment.meets_headroom) {
            return;
        }
        const MemoryEstimate& memory = candidate.memory;
        const double free = free_fraction(memory);
        const double required = m_proposal.policy.memory_headroom_fraction;
        Finding finding = make(line, FindingSeverity::error, rule, "count", line.count_position());
        finding.message = fmt::format("{} leaves {} of memory free per GPU ({}), below the policy's {}", line.what(),
                                      format_percent(free), memory_words(memory), format_percent(required));
        finding.evidence = {number("total_bytes", memory.per_gpu.total_bytes),
                            number("capacity_bytes", memory.capacity_bytes),
                            number("free_bytes", memory.capacity_bytes - memory.per_gpu.total_bytes),
                            number("free_fraction", free),
                            number("required_free_fraction", required),
                            word("layout", describe(candidate.layout))};
        if (line.assessment.fewest_fitting) {
            const Candidate& fitting = *line.assessment.fewest_fitting;
            finding.fix = fmt::format("count: {} — {} ({})", fitting.count, memory_words(fitting.memory),
                                      describe(fitting.layout));
        } else {
            finding.fix = cheapest_fix(
                line.workload.is_training()
                    ? "reduce training.micro_batch or enable checkpointing; lower policy.memory_headroom only "
                      "with a measured calibration point"
                    : "cap the batch or context; lower policy.memory_headroom only with a measured calibration point",
                line);
        }
        add(std::move(finding));
    }

    void precision(const Line& line) {
        const auto rule = check_rule::precision_not_native;
        evaluated(line.role, rule);
        const GpuSpec& gpu = line.assessment.gpu;
        const Precision wanted = line.workload.precision;
        if (gpu.supports(wanted)) {
            return;
        }
        const std::string wanted_name(to_string(wanted));
        const std::optional<Precision> runs = runnable_precision(line.workload, gpu);
        Finding finding = make(line, FindingSeverity::error, rule, "gpu", line.gpu_position());
        finding.evidence = {word("precision", wanted_name), word("native_precisions", native_precisions(gpu))};
        if (!runs) {
            finding.message = fmt::format("{} runs neither {} nor a wider format to fall back to (native: {})",
                                          line.gpu_id(), wanted_name, native_precisions(gpu));
            finding.fix = cheapest_fix("choose a GPU that runs " + wanted_name, line);
            add(std::move(finding));
            return;
        }
        const std::string used(to_string(*runs));
        finding.message = fmt::format("{} has no native {}: the workload would run in {} instead (native: {})",
                                      line.gpu_id(), wanted_name, used, native_precisions(gpu));
        finding.evidence.insert(finding.evidence.begin() + 1, word("runs_as", used));
        finding.evidence.push_back(number("peak_" + used + "_flops_per_s", gpu.peak_flops_per_s(*runs)));
        finding.fix = cheapest_fix(fmt::format("choose a GPU with native {}, or set precision: {} in the workload "
                                               "once the recipe is validated in {}",
                                               wanted_name, used, used),
                                   line);
        add(std::move(finding));
    }

    void target(const Line& line, const Candidate& candidate) {
        const FindingSeverity severity =
            m_proposal.policy.require_slo ? FindingSeverity::error : FindingSeverity::warning;
        if (line.workload.is_training()) {
            skip(line.role, check_rule::slo_missed, "a training workload has no SLO");
            const auto rule = check_rule::deadline_missed;
            const double deadline = line.workload.training.deadline_seconds;
            if (deadline <= 0) {
                skip(line.role, rule, "no training.deadline set");
                return;
            }
            const std::optional<double> time = time_to_train(candidate);
            if (!time) {
                skip(line.role, rule, "no dataset size: the time to train is unknown");
                return;
            }
            evaluated(line.role, rule);
            if (candidate.perf.training->meets_deadline) {
                return;
            }
            const double overrun = *time - deadline;
            Finding finding = make(line, severity, rule, "count", line.count_position());
            finding.message =
                fmt::format("{} needs {} per run, {} ({}) past the {} deadline", line.what(), format_duration(*time),
                            format_duration(overrun), format_percent(overrun / deadline), format_duration(deadline));
            const TrainingPerf& training = *candidate.perf.training;
            finding.evidence = {number("time_to_train_s", *time), number("deadline_s", deadline),
                                number("overrun_s", overrun), number("overrun_fraction", overrun / deadline),
                                number("step_time_s", training.step_time_s)};
            if (training.tokens_per_s > 0) {
                finding.evidence.push_back(number("tokens_per_s", training.tokens_per_s));
            } else {
                finding.evidence.push_back(number("samples_per_s", training.samples_per_s));
            }
            finding.evidence.push_back(word("bottleneck", std::string(to_string(candidate.perf.bottleneck.resource))));
            finding.fix = scale_fix(line, "relax training.deadline or choose a faster GPU");
            add(std::move(finding));
            return;
        }
        skip(line.role, check_rule::deadline_missed, "an inference workload has no deadline");
        const auto rule = check_rule::slo_missed;
        const SloSpec& slo = line.workload.inference.slo;
        if (!has_slo(slo)) {
            skip(line.role, rule, "no inference.slo set");
            return;
        }
        if (!candidate.perf.inference) {
            skip(line.role, rule, "no inference estimate");
            return;
        }
        evaluated(line.role, rule);
        const InferencePerf& inference = *candidate.perf.inference;
        if (inference.meets_slo) {
            return;
        }
        const double offered = line.workload.inference.requests_per_s;
        Finding finding = make(line, severity, rule, "count", line.count_position());
        const std::vector<std::string> misses = slo_misses(slo, inference);
        const bool overloaded = !inference.p99_ttft_s || !inference.p99_tpot_s || !inference.p99_e2e_s;
        if (!misses.empty()) {
            finding.message = fmt::format("{} misses the SLO at {}: {}", line.what(),
                                          line.workload.inference.load_text(), fmt::join(misses, ", "));
        } else if (overloaded) {
            // Spare replicas (deployment.redundancy) carry no load, so the capacity is the others'.
            const int serving = candidate.serving_replicas();
            finding.message = fmt::format(
                "{} cannot serve {:g} req/s: the capacity is {:.3g} req/s ({} serving replica{} at batch {}{}), so the "
                "queue grows without bound",
                line.what(), offered, inference.requests_per_s, serving, serving == 1 ? "" : "s", inference.batch,
                candidate.spare_replicas > 0 ? fmt::format(" + {} spare", candidate.spare_replicas) : std::string());
        } else {
            finding.message = fmt::format("{} misses the SLO at {}", line.what(), line.workload.inference.load_text());
        }
        finding.evidence = {number("offered_requests_per_s", offered),
                            number("capacity_requests_per_s", inference.requests_per_s),
                            number("slo_capacity_requests_per_s", inference.max_requests_per_s_meeting_slo),
                            number("replicas", candidate.replicas), number("batch", inference.batch)};
        const auto term = [&](const char* name, double target_s, const std::optional<double>& value) {
            if (target_s <= 0) {
                return;
            }
            if (value) {
                finding.evidence.push_back(number(fmt::format("p{:g}_{}_s", slo.percentile, name), *value));
            }
            finding.evidence.push_back(number(fmt::format("slo_{}_s", name), target_s));
        };
        term("ttft", slo.ttft_seconds, inference.p99_ttft_s);
        term("tpot", slo.tpot_seconds, inference.p99_tpot_s);
        term("e2e", slo.e2e_seconds, inference.p99_e2e_s);
        finding.fix = scale_fix(line, "relax the SLO or lower inference.requests_per_s, or choose a faster GPU");
        add(std::move(finding));
    }

    std::string scale_fix(const Line& line, std::string otherwise) const {
        if (line.assessment.fewest_meeting_target) {
            const Candidate& enough = *line.assessment.fewest_meeting_target;
            return fmt::format("count: {} — {} ({}, TCO {})", enough.count, target_words(line.workload, enough),
                               describe(enough.layout), money(enough.cost.tco_usd));
        }
        return cheapest_fix(fmt::format("no count of {} up to {} meets it; {}", line.gpu_id(),
                                        std::max(line.hardware.count, line.assessment.max_count_searched), otherwise),
                            line);
    }

    void budget(const Line& line, const Candidate& candidate) {
        const auto rule = check_rule::over_budget;
        const BudgetSpec& budget = line.workload.budget;
        if (budget.capex_usd <= 0 && budget.monthly_usd <= 0) {
            skip(line.role, rule, "no budget set in the workload");
            return;
        }
        evaluated(line.role, rule);
        const auto report = [&](const char* what, double cost, double limit, const char* key) {
            Finding finding = make(line, FindingSeverity::error, rule, "count", line.count_position());
            finding.message = fmt::format("{} {}: {} {} is {} ({}) over the budget of {}", line.what(),
                                          to_string(line.hardware.acquisition), what, money(cost), money(cost - limit),
                                          format_percent((cost - limit) / limit), money(limit));
            finding.evidence = {number(std::string(key) + "_usd", cost),
                                number(std::string("budget_") + key + "_usd", limit),
                                number("excess_usd", cost - limit)};
            std::string fix;
            if (line.assessment.fewest_meeting_all) {
                const Candidate& fewer = *line.assessment.fewest_meeting_all;
                fix =
                    fmt::format("count: {} meets every constraint ({} {}, {})", fewer.count, what,
                                money(std::string(key) == "capex" ? fewer.cost.capex_usd : fewer.cost.monthly_opex_usd),
                                target_words(line.workload, fewer));
            } else {
                fix = cheapest_fix(fmt::format("raise budget.{} or choose cheaper hardware", key), line);
            }
            finding.fix = std::move(fix);
            add(std::move(finding));
        };
        if (budget.capex_usd > 0 && candidate.cost.capex_usd > budget.capex_usd) {
            report("capex", candidate.cost.capex_usd, budget.capex_usd, "capex");
        }
        if (budget.monthly_usd > 0 && candidate.cost.monthly_opex_usd > budget.monthly_usd) {
            report("monthly cost", candidate.cost.monthly_opex_usd, budget.monthly_usd, "monthly");
        }
    }

    void overspend(const Line& line, const Candidate& candidate) {
        const auto rule = check_rule::overspend;
        const std::optional<Candidate>& cheapest = line.assessment.cheapest_feasible;
        if (!cheapest) {
            skip(line.role, rule, "no catalog option meets every constraint to compare with");
            return;
        }
        evaluated(line.role, rule);
        const double alternative = cheapest->cost.tco_usd;
        const double proposed = candidate.cost.tco_usd;
        if (alternative <= 0) {
            return;
        }
        const double saving = proposed - alternative;
        const double fraction = saving / alternative;
        const double allowed = m_proposal.policy.max_overspend_fraction;
        const double min_saving = m_proposal.policy.min_saving_usd;
        // Both limits: a ratio alone fails CI over a $72 difference on a small bill.
        if (fraction <= allowed || saving < min_saving) {
            return;
        }
        Finding finding = make(line, FindingSeverity::error, rule, "gpu", line.gpu_position());
        finding.message = fmt::format(
            "{} meets every constraint for {} over {}: the proposal's {} is {} more ({}; "
            "{} allowed)",
            candidate_words(*cheapest), money(alternative), months_words(line.months()), money(proposed), money(saving),
            overspend_words(fraction), format_percent(allowed));
        finding.evidence = {number("proposed_tco_usd", proposed),       word("alternative", candidate_words(*cheapest)),
                            number("alternative_tco_usd", alternative), number("saving_usd", saving),
                            number("overspend_fraction", fraction),     number("max_overspend_fraction", allowed),
                            number("min_saving_usd", min_saving),       number("horizon_months", line.months())};
        finding.fix =
            fmt::format("gpu: {}, count: {}, acquisition: {} — saves {} over {} ({}; {})", cheapest->gpu,
                        cheapest->count, to_string(cheapest->acquisition), money(saving), months_words(line.months()),
                        target_words(line.workload, *cheapest), memory_words(cheapest->memory));
        add(std::move(finding));
    }

    void oversized(const Line& line, const Candidate& candidate) {
        const auto rule = check_rule::oversized;
        if (!m_proposal.policy.warn_oversize) {
            skip(line.role, rule, "policy.warn_oversize is false");
            return;
        }
        evaluated(line.role, rule);
        const std::optional<Candidate>& fewer = line.assessment.fewest_meeting_all;
        if (!fewer || fewer->count >= line.hardware.count) {
            return;
        }
        const double saving = candidate.cost.tco_usd - fewer->cost.tco_usd;
        Finding finding = make(line, FindingSeverity::warning, rule, "count", line.count_position());
        finding.message =
            fmt::format("{} of the {} {} meet every constraint: {}, {}", fewer->count, line.hardware.count,
                        line.gpu_id(), target_words(line.workload, *fewer), memory_words(fewer->memory));
        finding.evidence = {number("count", line.hardware.count), number("sufficient_count", fewer->count),
                            word("sufficient_layout", describe(fewer->layout)),
                            number("sufficient_total_bytes", fewer->memory.per_gpu.total_bytes),
                            number("capacity_bytes", fewer->memory.capacity_bytes)};
        if (const std::optional<double> time = time_to_train(*fewer)) {
            finding.evidence.push_back(number("sufficient_time_to_train_s", *time));
            if (line.workload.training.deadline_seconds > 0) {
                finding.evidence.push_back(number("deadline_s", line.workload.training.deadline_seconds));
            }
        }
        finding.evidence.push_back(number("proposed_tco_usd", candidate.cost.tco_usd));
        finding.evidence.push_back(number("sufficient_tco_usd", fewer->cost.tco_usd));
        finding.evidence.push_back(number("saving_usd", saving));
        finding.fix =
            fmt::format("count: {} — saves {} over {}", fewer->count, money(saving), months_words(line.months()));
        add(std::move(finding));
    }

    void long_rental(const Line& line, const Candidate& candidate) {
        const auto rule = check_rule::acquisition_mismatch;
        const Acquisition acquisition = line.hardware.acquisition;
        if (acquisition != Acquisition::cloud_on_demand && acquisition != Acquisition::cloud_reserved &&
            acquisition != Acquisition::cloud_reserved_3y) {
            return;
        }
        const std::optional<Candidate>& bought = line.assessment.same_count_bought;
        if (!bought) {
            return;
        }
        // Break-even at this workload's own use: owning costs capex plus its monthly running
        // cost; renting costs the line's monthly rental. Resale is left out, which favours
        // renting, so a warning here holds with or without it.
        const double rent_monthly = candidate.cost.monthly_opex_usd;
        const double own_monthly = bought->cost.monthly_opex_usd;
        const std::optional<double> break_even_at = break_even_month(bought->cost.capex_usd, own_monthly, rent_monthly);
        if (!break_even_at || *break_even_at >= line.months()) {
            return;
        }
        const double break_even = *break_even_at;
        Finding finding = make(line, FindingSeverity::warning, rule, "acquisition", line.acquisition_position());
        finding.message = fmt::format("renting {} ({}) for {}: buying them breaks even after {:.1f} months",
                                      line.what(), to_string(acquisition), months_words(line.months()), break_even);
        finding.evidence = {
            number("horizon_months", line.months()),       number("break_even_months", break_even),
            number("rental_monthly_usd", rent_monthly),    number("owned_monthly_usd", own_monthly),
            number("capex_usd", bought->cost.capex_usd),   number("rental_tco_usd", candidate.cost.tco_usd),
            number("bought_tco_usd", bought->cost.tco_usd)};
        finding.fix =
            fmt::format("acquisition: buy-new — {} over {} instead of {} (capex {})", money(bought->cost.tco_usd),
                        months_words(line.months()), money(candidate.cost.tco_usd), money(bought->cost.capex_usd));
        add(std::move(finding));
    }

    std::string money(double usd) const { return money_words(m_money, usd); }
    std::string unit_price_words(double usd, Acquisition acquisition) const {
        return unit_price_text(m_money, usd, acquisition);
    }

    const Proposal& m_proposal;
    CheckReport& m_report;
    Money m_money;
    std::set<std::pair<std::string, std::string>> m_evaluated;
    std::vector<SkippedCheck> m_skipped;
};

}  // namespace

std::string_view to_string(FindingSeverity severity) {
    switch (severity) {
        case FindingSeverity::error:
            return "error";
        case FindingSeverity::warning:
            return "warning";
        case FindingSeverity::note:
            return "note";
    }
    return "";
}

const std::vector<std::string_view>& check_rules() {
    static const std::vector<std::string_view> rules = {check_rule::unknown_role,
                                                        check_rule::missing_role,
                                                        check_rule::duplicate_role,
                                                        check_rule::price_missing,
                                                        check_rule::not_purchasable,
                                                        check_rule::not_evaluable,
                                                        check_rule::constraint_violated,
                                                        check_rule::does_not_fit,
                                                        check_rule::headroom_below_policy,
                                                        check_rule::precision_not_native,
                                                        check_rule::deadline_missed,
                                                        check_rule::slo_missed,
                                                        check_rule::over_budget,
                                                        check_rule::overspend,
                                                        check_rule::oversized,
                                                        check_rule::acquisition_mismatch,
                                                        check_rule::price_far_from_catalog,
                                                        check_rule::layout};
    return rules;
}

std::size_t CheckReport::count(FindingSeverity severity) const {
    return static_cast<std::size_t>(std::count_if(
        findings.begin(), findings.end(), [&](const Finding& finding) { return finding.severity == severity; }));
}

std::optional<Precision> runnable_precision(const Workload& workload, const GpuSpec& gpu) {
    if (gpu.supports(workload.precision)) {
        return workload.precision;
    }
    for (const Precision option : {Precision::bf16, Precision::fp16, Precision::fp32}) {
        if (option != workload.precision && gpu.supports(option) &&
            element_bytes(option) >= element_bytes(workload.precision)) {
            return option;
        }
    }
    return std::nullopt;
}

bool meets_every_constraint(const Workload& workload, const ProposalPolicy& policy, const Candidate& candidate) {
    const MemoryEstimate& memory = candidate.memory;
    if (memory.capacity_bytes <= 0 || free_fraction(memory) < policy.memory_headroom_fraction) {
        return false;
    }
    if (candidate.precision_fallback || !meets_target(candidate) || candidate.count > workload.constraints.max_gpus) {
        return false;
    }
    const BudgetSpec& budget = workload.budget;
    if (budget.capex_usd > 0 && candidate.cost.capex_usd > budget.capex_usd) {
        return false;
    }
    return !(budget.monthly_usd > 0 && candidate.cost.monthly_opex_usd > budget.monthly_usd);
}

CheckReport judge_proposal(const Proposal& proposal, const std::vector<HardwareAssessment>& assessments) {
    CheckReport report;
    report.proposal = proposal.name;
    report.file = proposal.file;
    report.policy = proposal.policy;
    if (!proposal.project.workloads.empty()) {
        report.currency = proposal.project.workloads.front().deployment.currency;
    }
    const auto add_role = [&](Role role) {
        const std::string name(to_string(role));
        if (std::find(report.roles.begin(), report.roles.end(), name) == report.roles.end()) {
            report.roles.push_back(name);
        }
    };
    for (const Workload& workload : proposal.project.workloads) {
        add_role(workload.role);
    }
    for (const ProposedHardware& hardware : proposal.hardware) {
        add_role(hardware.role);
    }
    Judge judge(proposal, report);
    judge.missing_roles();
    for (std::size_t index = 0; index < proposal.hardware.size(); ++index) {
        const auto assessment = std::find_if(assessments.begin(), assessments.end(),
                                             [&](const HardwareAssessment& item) { return item.line == index; });
        judge.line(index, assessment == assessments.end() ? nullptr : &*assessment);
    }
    if (proposal.policy.strict) {
        // Strict: a warning is a failure; the message says why it fails.
        for (Finding& finding : report.findings) {
            if (finding.severity == FindingSeverity::warning) {
                finding.severity = FindingSeverity::error;
                finding.message += " [strict: warnings fail]";
            }
        }
    }
    judge.finish();
    return report;
}

}  // namespace gpusel
