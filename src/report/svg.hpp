#pragma once
// SVG charts for the HTML report. Pure: data in, SVG text out; no I/O, no global state.
//
// Conventions:
//  - Coordinates are SVG user units (CSS pixels at 100 %); y grows downwards.
//  - Values are in display units chosen by the caller (e.g. milliseconds, USD); the axis label
//    states the unit. Non-finite values are never drawn (a point with a NaN or Inf coordinate
//    is left out; on a log axis so is a value <= 0).
//  - Every chart draws in a greyscale-safe style: series differ in lightness and also in
//    marker shape, dash pattern or fill pattern, so a black-and-white print keeps them apart.
//  - Every chart takes an `id_prefix` that is unique within the HTML document, because the
//    pattern definitions of all inline SVGs share one id namespace.
//  - All text is XML-escaped (xml_escape, text.hpp).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpusel::svg {

// ---- axes -------------------------------------------------------------------------------

enum class Scale { linear, log };

// "Nice" tick step for a linear axis: 1, 2 or 5 × 10^k, the smallest such step that gives at
// most `max_ticks` intervals over [low, high]. Requires high > low, max_ticks >= 1.
double nice_step(double low, double high, int max_ticks);

// Ticks of a linear axis: multiples of nice_step() from the largest multiple <= low to the
// smallest >= high, so that the ticks cover the data. Strictly increasing. When low == high
// the range is widened around the value (to [0, 2v], or [-1, 1] for 0) first.
std::vector<double> linear_ticks(double low, double high, int max_ticks = 6);

// Ticks of a log axis, all of the form 1, 2 or 5 × 10^k, from the largest tick <= low to the
// smallest >= high. Decades only when the range spans more than two decades, 1-2-5 within a
// decade otherwise; when there are more than `max_ticks` decades every other one is kept (the
// end ticks always). Requires 0 < low <= high.
std::vector<double> log_ticks(double low, double high, int max_ticks = 8);

// A tick label: at most 3 significant digits, k/M/G suffixes for thousands, millions,
// billions ("0", "0.05", "2.5", "150", "2k", "1.5M"); `prefix` goes before the number and
// after the sign ("$", giving "-$2k").
std::string format_tick(double value, std::string_view prefix = {});

struct AxisSpec {
    std::string label;  // with the unit, e.g. "P99 time per output token (ms)"
    Scale scale = Scale::linear;
    std::string tick_prefix;    // e.g. "$"
    bool include_zero = false;  // linear axes: extend the domain to 0
    // Linear axes: ticks at multiples of this step instead of 1-2-5 × 10^k (e.g. 6 for months,
    // so that a 24-month horizon ends on a tick). 0 = nice steps.
    double tick_step = 0;
};

// Maps values on an axis to pixels. `ticks` span the domain: the first tick maps to
// `pixel_start`, the last to `pixel_end` (pixel_end < pixel_start for a y axis).
struct AxisMap {
    Scale scale = Scale::linear;
    std::vector<double> ticks;
    double pixel_start = 0;
    double pixel_end = 1;

    double domain_low() const { return ticks.front(); }
    double domain_high() const { return ticks.back(); }
    double to_pixel(double value) const;
};

// The axis for `values` (non-finite, and on a log axis non-positive, values ignored). With no
// usable value the domain is [0, 1] (linear) or [1, 10] (log).
AxisMap make_axis(const AxisSpec& spec, const std::vector<double>& values, double pixel_start, double pixel_end,
                  int max_ticks);

struct Rect {
    double x = 0, y = 0, width = 0, height = 0;
    double right() const { return x + width; }
    double bottom() const { return y + height; }
    bool contains(double px, double py) const { return px >= x && px <= right() && py >= y && py <= bottom(); }
};

// ---- Pareto front -----------------------------------------------------------------------

struct Point {
    double x = 0;
    double y = 0;
};

// Indices of the points no other point dominates. A point dominates another when it is at
// least as good on both coordinates and strictly better on one ("good" = smaller when
// minimised, larger otherwise). Equal points do not dominate each other, so both stay.
// Points with a non-finite coordinate are never on the front. The result is sorted by x
// ascending (ties: better y first).
std::vector<std::size_t> pareto_front(const std::vector<Point>& points, bool minimise_x, bool minimise_y);

// The vertices of the step line that bounds the region the front dominates: the front points
// sorted by x ascending, with a corner between consecutive points. The corner is (next.x,
// this.y) when x is minimised and (this.x, next.y) when x is maximised, so that every corner is
// weakly dominated by the two points it joins.
std::vector<Point> pareto_step_path(const std::vector<Point>& front_sorted_by_x, bool minimise_x);

// ---- greyscale-safe styles --------------------------------------------------------------

struct SeriesStyle {
    std::string colour;  // #rrggbb
    std::string dash;    // stroke-dasharray ("" = solid)
    int marker = 0;      // 0 circle, 1 square, 2 triangle, 3 diamond, 4 cross, 5 triangle-down
};

// Style number `index` (cycles): colours of distinct lightness (CIE L* at least 12 apart
// between neighbours), each paired with its own marker shape.
SeriesStyle series_style(std::size_t index);

// Relative luminance (WCAG 2) of "#rrggbb", 0 (black) .. 1 (white).
double relative_luminance(std::string_view hex_colour);

// ---- scatter plot -----------------------------------------------------------------------

struct ScatterPoint {
    double x = 0;
    double y = 0;
    std::string label;       // drawn next to the point, e.g. "H100-SXM5 × 2"
    std::size_t series = 0;  // index into ScatterSpec::series
};

// A point's band (the estimate's uncertainty), drawn as whiskers with caps; a non-finite end
// (NaN: none) leaves that axis's whisker out.
struct ErrorBar {
    std::size_t point = 0;  // index into ScatterSpec::points
    double x_low = 0, x_high = 0;
    double y_low = 0, y_high = 0;
};

struct ReferenceLine {
    double value = 0;   // on the axis it belongs to
    std::string label;  // e.g. "SLO 50 ms"
};

struct ScatterSpec {
    std::string id_prefix;  // unique within the document
    std::string title;
    std::string description;  // <desc>, for screen readers
    AxisSpec x_axis;
    AxisSpec y_axis;
    std::vector<std::string> series;  // legend names; style = series_style(index)
    std::vector<ScatterPoint> points;
    bool show_pareto = true;
    bool minimise_x = true;
    bool minimise_y = true;
    std::vector<ReferenceLine> x_references;  // vertical lines (e.g. a latency SLO)
    std::vector<ReferenceLine> y_references;  // horizontal lines (e.g. a budget)
    std::vector<ErrorBar> error_bars;         // at most one per point
    double width = 720;
    double height = 420;
};

// Where everything of a scatter plot goes; render_scatter() draws exactly this.
struct PlacedLabel {
    std::size_t point = 0;         // index into ScatterSpec::points
    double x = 0, y = 0;           // text anchor (start of the baseline)
    double width = 0, height = 0;  // estimated text box, y = top
    Rect box() const { return Rect{x, y - height + 3, width, height}; }
};

struct ScatterLayout {
    Rect plot;  // the plot area inside the axes
    AxisMap x_axis;
    AxisMap y_axis;
    std::vector<std::size_t> drawn;   // indices of the points drawn (finite, on-scale)
    std::vector<Point> pixels;        // pixel position of each drawn point, same order
    std::vector<std::size_t> front;   // Pareto front: indices into points, by x ascending
    std::vector<Point> front_path;    // the step line, in pixels
    std::vector<PlacedLabel> labels;  // one per drawn point
};

ScatterLayout layout_scatter(const ScatterSpec& spec);
std::string render_scatter(const ScatterSpec& spec);

// ---- stacked horizontal bars ------------------------------------------------------------

struct StackedBar {
    std::string label;               // e.g. "H100-SXM5 × 2 (tp2)"
    std::vector<double> values;      // one per category, >= 0 (negative or non-finite drawn as 0)
    std::optional<double> capacity;  // drawn as a vertical line across the bar
    std::string note;                // right of the bar, e.g. "41.2 / 80 GB"
};

struct StackedBarSpec {
    std::string id_prefix;
    std::string title;
    std::string description;
    std::string value_label;              // axis label with unit, e.g. "GB per GPU"
    std::vector<std::string> categories;  // segment names, in stacking order
    // Fill of each category (index into the six greyscale-safe fills); empty = by position.
    // Lets charts that leave out unused categories keep one fill per component.
    std::vector<std::size_t> category_fills;
    std::vector<StackedBar> bars;
    std::string capacity_label = "capacity";
    double width = 720;
    double bar_height = 22;
};

struct StackedBarLayout {
    Rect plot;
    AxisMap value_axis;
    double height = 0;  // of the whole SVG
    // segments[bar][category]: the drawn rectangle (width 0 when the value is 0).
    std::vector<std::vector<Rect>> segments;
    std::vector<std::optional<double>> capacity_x;  // pixel x of each bar's capacity line
};

StackedBarLayout layout_stacked_bars(const StackedBarSpec& spec);
std::string render_stacked_bars(const StackedBarSpec& spec);

// ---- tornado ----------------------------------------------------------------------------

// One input of a tornado chart: the output at the input's low and high value, drawn as a bar
// from the base value to each; the bars sorted by the caller (largest swing first).
struct TornadoBar {
    std::string label;      // e.g. "horizon 12–36 months"
    double low_output = 0;  // output with the input at its low value
    double high_output = 0;
    std::string note;  // right of the bar, e.g. "winner changes at the high end"
};

struct TornadoSpec {
    std::string id_prefix;
    std::string title;
    std::string description;
    std::string value_label;  // with unit, e.g. "TCO of the pick (USD)"
    std::string tick_prefix;  // "$"
    double base = 0;          // the output at the current inputs: the bars' common edge
    std::vector<TornadoBar> bars;
    double width = 720;
    double bar_height = 18;
};

struct TornadoLayout {
    Rect plot;
    AxisMap value_axis;
    double height = 0;
    double base_x = 0;
    std::vector<Rect> low_bars;  // from the base to low_output (width 0 when equal)
    std::vector<Rect> high_bars;
};

TornadoLayout layout_tornado(const TornadoSpec& spec);
std::string render_tornado(const TornadoSpec& spec);

// ---- line chart -------------------------------------------------------------------------

enum class Dash { solid, dashed, dotted };

struct LineSeries {
    std::string name;
    std::vector<Point> points;  // x ascending
    std::size_t style = 0;      // colour and marker: series_style(style)
    Dash dash = Dash::solid;    // e.g. bought solid, rented dashed, a what-if dotted
    std::string end_label;      // drawn right of the last point (e.g. the final value); "" = none
};

struct LineMarker {
    double x = 0;
    double y = 0;
    std::string label;  // e.g. "break-even: month 14"
};

struct LineChartSpec {
    std::string id_prefix;
    std::string title;
    std::string description;
    AxisSpec x_axis;
    AxisSpec y_axis;
    std::vector<LineSeries> series;
    std::vector<LineMarker> markers;
    double width = 720;
    double height = 380;
};

struct LineChartLayout {
    Rect plot;
    AxisMap x_axis;
    AxisMap y_axis;
    std::vector<std::vector<Point>> series_pixels;  // drawn points of each series
    std::vector<Point> marker_pixels;
    // End labels right of the plot, moved apart vertically so that they do not overlap;
    // `point` is the series index.
    std::vector<PlacedLabel> end_labels;
    // One label per drawn marker (same order; `point` is the index into LineChartSpec::markers),
    // stacked upwards from the x axis so that no two overlap.
    std::vector<PlacedLabel> marker_labels;
};

LineChartLayout layout_line_chart(const LineChartSpec& spec);
std::string render_line_chart(const LineChartSpec& spec);

// Where the segment lines a and b (both x ascending, same x grid not required) first cross,
// by linear interpolation between their points; nullopt when they never cross inside the x
// range both cover. A touching start (equal first values) is not a crossing.
std::optional<Point> first_crossing(const std::vector<Point>& a, const std::vector<Point>& b);

// Estimated width in pixels of `text` in a sans-serif font of `font_size` px (≈0.62 em per
// character, code points counted: DejaVu Sans, the widest of the fonts the charts name, averages
// 0.6-0.7 em for capitals and digits). Used to place labels; an estimate, not a measurement.
double estimated_text_width(std::string_view text, double font_size);

}  // namespace gpusel::svg
