// Order lines and cash flow (plan.hpp order_lines, cash_flow): one unit per column, the lines
// adding up to the role's TCO, the months adding up to it too. Expectations worked out by hand
// from tests/support/plan_fixture.hpp.

#include <numeric>

#include <catch2/catch.hpp>

#include "plan/plan.hpp"
#include "support/plan_fixture.hpp"

using gpusel::CashFlowMonth;
using gpusel::OrderItem;
using gpusel::OrderLine;
using gpusel::PriceKind;
using gpusel::ProcurementLine;

namespace {

ProcurementLine fixture_purchase() {
    return gpusel::test::fixture_plan_report().procurement.at(1);
}

ProcurementLine fixture_rental() {
    return gpusel::test::fixture_plan_report().procurement.at(0);
}

double net_sum(const std::vector<CashFlowMonth>& months) {
    return std::accumulate(months.begin(), months.end(), 0.0,
                           [](double sum, const CashFlowMonth& month) { return sum + month.net_usd; });
}

}  // namespace

TEST_CASE("order lines: cards and the estimated hosts they need are two lines, each with its price kind",
          "[plan][order]") {
    const std::vector<OrderLine> lines = gpusel::order_lines(fixture_purchase());
    REQUIRE(lines.size() == 2);
    const OrderLine& cards = lines[0];
    CHECK(cards.item == OrderItem::gpus);
    CHECK(cards.quantity_units == 12);
    CHECK(cards.gpus == 12);
    CHECK(cards.gpus_per_unit == 1);
    CHECK(cards.unit_price_usd == 7500);
    CHECK(cards.price_per == "unit");
    CHECK(cards.price_kind == PriceKind::street);
    CHECK(cards.capex_usd == 90000);  // 12 × $7,500
    CHECK(cards.opex_usd_per_month == Approx(1234.567));
    CHECK(cards.rent_usd == 0);
    CHECK(cards.resale_usd == 40500);
    CHECK(cards.resale_subtracted_usd == 0);  // not counted
    // $125,630.108 − the hosts' $6,000.50 = $90,000 + 24 × $1,234.567.
    CHECK(cards.tco_usd == Approx(119629.608).margin(1e-6));
    CHECK(cards.tco_usd == Approx(cards.capex_usd + cards.opex_usd_per_month * 24).margin(1e-6));
    CHECK(cards.depreciation_usd_per_month == Approx(3750));  // $90,000 over 24 months
    const OrderLine& hosts = lines[1];
    CHECK(hosts.item == OrderItem::host);
    CHECK(hosts.name == "8-slot PCIe server");
    CHECK(hosts.quantity_units == 2);
    CHECK(hosts.gpus == 0);
    CHECK(hosts.unit_price_usd == 3000.25);
    CHECK(hosts.price_per == "unit");
    CHECK(hosts.price_kind == PriceKind::estimate);  // the host's own kind, not the card's street
    CHECK(hosts.capex_usd == 6000.5);
    CHECK(hosts.tco_usd == 6000.5);
    CHECK(hosts.opex_usd_per_month == 0);
    CHECK(hosts.resale_usd == 0);
    CHECK(cards.tco_usd + hosts.tco_usd == Approx(125630.108));
}

TEST_CASE("order lines: a rental is one line priced per unit-hour, all of it rent", "[plan][order]") {
    const std::vector<OrderLine> lines = gpusel::order_lines(fixture_rental());
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].price_per == "unit-hour");
    CHECK(lines[0].quantity_units == 4);
    CHECK(lines[0].gpus == 4);
    CHECK(lines[0].capex_usd == 0);
    CHECK(lines[0].opex_usd_per_month == 0);
    CHECK(lines[0].rent_usd == 3950);
    CHECK(lines[0].tco_usd == 3950);
}

TEST_CASE("order lines: counted resale is subtracted on the GPU line", "[plan][order]") {
    ProcurementLine line = fixture_purchase();
    line.resale_counted = true;
    line.tco_usd -= line.resale_usd;  // as the cost model does when counted
    const OrderLine cards = gpusel::order_lines(line)[0];
    CHECK(cards.resale_subtracted_usd == 40500);
    CHECK(cards.tco_usd == Approx(119629.608 - 40500).margin(1e-6));
}

TEST_CASE("cash flow: capex at delivery, opex each month, resale as a memo unless counted", "[plan][order]") {
    const ProcurementLine line = fixture_purchase();
    const std::vector<CashFlowMonth> months = gpusel::cash_flow(line);
    REQUIRE(months.size() == 25);  // month 0 and 24 months
    CHECK(months[0].capex_usd == 96000.5);
    CHECK(months[0].opex_usd == 0);
    CHECK(months[1].capex_usd == 0);
    CHECK(months[1].opex_usd == Approx(1234.567));
    CHECK(months[24].opex_usd == Approx(1234.567));
    CHECK(months[24].resale_usd == 0);
    CHECK(months[24].resale_not_counted_usd == 40500);
    CHECK(net_sum(months) == Approx(125630.108));

    ProcurementLine counted = line;
    counted.resale_counted = true;
    counted.tco_usd -= counted.resale_usd;
    const std::vector<CashFlowMonth> with_resale = gpusel::cash_flow(counted);
    CHECK(with_resale[24].resale_usd == 40500);
    CHECK(with_resale[24].resale_not_counted_usd == 0);
    CHECK(with_resale[24].net_usd == Approx(1234.567 - 40500));
    CHECK(net_sum(with_resale) == Approx(counted.tco_usd));
}

TEST_CASE("cash flow: a fractional horizon bills its last month's share", "[plan][order]") {
    ProcurementLine line = fixture_purchase();
    line.horizon_months = 18.5;
    line.tco_usd = 96000.5 + 1234.567 * 18.5;
    const std::vector<CashFlowMonth> months = gpusel::cash_flow(line);
    REQUIRE(months.size() == 20);  // months 0 to 19
    CHECK(months[18].opex_usd == Approx(1234.567));
    CHECK(months[19].opex_usd == Approx(1234.567 / 2));
    CHECK(months[19].resale_not_counted_usd == 40500);
    CHECK(net_sum(months) == Approx(line.tco_usd));
}

TEST_CASE("cash flow: rent over the horizon, a reserved term over every month it bills", "[plan][order]") {
    const std::vector<CashFlowMonth> on_demand = gpusel::cash_flow(fixture_rental());
    REQUIRE(on_demand.size() == 25);
    CHECK(on_demand[0].net_usd == 0);
    CHECK(on_demand[1].rent_usd == Approx(3950.0 / 24));
    CHECK(net_sum(on_demand) == Approx(3950));

    // 18 months on a 1-year term: 24 months billed at $1,000, and $180 of start-up and transfer
    // over the 18 months of use.
    ProcurementLine reserved = fixture_rental();
    reserved.acquisition = gpusel::Acquisition::cloud_reserved;
    reserved.horizon_months = 18;
    reserved.billed_months = 24;
    reserved.rental_extras_usd = 180;
    reserved.tco_usd = 24 * 1000 + 180;
    const std::vector<CashFlowMonth> months = gpusel::cash_flow(reserved);
    REQUIRE(months.size() == 25);
    CHECK(months[1].rent_usd == Approx(1010));
    CHECK(months[18].rent_usd == Approx(1010));
    CHECK(months[19].rent_usd == Approx(1000));
    CHECK(months[24].rent_usd == Approx(1000));
    CHECK(net_sum(months) == Approx(24180));
}

TEST_CASE("cash flow: a 3-year term bills every month of it, past a 24-month horizon", "[plan][order][commitment]") {
    // 24 months on a 3-year term at $1,000 a month: 36 months billed, $240 of start-up and
    // transfer over the 24 months of use.
    ProcurementLine reserved = fixture_rental();
    reserved.acquisition = gpusel::Acquisition::cloud_reserved_3y;
    reserved.horizon_months = 24;
    reserved.billed_months = 36;
    reserved.rental_extras_usd = 240;
    reserved.tco_usd = 36 * 1000 + 240;
    const std::vector<CashFlowMonth> months = gpusel::cash_flow(reserved);
    REQUIRE(months.size() == 37);  // months 0 to 36
    CHECK(months[0].net_usd == 0);
    CHECK(months[1].rent_usd == Approx(1010));
    CHECK(months[24].rent_usd == Approx(1010));
    CHECK(months[25].rent_usd == Approx(1000));  // the commitment past the horizon
    CHECK(months[36].rent_usd == Approx(1000));
    CHECK(net_sum(months) == Approx(36240));
}

TEST_CASE("cash flow: a capacity block is paid in full at booking", "[plan][order][commitment]") {
    // A $864 block and $24 of data transfer over a 24-month horizon.
    ProcurementLine block = fixture_rental();
    block.acquisition = gpusel::Acquisition::cloud_capacity_block;
    block.horizon_months = 24;
    block.billed_months = 24;
    block.rental_extras_usd = 24;
    block.tco_usd = 864 + 24;
    const std::vector<CashFlowMonth> months = gpusel::cash_flow(block);
    REQUIRE(months.size() == 25);
    CHECK(months[0].rent_usd == Approx(864));
    CHECK(months[0].capex_usd == 0);
    CHECK(months[1].rent_usd == Approx(1));
    CHECK(months[24].rent_usd == Approx(1));
    CHECK(net_sum(months) == Approx(888));
}
