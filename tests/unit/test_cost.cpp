#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "cost/cost.hpp"
#include "support/offer_support.hpp"

using gpusel::Acquisition;
using gpusel::CostEstimate;
using gpusel::GpuSpec;
using gpusel::UsageProfile;
using gpusel::Workload;
using gpusel::test::TestPrices;

namespace {
GpuSpec test_gpu() {
    GpuSpec gpu;
    gpu.id = "TEST";
    gpu.power_watts = 400;
    return gpu;
}
const TestPrices prices{10000, 4000, 2000, 2.0, 1.0, 1.4, std::nullopt, std::nullopt};
CostEstimate estimate_cost(const Workload& workload, const GpuSpec& gpu, Acquisition acquisition,
                           const UsageProfile& usage, std::optional<double> unit_price_usd = std::nullopt,
                           const TestPrices& with = prices) {
    return gpusel::test::test_cost(workload, gpu, with, acquisition, usage, unit_price_usd);
}
UsageProfile job(double hours, int gpus) {
    UsageProfile usage;
    usage.gpus = gpus;
    usage.job_seconds = hours * 3600;
    usage.work_units = 100;
    usage.unit = "1M tokens";
    return usage;
}
}  // namespace

TEST_CASE("cost::estimate_cost prices the offer's price for each acquisition", "[cost]") {
    const GpuSpec gpu = test_gpu();
    CHECK(estimate_cost(Workload(), gpu, Acquisition::buy_new, job(10, 1)).unit_price_usd == 10000);
    CHECK(estimate_cost(Workload(), gpu, Acquisition::buy_used, job(10, 1)).unit_price_usd == 4000);
    CHECK(estimate_cost(Workload(), gpu, Acquisition::cloud_on_demand, job(10, 1)).unit_price_usd == 2.0);
    CHECK(estimate_cost(Workload(), gpu, Acquisition::cloud_spot, job(10, 1)).unit_price_usd == 1.0);
    CHECK(estimate_cost(Workload(), gpu, Acquisition::cloud_reserved, job(10, 1)).unit_price_usd == 1.4);
    const CostEstimate cost = estimate_cost(Workload(), gpu, Acquisition::cloud_spot, job(10, 1));
    CHECK(cost.offer.id == "TEST/test");
    CHECK(cost.offer.units == 1);
    CHECK(cost.offer.idle_gpus == 0);
    CHECK(cost.offer.price_per() == "unit-hour");
}

TEST_CASE("cost::is_purchase: bought new or used, not rented", "[cost]") {
    CHECK(gpusel::is_purchase(Acquisition::buy_new));
    CHECK(gpusel::is_purchase(Acquisition::buy_used));
    CHECK_FALSE(gpusel::is_purchase(Acquisition::cloud_on_demand));
    CHECK_FALSE(gpusel::is_purchase(Acquisition::cloud_spot));
    CHECK_FALSE(gpusel::is_purchase(Acquisition::cloud_reserved));
}

TEST_CASE("cost::describe words each acquisition for a reader", "[cost]") {
    CHECK(gpusel::describe(Acquisition::buy_new) == "buy new");
    CHECK(gpusel::describe(Acquisition::buy_used) == "buy used");
    CHECK(gpusel::describe(Acquisition::cloud_on_demand) == "cloud on-demand");
    CHECK(gpusel::describe(Acquisition::cloud_spot) == "cloud spot");
    CHECK(gpusel::describe(Acquisition::cloud_reserved) == "cloud reserved 1y");  // the catalog's 1-year rate
}

TEST_CASE("cost::break_even_month: capex over the monthly saving of owning", "[cost]") {
    // $1,000 up front and $100 a month against $300 a month rented: 1000 + 100 m = 300 m at m = 5.
    CHECK(*gpusel::break_even_month(1000, 100, 300) == Approx(5));
    CHECK(*gpusel::break_even_month(10000, 100, 300) == Approx(50));    // beyond a 24-month horizon: still said
    CHECK_FALSE(gpusel::break_even_month(1000, 100, 100).has_value());  // renting costs no more: never
    CHECK_FALSE(gpusel::break_even_month(1000, 100, 0).has_value());
    CHECK_FALSE(gpusel::break_even_month(1000, 100, std::nan("")).has_value());
}

TEST_CASE("cost::expected_failure_fraction follows the 1.8 % / 11 % field rates", "[cost]") {
    CHECK(gpusel::expected_failure_fraction(0) == 0);
    CHECK(gpusel::expected_failure_fraction(12) == Approx(0.018));
    // months 12-18: hazard rises linearly from 0.15 %/month to 1.833 %/month
    CHECK(gpusel::expected_failure_fraction(18) == Approx(0.018 + 0.009 + 0.0505));
    // months 18-24 add the ≈11 % of the source
    CHECK(gpusel::expected_failure_fraction(24) - gpusel::expected_failure_fraction(18) == Approx(0.11));
    CHECK(gpusel::expected_failure_fraction(1000) == 1.0);
}

TEST_CASE("cost::residual_value_fraction loses 55 % in two years", "[cost]") {
    CHECK(gpusel::residual_value_fraction(0) == 1.0);
    CHECK(gpusel::residual_value_fraction(24) == Approx(0.45));
    CHECK(gpusel::residual_value_fraction(12) == Approx(0.670820393));
}

TEST_CASE("cost::estimate_cost of buying four GPUs for 24 months", "[cost]") {
    const Workload workload;  // defaults: 24 months, 70 % busy, $0.12/kWh, PUE 1.4, $150/GPU-month
    const CostEstimate cost = estimate_cost(workload, test_gpu(), Acquisition::buy_new, job(10, 4));
    REQUIRE(cost.available);
    CHECK(cost.spare_gpus == 0);  // spares only beyond 24 months
    CHECK(cost.capex_usd == Approx(48000));
    // The test host publishes no power: the system draws 1.82 × the boards (data/cost.yaml
    // system_power). 4 × 0.4 kW × 1.82 × (24 × 730.5 h × 0.7) × 1.4 = 50,032.12 kWh at $0.12.
    CHECK(cost.system_power_watts == Approx(4 * 400 * 1.82));
    CHECK(cost.energy_kwh == Approx(50032.12032));
    CHECK(cost.breakdown.power_usd == Approx(6003.8544384));
    CHECK(cost.breakdown.operations_usd == Approx(14400));
    // 4 × 18.75 % fail within 24 months, all inside the 3-year warranty: no replacement bought.
    CHECK(cost.warranty_months == 36);
    CHECK(cost.breakdown.failures_usd == 0);
    CHECK(cost.breakdown.resale_usd == Approx(18000));  // 4 × $10,000 × 0.45, reported
    CHECK_FALSE(cost.resale_counted);                   // ... and not subtracted by default
    CHECK(cost.tco_usd == Approx(48000 + 6003.8544384 + 14400));
    CHECK(cost.tco_usd >= cost.capex_usd);
    CHECK(cost.monthly_opex_usd == Approx((6003.8544384 + 14400) / 24));
    CHECK(cost.usd_per_unit == Approx(684.038544384));
    // $48,000 straight-line over the 60-month asset life (data/cost.yaml), not the 24-month
    // horizon: $800 a month, and 48,000 x (1 - 24/60) = $28,800 of book value at the horizon.
    CHECK(cost.depreciation_months == 60);
    CHECK(cost.depreciation_usd_per_month == Approx(800));
    CHECK(cost.book_value_at_horizon_usd == Approx(28800));
    // Counting resale (deployment.count_resale) subtracts it from the TCO; the books do not move.
    Workload with_resale = workload;
    with_resale.deployment.count_resale = true;
    const CostEstimate counted = estimate_cost(with_resale, test_gpu(), Acquisition::buy_new, job(10, 4));
    CHECK(counted.resale_counted);
    CHECK(counted.tco_usd == Approx(48000 + 6003.8544384 + 14400 - 18000));
    CHECK(counted.depreciation_usd_per_month == Approx(800));
    // deployment.asset_life: 18 months, shorter than the horizon: $2,666.67 a month, nothing left.
    Workload short_life = workload;
    short_life.deployment.asset_life_months = 18;
    const CostEstimate written_off = estimate_cost(short_life, test_gpu(), Acquisition::buy_new, job(10, 4));
    CHECK(written_off.depreciation_usd_per_month == Approx(48000.0 / 18));
    CHECK(written_off.book_value_at_horizon_usd == 0);
    // Used cards have no warranty: 4 × 18.75 % × $4,000 replacements.
    const CostEstimate used = estimate_cost(workload, test_gpu(), Acquisition::buy_used, job(10, 4));
    CHECK(used.warranty_months == 0);
    CHECK(used.breakdown.failures_usd == Approx(3000));
    // A 10-hour job rents for $80 in all: owning never catches up.
    CHECK(cost.cloud_equivalent_usd == Approx(80));
    CHECK_FALSE(cost.break_even_month.has_value());
}

TEST_CASE("cost::estimate_cost break-even of a service against renting on demand", "[cost]") {
    const Workload workload;
    UsageProfile service = job(0, 4);
    service.service = true;
    const CostEstimate cost = estimate_cost(workload, test_gpu(), Acquisition::buy_new, service);
    // Renting 4 GPUs for a service bills every hour: 4 × 24 × 730.5 h at $2 = $140,256, i.e. $5,844
    // a month; owning runs $850.16 a month (no failures inside the warranty) after $48,000 capex.
    CHECK(cost.cloud_equivalent_usd == Approx(140256));
    REQUIRE(cost.break_even_month.has_value());
    CHECK(*cost.break_even_month == Approx(48000.0 / (5844 - 850.1606016)));
}

TEST_CASE("cost::estimate_cost adds 15 % spares beyond 24 months", "[cost]") {
    Workload workload;
    workload.deployment.horizon_months = 36;
    const CostEstimate cost = estimate_cost(workload, test_gpu(), Acquisition::buy_new, job(10, 8));
    CHECK(cost.spare_gpus == 1);  // round(0.15 × 8)
    CHECK(cost.capex_usd == Approx(8 * 12000 + 1 * 10000));
    // expected failures 8 × 40.75 % = 3.26 GPUs, all inside the 36-month warranty
    CHECK(gpusel::expected_failure_fraction(36) == Approx(0.4075));
    CHECK(cost.breakdown.failures_usd == 0);
    // Over 48 months, 8 × (F(48) − F(36)) = 8 × 12 × 11 %/6 = 1.76 fail after the warranty; one
    // spare covers one of them.
    workload.deployment.horizon_months = 48;
    CHECK(estimate_cost(workload, test_gpu(), Acquisition::buy_new, job(10, 8)).breakdown.failures_usd ==
          Approx((1.76 - 1) * 10000));
    const CostEstimate single = estimate_cost(workload, test_gpu(), Acquisition::buy_new, job(10, 1));
    CHECK(single.spare_gpus == 0);  // round(0.15): no spare for one GPU
}

TEST_CASE("cost::estimate_cost of renting", "[cost]") {
    const Workload workload;
    const CostEstimate on_demand = estimate_cost(workload, test_gpu(), Acquisition::cloud_on_demand, job(10, 4));
    CHECK(on_demand.capex_usd == 0);
    CHECK(on_demand.breakdown.rental_usd == Approx(80));                // 4 GPUs × 10 h × $2
    CHECK(on_demand.breakdown.hidden_usd == Approx(4.0 / 60 * 4 * 2));  // 4 min start-up per launch
    CHECK(on_demand.tco_usd == Approx(80 + 4.0 / 60 * 4 * 2));
    const CostEstimate spot = estimate_cost(workload, test_gpu(), Acquisition::cloud_spot, job(10, 4));
    CHECK(spot.breakdown.rental_usd == Approx(44));  // 10 % extra runtime for interruptions
    const CostEstimate reserved = estimate_cost(workload, test_gpu(), Acquisition::cloud_reserved, job(10, 4));
    CHECK(reserved.breakdown.rental_usd == Approx(24 * 730.5 * 4 * 1.4));  // billed for the whole term
    CHECK(reserved.billed_months == 24);   // the 24-month horizon is two whole 1-year terms
    CHECK(on_demand.billed_months == 24);  // the horizon: the rent is spread over it
    const CostEstimate quoted =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_on_demand, job(10, 4), std::optional<double>(1.5));
    CHECK(quoted.unit_price_usd == 1.5);
}

TEST_CASE("cost::estimate_cost refuses spot for a service", "[cost]") {
    const Workload workload;
    const GpuSpec gpu = test_gpu();
    UsageProfile service = job(0, 2);
    service.service = true;
    const CostEstimate spot = estimate_cost(workload, gpu, Acquisition::cloud_spot, service);
    CHECK_FALSE(spot.available);
    CHECK(spot.unavailable_reason == "spot capacity can be reclaimed at short notice; not for serving");
}

TEST_CASE("cost: owned power is the system's, hosts, NICs and fans included", "[cost][money]") {
    const Workload workload;  // 24 months x 730.5 h x 0.7 busy = 12,272.4 h; PUE 1.4; $0.12/kWh
    const double busy_hours = 24 * 730.5 * 0.7;
    GpuSpec gpu = test_gpu();  // 400 W boards
    // Cards in hosts that publish their draw: 4 one-slot hosts of 300 W beside 4 x 400 W boards.
    auto carded = *gpusel::test::test_quote(gpu, prices, Acquisition::buy_new);
    gpusel::HostOffer host = *carded.host;
    host.power_watts = 300;
    carded.host = &host;
    const CostEstimate cards = gpusel::estimate_cost(workload, gpu, carded, job(10, 4));
    CHECK(cards.offer.hosts == 4);
    CHECK(cards.system_power_watts == Approx(4 * 400 + 4 * 300));
    CHECK(cards.energy_kwh == Approx(2.8 * busy_hours * 1.4));
    CHECK(cards.breakdown.power_usd == Approx(2.8 * busy_hours * 1.4 * 0.12));
    CHECK(cards.notes.empty());
    // A server with a published system power: 5 GPUs in service need one 8-GPU server, whose
    // 6,000 W all count (its 3 idle GPUs and fans run too).
    auto served = *gpusel::test::test_quote(gpu, prices, Acquisition::buy_new, 8);
    gpusel::Offer server = *served.offer;
    server.form = gpusel::UnitForm::server;
    server.needs_host.clear();
    server.system_power_watts = 6000;
    served.offer = &server;
    served.host = nullptr;
    const CostEstimate published = gpusel::estimate_cost(workload, gpu, served, job(10, 5));
    CHECK(published.system_power_watts == Approx(6000));
    CHECK(published.energy_kwh == Approx(6.0 * busy_hours * 1.4));
    // Two servers for 9 GPUs; a spare server on the shelf (36 months: round(15 % x 2) = 0; at 7
    // servers one spare) draws nothing.
    Workload longer = workload;
    longer.deployment.horizon_months = 36;
    const CostEstimate seven = gpusel::estimate_cost(longer, gpu, served, job(10, 56));
    CHECK(seven.spare_units == 1);
    CHECK(seven.system_power_watts == Approx(7 * 6000));
    // Without the figure: 1.82 x the boards (DGX H100: 10.2 kW / 5.6 kW), and a note says so.
    server.system_power_watts = 0;
    const CostEstimate estimated = gpusel::estimate_cost(workload, gpu, served, job(10, 5));
    CHECK(estimated.system_power_watts == Approx(8 * 400 * 1.82));
    REQUIRE(estimated.notes.size() == 2);  // the estimate and the 3 idle GPUs
    CHECK(estimated.notes[0] ==
          "system power estimated: 1.82 × the GPUs' board power (no published figure for the "
          "system)");
    // A self-contained module draws its board power alone; a rental carries none (the rent pays it).
    auto module_quote = *gpusel::test::test_quote(gpu, prices, Acquisition::buy_new);
    gpusel::Offer module = *module_quote.offer;
    module.form = gpusel::UnitForm::module;
    module.needs_host.clear();
    module_quote.offer = &module;
    module_quote.host = nullptr;
    CHECK(gpusel::estimate_cost(workload, gpu, module_quote, job(10, 1)).system_power_watts == Approx(400));
    CHECK(estimate_cost(workload, gpu, Acquisition::cloud_on_demand, job(10, 4)).system_power_watts == 0);
}

TEST_CASE("cost::horizon_strategy", "[cost]") {
    CHECK(gpusel::horizon_strategy(3) == "under 6 months: rent");
    CHECK(gpusel::horizon_strategy(12) == "6-24 months: own the base load, rent peaks");
    CHECK(gpusel::horizon_strategy(36) == "over 24 months: own, with hardware-independent serving");
}

TEST_CASE("cost::estimate_cost buys and rents whole units of the offer", "[cost][offers]") {
    const Workload workload;  // 24 months: no spares
    const GpuSpec gpu = test_gpu();
    // An 8-GPU server at $80,000 with a host of $16,000 (2,000 per slot): 5 GPUs need one server,
    // 3 of its GPUs idle; power and operations are paid for all 8 owned.
    const auto server = gpusel::test::test_quote(gpu, prices, Acquisition::buy_new, 8);
    REQUIRE(server);
    gpusel::Offer offer = *server->offer;
    offer.price->usd = 80000;
    gpusel::OfferQuote quote = *server;
    quote.offer = &offer;
    quote.price.usd = 80000;
    const CostEstimate bought = gpusel::estimate_cost(workload, gpu, quote, job(10, 5));
    CHECK(bought.offer.units == 1);
    CHECK(bought.offer.gpus_per_unit == 8);
    CHECK(bought.offer.idle_gpus == 3);
    CHECK(bought.offer.hosts == 1);
    CHECK(bought.capex_usd == Approx(80000 + 16000));
    CHECK(bought.breakdown.operations_usd == Approx(8 * 150 * 24));
    CHECK(bought.energy_kwh == Approx(8 * 0.4 * 1.82 * 24 * 730.5 * 0.7 * 1.4));
    CHECK(bought.breakdown.failures_usd == 0);  // inside the 3-year warranty
    // 9 GPUs: two servers.
    CHECK(gpusel::estimate_cost(workload, gpu, quote, job(10, 9)).capex_usd == Approx(2 * 96000));
    // An 8-GPU instance at $16/h: 4 GPUs for 10 h rent one instance for 10 h.
    auto instance = *gpusel::test::test_quote(gpu, prices, Acquisition::cloud_on_demand, 8);
    instance.price.usd = 16;
    const CostEstimate rented = gpusel::estimate_cost(workload, gpu, instance, job(10, 4));
    CHECK(rented.offer.units == 1);
    CHECK(rented.offer.idle_gpus == 4);
    CHECK(rented.breakdown.rental_usd == Approx(160));
    CHECK(rented.offer.order == "1 × test.1gpu (8 × TEST), Test, on-demand $16.00/h");
}

TEST_CASE("cost: rented serving capacity is billed for every provisioned hour", "[cost][money]") {
    Workload workload;  // 24 months = 17,532 h; utilization 0.7
    const GpuSpec gpu = test_gpu();
    UsageProfile service = job(0, 4);
    service.service = true;
    service.average_utilization = 0.7;
    // Around the clock: 4 × 17,532 h × $2, not 70 % of it.
    CHECK(estimate_cost(workload, gpu, Acquisition::cloud_on_demand, service).breakdown.rental_usd ==
          Approx(4 * 17532.0 * 2));
    // deployment.autoscale: the busy share of the hours ...
    workload.deployment.autoscale = true;
    CHECK(estimate_cost(workload, gpu, Acquisition::cloud_on_demand, service).breakdown.rental_usd ==
          Approx(4 * 17532.0 * 0.7 * 2));
    // ... but never fewer GPUs than min_replicas keep: 4 of 4 always on.
    service.min_gpus = 4;
    CHECK(estimate_cost(workload, gpu, Acquisition::cloud_on_demand, service).breakdown.rental_usd ==
          Approx(4 * 17532.0 * 2));
    // A training run is billed for its runs only.
    CHECK(estimate_cost(workload, gpu, Acquisition::cloud_on_demand, job(10, 4)).breakdown.rental_usd == Approx(80));
}

TEST_CASE("cost: a desk-side box pays neither data-centre PUE nor operations", "[cost][money]") {
    Workload workload;  // development and training may run in an office
    workload.role = gpusel::Role::development;
    GpuSpec gpu = test_gpu();
    auto quote = *gpusel::test::test_quote(gpu, prices, Acquisition::buy_new);
    gpusel::Offer desk = *quote.offer;
    desk.sites = {gpusel::Site::office};
    quote.offer = &desk;
    const CostEstimate cost = gpusel::estimate_cost(workload, gpu, quote, job(10, 1));
    CHECK(cost.site == gpusel::Site::office);
    CHECK(cost.breakdown.operations_usd == 0);
    CHECK(cost.energy_kwh == Approx(0.4 * 1.82 * 17532 * 0.7 * 1.0));  // PUE 1.0, not 1.4
    // Set in the file, they apply anyway.
    workload.deployment.ops_given = true;
    CHECK(gpusel::estimate_cost(workload, gpu, quote, job(10, 1)).breakdown.operations_usd == Approx(150 * 24));
    // The same box serving production is in a data centre: 150 × 24 and PUE 1.4.
    Workload serving;
    serving.role = gpusel::Role::inference;
    desk.sites = {gpusel::Site::datacenter, gpusel::Site::office};
    const CostEstimate served = gpusel::estimate_cost(serving, gpu, quote, job(10, 1));
    CHECK(served.site == gpusel::Site::datacenter);
    CHECK(served.breakdown.operations_usd == Approx(150 * 24));
}

TEST_CASE("cost: seats buy one box per engineer", "[cost][money]") {
    Workload workload;
    UsageProfile usage = job(10, 1);
    usage.seats = 6;
    const CostEstimate cost = estimate_cost(workload, test_gpu(), Acquisition::buy_new, usage);
    CHECK(cost.offer.units == 6);
    CHECK(cost.offer.hosts == 6);
    CHECK(cost.capex_usd == Approx(6 * (10000 + 2000)));
    CHECK(cost.breakdown.operations_usd == Approx(6 * 150 * 24));
}

TEST_CASE("cost: warranty terms by product class", "[cost][money]") {
    gpusel::Offer offer;
    GpuSpec gpu = test_gpu();
    gpu.segment = gpusel::Segment::datacenter;
    CHECK(gpusel::warranty_months(gpu, offer) == 36);
    gpu.segment = gpusel::Segment::workstation;
    CHECK(gpusel::warranty_months(gpu, offer) == 36);
    gpu.segment = gpusel::Segment::consumer;
    CHECK(gpusel::warranty_months(gpu, offer) == 24);
    gpu.segment = gpusel::Segment::edge;
    CHECK(gpusel::warranty_months(gpu, offer) == 12);
    offer.condition = gpusel::UnitCondition::used;
    CHECK(gpusel::warranty_months(gpu, offer) == 0);
}

TEST_CASE("cost: a 3-year reservation bills whole 36-month terms", "[cost][money][commitment]") {
    gpusel::test::TestPrices with = prices;
    with.reserved_3y_usd_per_hour = 1.2;
    Workload workload;  // 24-month horizon
    const CostEstimate reserved =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_reserved_3y, job(10, 4), std::nullopt, with);
    REQUIRE(reserved.available);
    CHECK(reserved.unit_price_usd == 1.2);
    // A 24-month project still pays one whole 3-year term: 36 × 730.5 h × 4 GPUs × $1.2.
    CHECK(reserved.billed_months == 36);
    CHECK(reserved.breakdown.rental_usd == Approx(36 * 730.5 * 4 * 1.2));  // $126,230.40
    CHECK(reserved.breakdown.hidden_usd == Approx(4.0 / 60 * 4 * 1.2));    // start-up, as on demand
    CHECK(reserved.tco_usd == Approx(126230.4 + 0.32));
    CHECK(reserved.capex_usd == 0);
    CHECK(std::find(reserved.notes.begin(), reserved.notes.end(),
                    "reserved for 36 months, billed whether used or not") != reserved.notes.end());
    CHECK(reserved.offer.order == "4 × test.1gpu (4 × TEST), Test, reserved 3y $1.20/h");
    // 40 months need two terms: 72 months billed.
    workload.deployment.horizon_months = 40;
    const CostEstimate longer =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_reserved_3y, job(10, 4), std::nullopt, with);
    CHECK(longer.billed_months == 72);
    CHECK(longer.breakdown.rental_usd == Approx(72 * 730.5 * 4 * 1.2));
    // The 1-year term is unchanged: the 24-month horizon is two whole years at $1.4.
    const CostEstimate one_year =
        estimate_cost(Workload(), test_gpu(), Acquisition::cloud_reserved, job(10, 4), std::nullopt, with);
    CHECK(one_year.billed_months == 24);
    CHECK(one_year.breakdown.rental_usd == Approx(24 * 730.5 * 4 * 1.4));
    CHECK(gpusel::describe(Acquisition::cloud_reserved_3y) == "cloud reserved 3y");
    CHECK(gpusel::to_string(Acquisition::cloud_reserved_3y) == "cloud-reserved-3y");
    CHECK(gpusel::to_string(Acquisition::cloud_reserved) == "cloud-reserved");  // unchanged
}

TEST_CASE("cost::capacity_block_days: whole days to 14, then weeks, at most 182", "[cost][money][commitment]") {
    CHECK(gpusel::capacity_block_days(1) == 1);
    CHECK(gpusel::capacity_block_days(24) == 1);
    CHECK(gpusel::capacity_block_days(24.01) == 2);
    CHECK(gpusel::capacity_block_days(14 * 24) == 14);
    CHECK(gpusel::capacity_block_days(14 * 24 + 1) == 21);  // 15 days → 14 + one 7-day step
    CHECK(gpusel::capacity_block_days(22 * 24) == 28);      // 22 days → 14 + two steps
    CHECK(gpusel::capacity_block_days(182 * 24) == 182);    // 14 + 24 × 7
    CHECK(gpusel::capacity_block_days(182 * 24 + 1) == 0);  // longer than any block
}

TEST_CASE("cost: a capacity block is booked in whole days for a job of known length", "[cost][money][commitment]") {
    gpusel::test::TestPrices with = prices;
    with.capacity_block_usd_per_hour = 3.0;
    const Workload workload;
    // 50 h of runs + 4 min start-up = 50.07 h → a 3-day block: 72 h × 4 instances × $3 = $864,
    // with no start-up billed on top (it runs inside the paid block).
    const CostEstimate block =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_capacity_block, job(50, 4), std::nullopt, with);
    REQUIRE(block.available);
    CHECK(block.breakdown.rental_usd == Approx(864));
    CHECK(block.breakdown.hidden_usd == 0);
    CHECK(block.tco_usd == Approx(864));
    CHECK(block.capex_usd == 0);
    CHECK(block.notes.front() ==
          "capacity block of 3 days × 4 instances, paid in full at booking, not cancellable; unused hours are not "
          "refunded");
    CHECK(block.offer.order == "4 × test.1gpu (4 × TEST), Test, capacity block $3.00/h");
    // 15 days of runs → a 21-day block: 21 × 24 × 4 × $3 = $6,048.
    const CostEstimate weeks =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_capacity_block, job(15 * 24, 4), std::nullopt, with);
    CHECK(weeks.breakdown.rental_usd == Approx(6048));
    // Longer than 182 days, more than 64 instances, or a service: no block.
    const CostEstimate too_long =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_capacity_block, job(200 * 24, 4), std::nullopt, with);
    CHECK_FALSE(too_long.available);
    CHECK(too_long.unavailable_reason == "the job's 201 days exceed the longest capacity block (182 days)");
    const CostEstimate too_wide =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_capacity_block, job(50, 65), std::nullopt, with);
    CHECK_FALSE(too_wide.available);
    CHECK(too_wide.unavailable_reason == "65 instances exceed one capacity block's 64");
    UsageProfile service = job(0, 2);
    service.service = true;
    const CostEstimate serving =
        estimate_cost(workload, test_gpu(), Acquisition::cloud_capacity_block, service, std::nullopt, with);
    CHECK_FALSE(serving.available);
    CHECK(serving.unavailable_reason ==
          "a capacity block is booked for a known length: a training job with a dataset size");
    CHECK(gpusel::to_string(Acquisition::cloud_capacity_block) == "cloud-capacity-block");
    CHECK(gpusel::describe(Acquisition::cloud_capacity_block) == "cloud capacity block");
}
