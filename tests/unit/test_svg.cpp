#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "report/svg.hpp"

using namespace gpusel::svg;

namespace {

constexpr double nan_value = std::numeric_limits<double>::quiet_NaN();

// True when `step` is 1, 2 or 5 × 10^k.
bool is_nice(double step) {
    const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-12));
    return std::fabs(mantissa - 1) < 1e-9 || std::fabs(mantissa - 2) < 1e-9 || std::fabs(mantissa - 5) < 1e-9;
}

// CIE L* (0..100) of a colour, from its relative luminance.
double lightness(const std::string& colour) {
    const double y = relative_luminance(colour);
    return y > 0.008856 ? 116 * std::cbrt(y) - 16 : 903.3 * y;
}

// A small XML well-formedness check: every start tag closed in order, no stray '<' or '&' in
// text (what an HTML parser would silently repair but an SVG viewer would reject).
std::string tag_balance_error(const std::string& xml) {
    std::vector<std::string> open;
    std::size_t i = 0;
    while (i < xml.size()) {
        if (xml[i] == '&') {
            const std::size_t end = xml.find(';', i);
            const std::string entity = xml.substr(i, end == std::string::npos ? 8 : end - i + 1);
            static const std::set<std::string> known = {"&amp;", "&lt;", "&gt;", "&quot;", "&#39;"};
            if (known.count(entity) == 0) {
                return "bad entity at " + std::to_string(i) + ": " + entity;
            }
            i = end + 1;
            continue;
        }
        if (xml[i] != '<') {
            ++i;
            continue;
        }
        const std::size_t end = xml.find('>', i);
        if (end == std::string::npos) {
            return "unterminated tag at " + std::to_string(i);
        }
        const std::string tag = xml.substr(i + 1, end - i - 1);
        if (tag.find('<') != std::string::npos) {
            return "'<' inside a tag at " + std::to_string(i);
        }
        if (tag.front() == '/') {
            const std::string name = tag.substr(1);
            if (open.empty() || open.back() != name) {
                return "unexpected </" + name + "> at " + std::to_string(i);
            }
            open.pop_back();
        } else if (tag.back() != '/') {
            open.push_back(tag.substr(0, tag.find_first_of(" \n")));
        }
        i = end + 1;
    }
    return open.empty() ? "" : "unclosed <" + open.back() + ">";
}

std::vector<double> attribute_values(const std::string& svg, const std::string& name) {
    std::vector<double> values;
    const std::regex pattern(name + "=\"([-0-9.]+)\"");
    for (auto it = std::sregex_iterator(svg.begin(), svg.end(), pattern); it != std::sregex_iterator(); ++it) {
        values.push_back(std::stod((*it)[1].str()));
    }
    return values;
}

ScatterSpec sample_scatter(Scale x_scale, Scale y_scale) {
    ScatterSpec spec;
    spec.id_prefix = "s1";
    spec.title = "Latency vs throughput <batch 32> & more";
    spec.x_axis = {"P99 time per output token (ms)", x_scale, "", false};
    spec.y_axis = {"Output tokens/s", y_scale, "", true};
    spec.series = {"buy", "rent"};
    spec.minimise_x = true;
    spec.minimise_y = false;
    spec.points = {
        {12.5, 41000, "H100-SXM5 × 8", 0}, {31, 9000, "L40S × 4", 0},        {48, 3100, "A10 × 6", 1},
        {19, 22000, "A100-80GB × 4", 0},   {75, 2900, "T4 <16 GB> & co", 1}, {nan_value, 100, "lost", 0},
        {22, 21000, "H100-PCIe × 2", 1},   {9.1, 12000, "B200 × 1", 0},
    };
    spec.x_references = {{50, "SLO: P99 TPOT ≤ 50 ms"}};
    return spec;
}

}  // namespace

TEST_CASE("svg::linear_ticks are nice, monotone and cover the data", "[svg]") {
    CHECK(linear_ticks(0, 97, 6) == std::vector<double>{0, 20, 40, 60, 80, 100});
    CHECK(nice_step(0.013, 0.087, 5) == Approx(0.02));
    CHECK(linear_ticks(-37, 12, 5) == std::vector<double>{-40, -20, 0, 20});
    CHECK(linear_ticks(0, 24, 9) == std::vector<double>{0, 5, 10, 15, 20, 25});
    CHECK(linear_ticks(5, 5, 6) == std::vector<double>{0, 2, 4, 6, 8, 10});  // widened to [0, 10]

    struct Range {
        double low, high;
        int max_ticks;
    };
    const Range range = GENERATE(Range{0, 1, 5}, Range{0.013, 0.087, 5}, Range{3, 7, 6}, Range{-37, 12, 5},
                                 Range{1234, 98765, 6}, Range{0, 2.4e12, 7}, Range{1e-6, 3e-6, 4},
                                 Range{99.5, 100.5, 5}, Range{0, 0.7, 3}, Range{-5e9, -1e9, 8});
    INFO("range " << range.low << " .. " << range.high << ", at most " << range.max_ticks << " ticks");
    const std::vector<double> ticks = linear_ticks(range.low, range.high, range.max_ticks);
    REQUIRE(ticks.size() >= 2);
    CHECK(static_cast<int>(ticks.size()) - 1 <= range.max_ticks);
    CHECK(ticks.front() <= range.low);
    CHECK(ticks.back() >= range.high);
    const double step = ticks[1] - ticks[0];
    CHECK(is_nice(step));
    for (std::size_t i = 1; i < ticks.size(); ++i) {
        CHECK(ticks[i] > ticks[i - 1]);
        CHECK(ticks[i] - ticks[i - 1] == Approx(step).epsilon(1e-9));
        CHECK(std::fmod(std::fabs(ticks[i]) / step + 1e-9, 1.0) < 1e-6);  // multiples of the step
    }
}

TEST_CASE("svg::log_ticks are 1-2-5 × 10^k, monotone and cover the data", "[svg]") {
    CHECK(log_ticks(3, 4000) == std::vector<double>{1, 10, 100, 1000, 10000});
    CHECK(log_ticks(15, 180) == std::vector<double>{10, 20, 50, 100, 200});
    CHECK(log_ticks(2, 5) == std::vector<double>{2, 5});
    const std::vector<double> sparse = log_ticks(1e-3, 1e6, 4);
    REQUIRE(sparse.size() == 4);
    CHECK(sparse[0] == Approx(1e-3));
    CHECK(sparse[1] == Approx(1));
    CHECK(sparse[2] == Approx(1e3));
    CHECK(sparse[3] == Approx(1e6));

    const double low = GENERATE(0.0031, 0.9, 1.0, 7.0, 480.0, 1e9);
    const double ratio = GENERATE(1.5, 9.0, 40.0, 1e5);
    const std::vector<double> ticks = log_ticks(low, low * ratio);
    INFO(low << " .. " << low * ratio);
    REQUIRE(ticks.size() >= 2);
    CHECK(ticks.front() <= low * (1 + 1e-9));
    CHECK(ticks.back() >= low * ratio * (1 - 1e-9));
    for (std::size_t i = 0; i < ticks.size(); ++i) {
        CHECK(is_nice(ticks[i]));
        if (i > 0) {
            CHECK(ticks[i] > ticks[i - 1]);
        }
    }
}

TEST_CASE("svg::format_tick gives short labels with k/M/G", "[svg]") {
    CHECK(format_tick(0) == "0");
    CHECK(format_tick(-0.0) == "0");
    CHECK(format_tick(0.05) == "0.05");
    CHECK(format_tick(0.1 + 0.2) == "0.3");
    CHECK(format_tick(2.5) == "2.5");
    CHECK(format_tick(150) == "150");
    CHECK(format_tick(2000) == "2k");
    CHECK(format_tick(12345) == "12.3k");
    CHECK(format_tick(1.5e6) == "1.5M");
    CHECK(format_tick(1e9) == "1G");
    CHECK(format_tick(-2000, "$") == "-$2k");
    CHECK(format_tick(250000, "$") == "$250k");
}

TEST_CASE("svg::AxisMap maps the first tick to the start and the last to the end", "[svg]") {
    AxisSpec linear;
    const AxisMap x = make_axis(linear, {3, 97}, 100, 600, 6);
    CHECK(x.domain_low() == 0);
    CHECK(x.domain_high() == 100);
    CHECK(x.to_pixel(0) == Approx(100));
    CHECK(x.to_pixel(100) == Approx(600));
    CHECK(x.to_pixel(50) == Approx(350));

    AxisSpec log_axis;
    log_axis.scale = Scale::log;
    const AxisMap y = make_axis(log_axis, {2, 7000, -1, nan_value}, 400, 40, 8);  // y: pixels decrease
    CHECK(y.domain_low() == 1);
    CHECK(y.domain_high() == 10000);
    CHECK(y.to_pixel(1) == Approx(400));
    CHECK(y.to_pixel(100) == Approx(220));
    CHECK(y.to_pixel(10000) == Approx(40));
}

TEST_CASE("svg::pareto_front on a hand-made set, all four orientations", "[svg]") {
    // A(1,10) B(2,5) C(3,6) D(4,1) E = B again, F(5,1), G has no x.
    const std::vector<Point> points = {{1, 10}, {2, 5}, {3, 6}, {4, 1}, {2, 5}, {5, 1}, {nan_value, 0}};
    // Both minimised: C is beaten by B, F by D (same y, larger x); B and E are equal, both stay.
    CHECK(pareto_front(points, true, true) == std::vector<std::size_t>{0, 1, 4, 3});
    // Small x, large y: A has the smallest x and the largest y, so it beats everything.
    CHECK(pareto_front(points, true, false) == std::vector<std::size_t>{0});
    // Large x, small y: F has the largest x and the smallest y.
    CHECK(pareto_front(points, false, true) == std::vector<std::size_t>{5});
    // Both maximised: A (y), C (3,6 beats B), F (x); D is beaten by F.
    CHECK(pareto_front(points, false, false) == std::vector<std::size_t>{0, 2, 5});
    CHECK(pareto_front({}, true, true).empty());
    CHECK(pareto_front({{nan_value, nan_value}}, true, true).empty());
}

TEST_CASE("svg::pareto_step_path turns at corners the front dominates", "[svg]") {
    const std::vector<Point> min_min = pareto_step_path({{1, 10}, {2, 5}, {4, 1}}, true);
    REQUIRE(min_min.size() == 5);
    const std::vector<std::pair<double, double>> expected_min = {{1, 10}, {2, 10}, {2, 5}, {4, 5}, {4, 1}};
    for (std::size_t i = 0; i < min_min.size(); ++i) {
        CHECK(min_min[i].x == expected_min[i].first);
        CHECK(min_min[i].y == expected_min[i].second);
    }
    const std::vector<Point> max_max = pareto_step_path({{1, 10}, {3, 6}, {5, 1}}, false);
    const std::vector<std::pair<double, double>> expected_max = {{1, 10}, {1, 6}, {3, 6}, {3, 1}, {5, 1}};
    REQUIRE(max_max.size() == expected_max.size());
    for (std::size_t i = 0; i < max_max.size(); ++i) {
        CHECK(max_max[i].x == expected_max[i].first);
        CHECK(max_max[i].y == expected_max[i].second);
    }
    CHECK(pareto_step_path({{2, 2}}, true).size() == 1);
}

TEST_CASE("svg::series_style colours differ in lightness and markers differ in shape", "[svg]") {
    std::vector<double> lightnesses;
    std::set<int> markers;
    for (std::size_t i = 0; i < 5; ++i) {
        lightnesses.push_back(lightness(series_style(i).colour));
        markers.insert(series_style(i).marker);
    }
    for (std::size_t i = 0; i < lightnesses.size(); ++i) {
        for (std::size_t j = i + 1; j < lightnesses.size(); ++j) {
            INFO(series_style(i).colour << " vs " << series_style(j).colour);
            CHECK(std::fabs(lightnesses[i] - lightnesses[j]) >= 14);
        }
    }
    CHECK(markers.size() == 5);
    CHECK(relative_luminance("#000000") == 0);
    CHECK(relative_luminance("#ffffff") == Approx(1));
}

TEST_CASE("svg::layout_scatter keeps every point and label inside the plot area", "[svg]") {
    const Scale x_scale = GENERATE(Scale::linear, Scale::log);
    const Scale y_scale = GENERATE(Scale::linear, Scale::log);
    const ScatterSpec spec = sample_scatter(x_scale, y_scale);
    const ScatterLayout layout = layout_scatter(spec);

    CHECK(layout.drawn == std::vector<std::size_t>{0, 1, 2, 3, 4, 6, 7});  // the NaN point is left out
    REQUIRE(layout.pixels.size() == layout.drawn.size());
    CHECK(layout.plot.x > 0);
    CHECK(layout.plot.right() <= spec.width);
    CHECK(layout.plot.bottom() <= spec.height);
    for (const Point& pixel : layout.pixels) {
        CHECK(layout.plot.contains(pixel.x, pixel.y));
        // Off the axis lines: at least 2 % of the plot away from every edge.
        CHECK(pixel.x - layout.plot.x >= 0.02 * layout.plot.width);
        CHECK(layout.plot.right() - pixel.x >= 0.02 * layout.plot.width);
        CHECK(pixel.y - layout.plot.y >= 0.02 * layout.plot.height);
        CHECK(layout.plot.bottom() - pixel.y >= 0.02 * layout.plot.height);
    }
    for (const PlacedLabel& label : layout.labels) {
        const Rect box = label.box();
        INFO(spec.points[label.point].label);
        for (const Point& pixel : layout.pixels) {  // no label hides a marker
            const bool clear = box.right() <= pixel.x - 5.5 || box.x >= pixel.x + 5.5 ||
                               box.bottom() <= pixel.y - 5.5 || box.y >= pixel.y + 5.5;
            CHECK(clear);
        }
        CHECK(box.x >= layout.plot.x);
        CHECK(box.right() <= layout.plot.right());
        CHECK(box.y >= layout.plot.y - 1);
        CHECK(box.bottom() <= layout.plot.bottom() + 1);
    }
    // Axes: pixels grow with the value on x and fall with it on y (SVG y points down).
    for (std::size_t i = 1; i < layout.x_axis.ticks.size(); ++i) {
        CHECK(layout.x_axis.to_pixel(layout.x_axis.ticks[i]) > layout.x_axis.to_pixel(layout.x_axis.ticks[i - 1]));
    }
    for (std::size_t i = 1; i < layout.y_axis.ticks.size(); ++i) {
        CHECK(layout.y_axis.to_pixel(layout.y_axis.ticks[i]) < layout.y_axis.to_pixel(layout.y_axis.ticks[i - 1]));
    }
    CHECK(layout.x_axis.to_pixel(layout.x_axis.domain_low()) == Approx(layout.plot.x));
    CHECK(layout.y_axis.to_pixel(layout.y_axis.domain_high()) == Approx(layout.plot.y));
    // The SLO line at 50 ms is inside the x domain.
    CHECK(layout.x_axis.domain_high() >= 50);
    // Front (small latency, large throughput): B200 (9.1 ms, 12k), H100 × 8 (12.5 ms, 41k).
    // Everything else is slower and has less throughput than H100 × 8.
    CHECK(layout.front == std::vector<std::size_t>{7, 0});
    REQUIRE(layout.front_path.size() == 3);
    // x is minimised, so the corner is (next.x, this.y): right along B200's throughput, then up.
    CHECK(layout.front_path[1].x == Approx(layout.front_path[2].x));
    CHECK(layout.front_path[1].y == Approx(layout.front_path[0].y));
}

TEST_CASE("svg::render_scatter is well-formed, escaped, and draws what the layout says", "[svg]") {
    const ScatterSpec spec = sample_scatter(Scale::linear, Scale::linear);
    const ScatterLayout layout = layout_scatter(spec);
    const std::string svg = render_scatter(spec);
    CHECK(tag_balance_error(svg).empty());
    CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"s1\"", 0) == 0);
    CHECK_THAT(svg, Catch::Matchers::Contains("Latency vs throughput &lt;batch 32&gt; &amp; more"));
    CHECK_THAT(svg, Catch::Matchers::Contains("T4 &lt;16 GB&gt; &amp; co"));
    CHECK_THAT(svg, !Catch::Matchers::Contains("<16 GB>"));
    CHECK_THAT(svg, Catch::Matchers::Contains("SLO: P99 TPOT ≤ 50 ms"));
    CHECK_THAT(svg, Catch::Matchers::Contains("class=\"pareto-front\""));
    CHECK_THAT(svg, !Catch::Matchers::Contains("lost"));
    // Every drawn point's position, as written in the SVG, lies in the plot area.
    const std::vector<double> xs = attribute_values(svg, "data-x");
    const std::vector<double> ys = attribute_values(svg, "data-y");
    REQUIRE(xs.size() == layout.drawn.size());
    REQUIRE(ys.size() == xs.size());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        CHECK(layout.plot.contains(xs[i], ys[i]));
    }
    // Two points on the front, each ringed.
    std::size_t front_points = 0;
    for (std::size_t at = svg.find("class=\"point front\""); at != std::string::npos;
         at = svg.find("class=\"point front\"", at + 1)) {
        ++front_points;
    }
    CHECK(front_points == 2);
}

TEST_CASE("svg::layout_stacked_bars stacks segments from zero and places the capacity line", "[svg]") {
    StackedBarSpec spec;
    spec.id_prefix = "m1";
    spec.title = "Memory per GPU";
    spec.value_label = "GB per GPU";
    spec.categories = {"weights", "gradients", "optimizer", "activations", "KV cache", "overhead"};
    spec.bars = {
        {"H100-SXM5 × 2", {16, 0.1, 0.6, 20, 0, 3}, 80, "39.7 / 80 GB"},
        {"L40S × 4", {8, 0.05, 0.3, 10, 0, 2.5}, 48, "20.9 / 48 GB"},
        {"T4 × 8 & more", {4, -1, nan_value, 5, 0, 1}, 16, "10 / 16 GB"},
    };
    const StackedBarLayout layout = layout_stacked_bars(spec);
    CHECK(layout.value_axis.domain_low() == 0);
    CHECK(layout.value_axis.domain_high() == 80);  // the largest capacity
    REQUIRE(layout.segments.size() == 3);
    for (std::size_t b = 0; b < spec.bars.size(); ++b) {
        REQUIRE(layout.segments[b].size() == 6);
        CHECK(layout.segments[b].front().x == Approx(layout.plot.x));
        double total = 0;
        for (std::size_t c = 0; c < 6; ++c) {
            const Rect& segment = layout.segments[b][c];
            CHECK(segment.width >= 0);
            if (c > 0) {
                CHECK(segment.x == Approx(layout.segments[b][c - 1].right()));
            }
            const double value = spec.bars[b].values[c];
            const double expected = std::isfinite(value) && value > 0 ? value : 0;
            CHECK(segment.width == Approx(expected / 80 * layout.plot.width).margin(1e-9));
            total += expected;
            CHECK(segment.y >= layout.plot.y);
            CHECK(segment.bottom() <= layout.plot.bottom());
        }
        CHECK(layout.segments[b].back().right() == Approx(layout.plot.x + total / 80 * layout.plot.width));
        REQUIRE(layout.capacity_x[b].has_value());
        CHECK(*layout.capacity_x[b] == Approx(layout.plot.x + *spec.bars[b].capacity / 80 * layout.plot.width));
        CHECK(layout.plot.contains(*layout.capacity_x[b], layout.plot.y));
    }
    // Rows do not overlap.
    CHECK(layout.segments[0][0].bottom() < layout.segments[1][0].y);
    const std::string svg = render_stacked_bars(spec);
    CHECK(tag_balance_error(svg).empty());
    CHECK_THAT(svg, Catch::Matchers::Contains("T4 × 8 &amp; more"));
    CHECK_THAT(svg, Catch::Matchers::Contains("id=\"m1-fill5\""));
    CHECK_THAT(svg, Catch::Matchers::Contains("url(#m1-fill0)"));
}

TEST_CASE("svg::layout_line_chart keeps lines and markers inside the plot area", "[svg]") {
    LineChartSpec spec;
    spec.id_prefix = "c1";
    spec.title = "Cumulative cost";
    spec.x_axis = {"Month", Scale::linear, "", true, 6};
    spec.y_axis = {"Cumulative cost (USD)", Scale::linear, "$", true};
    LineSeries buy{"buy: H100 × 8", {}, 0, Dash::solid, "$322k"};
    LineSeries rent{"rent: H100 × 8", {}, 0, Dash::dashed, "$408k"};
    LineSeries idle{"idle", {}, 1, Dash::dotted, "$0 & <none>"};
    for (int month = 0; month <= 24; ++month) {
        buy.points.push_back({static_cast<double>(month), 250000 + 3000.0 * month});
        rent.points.push_back({static_cast<double>(month), 17000.0 * month});
    }
    for (int month = 0; month <= 24; ++month) {
        idle.points.push_back({static_cast<double>(month), 0});
    }
    spec.series = {buy, rent, idle};
    const std::optional<Point> crossing = first_crossing(buy.points, rent.points);
    REQUIRE(crossing.has_value());
    CHECK(crossing->x == Approx(250000.0 / 14000.0));  // 250000 + 3000 m = 17000 m
    CHECK(crossing->y == Approx(17000.0 * 250000.0 / 14000.0));
    spec.markers = {{crossing->x, crossing->y, "break-even: month 17.9"}};
    const LineChartLayout layout = layout_line_chart(spec);
    CHECK(layout.x_axis.domain_low() == 0);
    CHECK(layout.x_axis.domain_high() >= 24);
    CHECK(layout.y_axis.domain_high() >= 17000.0 * 24);
    // Months tick every 6: the horizon ends on a tick.
    CHECK(layout.x_axis.ticks == std::vector<double>{0, 6, 12, 18, 24});
    for (const std::vector<Point>& line : layout.series_pixels) {
        CHECK(line.size() == 25);
        for (const Point& pixel : line) {
            CHECK(layout.plot.contains(pixel.x, pixel.y));
        }
    }
    // End labels: right of the plot, inside the picture, 13 px apart, in the order of the lines' ends.
    REQUIRE(layout.end_labels.size() == 3);
    CHECK(layout.end_labels[0].point == 1);  // rent ends highest
    CHECK(layout.end_labels[1].point == 0);
    CHECK(layout.end_labels[2].point == 2);
    for (std::size_t i = 0; i < layout.end_labels.size(); ++i) {
        const PlacedLabel& label = layout.end_labels[i];
        CHECK(label.x > layout.plot.right());
        CHECK(label.x + label.width <= spec.width);
        CHECK(label.y <= layout.plot.bottom() + 4);
        if (i > 0) {
            CHECK(label.y - layout.end_labels[i - 1].y >= 13 - 1e-9);
        }
    }
    REQUIRE(layout.marker_pixels.size() == 1);
    REQUIRE(layout.marker_labels.size() == 1);
    CHECK(layout.marker_labels[0].point == 0);
    CHECK(layout.marker_labels[0].box().x >= layout.plot.x);
    CHECK(layout.marker_labels[0].box().right() <= layout.plot.right());
    CHECK(layout.plot.contains(layout.marker_pixels[0].x, layout.marker_pixels[0].y));
    const std::string svg = render_line_chart(spec);
    CHECK(tag_balance_error(svg).empty());
    CHECK_THAT(svg, Catch::Matchers::Contains("stroke-dasharray=\"9 5\""));  // the rented line is dashed
    CHECK_THAT(svg, Catch::Matchers::Contains("break-even: month 17.9"));
    CHECK_THAT(svg, Catch::Matchers::Contains("$0 &amp; &lt;none&gt;"));
}

TEST_CASE("svg::layout_line_chart stacks marker labels that would overlap", "[svg]") {
    LineChartSpec spec;
    spec.id_prefix = "c2";
    spec.x_axis = {"Month", Scale::linear, "", true, 6};
    spec.y_axis = {"USD", Scale::linear, "$", true};
    spec.series = {{"a", {{0, 0}, {36, 100}}, 0, Dash::solid, ""}};
    spec.markers = {{28.3, 80, "#2 break-even: month 28.3"},
                    {30.1, 84, "#3 break-even: month 30.1"},
                    {2, 5, "#1 break-even: month 2.0"},
                    {nan_value, 3, "never drawn"}};
    const LineChartLayout layout = layout_line_chart(spec);
    REQUIRE(layout.marker_labels.size() == 3);
    for (std::size_t i = 0; i < layout.marker_labels.size(); ++i) {
        const Rect box = layout.marker_labels[i].box();
        CHECK(box.x >= layout.plot.x);
        CHECK(box.right() <= layout.plot.right());
        CHECK(box.y >= layout.plot.y);
        CHECK(box.bottom() <= layout.plot.bottom());
        for (std::size_t j = 0; j < i; ++j) {
            const Rect other = layout.marker_labels[j].box();
            const bool apart =
                box.right() <= other.x || other.right() <= box.x || box.bottom() <= other.y || other.bottom() <= box.y;
            CHECK(apart);
        }
    }
    // The two late break-evens are close: the second goes one row up; the early one stays low.
    CHECK(layout.marker_labels[1].y < layout.marker_labels[0].y);
    CHECK(layout.marker_labels[2].y == layout.marker_labels[0].y);
    CHECK_THAT(render_line_chart(spec), !Catch::Matchers::Contains("never drawn"));
}

TEST_CASE("svg::first_crossing finds where two lines cross, and only then", "[svg]") {
    const std::vector<Point> buy = {{0, 100}, {12, 160}, {24, 220}};
    const std::vector<Point> rent = {{0, 0}, {12, 120}, {24, 240}};
    const std::optional<Point> crossing = first_crossing(buy, rent);
    REQUIRE(crossing.has_value());
    CHECK(crossing->x == Approx(20));
    CHECK(crossing->y == Approx(200));
    CHECK_FALSE(first_crossing({{0, 0}, {10, 10}}, {{0, 0}, {10, 20}}).has_value());  // touching start only
    CHECK_FALSE(first_crossing({{0, 5}, {10, 6}}, {{0, 1}, {10, 2}}).has_value());
    CHECK_FALSE(first_crossing({{0, 5}, {1, 6}}, {{2, 1}, {3, 2}}).has_value());  // no common x range
    const std::optional<Point> late = first_crossing({{0, 10}, {5, 10}, {10, 10}}, {{0, 0}, {5, 0}, {10, 20}});
    REQUIRE(late.has_value());
    CHECK(late->x == Approx(7.5));
}

TEST_CASE("svg::layout_tornado draws each bar from the base to the low and the high output", "[svg]") {
    TornadoSpec spec;
    spec.id_prefix = "t";
    spec.base = 100;
    spec.bars = {{"horizon 12–36 months", 80, 130, "pick changes at the high end"}, {"energy", 95, 104, ""}};
    const TornadoLayout layout = layout_tornado(spec);
    REQUIRE(layout.low_bars.size() == 2);
    REQUIRE(layout.high_bars.size() == 2);
    const double per_unit = (layout.value_axis.to_pixel(110) - layout.value_axis.to_pixel(100)) / 10;
    CHECK(per_unit > 0);
    CHECK(layout.base_x == Approx(layout.value_axis.to_pixel(100)));
    // Low output 80: the bar runs left from the base, 20 units wide; high 130: right, 30 wide.
    CHECK(layout.low_bars[0].right() == Approx(layout.base_x));
    CHECK(layout.low_bars[0].width == Approx(20 * per_unit));
    CHECK(layout.high_bars[0].x == Approx(layout.base_x));
    CHECK(layout.high_bars[0].width == Approx(30 * per_unit));
    CHECK(layout.low_bars[1].width == Approx(5 * per_unit));
    CHECK(layout.high_bars[1].y > layout.high_bars[0].y);
    const std::string svg = render_tornado(spec);
    CHECK(svg.find("id=\"t\"") != std::string::npos);
    CHECK(svg.find("pick changes at the high end") != std::string::npos);
    CHECK(svg.find("class=\"base\"") != std::string::npos);
}

TEST_CASE("svg::render_scatter draws the error bars it is given, and widens the axes to them", "[svg]") {
    ScatterSpec spec;
    spec.id_prefix = "s";
    spec.points = {{10, 100, "a", 0}, {20, 200, "b", 0}};
    spec.series = {"one"};
    spec.error_bars = {{0, 5, 40, 90, 260}};
    const ScatterLayout layout = layout_scatter(spec);
    CHECK(layout.x_axis.domain_high() >= 40);
    CHECK(layout.x_axis.domain_low() <= 5);
    CHECK(layout.y_axis.domain_high() >= 260);
    const std::string svg = render_scatter(spec);
    std::size_t bars = 0;
    for (std::size_t at = svg.find("class=\"error-bar\""); at != std::string::npos;
         at = svg.find("class=\"error-bar\"", at + 1)) {
        ++bars;
    }
    CHECK(bars == 2);  // the x and the y whisker of point 0; point 1 has none
}
