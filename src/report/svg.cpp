#include "report/svg.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>

#include <fmt/format.h>

#include "base/text.hpp"

namespace gpusel::svg {

namespace {

constexpr double title_font_px = 15;
constexpr double label_font_px = 12;
constexpr double small_font_px = 11;
constexpr const char* text_colour = "#222222";
constexpr const char* grid_colour = "#e3e3e3";
constexpr const char* axis_colour = "#555555";
constexpr const char* front_colour = "#111111";

// Five colours whose CIE L* are ≈21, 35, 52, 67 and 83: any two differ by ≥ 14, so a
// greyscale print still tells them apart; hues alternate for readers who see colour.
constexpr std::array<const char*, 5> palette = {"#1f2f5f", "#8e2c6f", "#1f8a8a", "#ef8a2a", "#a3d5f0"};
constexpr int marker_shapes = 6;

std::string number(double value) {
    if (!std::isfinite(value)) {
        return "0";
    }
    std::string text = fmt::format("{:.1f}", value);
    if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) {
        text.resize(text.size() - 2);
    }
    return text == "-0" ? "0" : text;
}

bool usable(double value, Scale scale) {
    return std::isfinite(value) && (scale == Scale::linear || value > 0);
}

std::size_t code_points(std::string_view text) {
    std::size_t count = 0;
    for (const char c : text) {
        if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) {
            ++count;
        }
    }
    return count;
}

std::string text_element(double x, double y, std::string_view text, double font_px, std::string_view extra = {}) {
    return fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"{}\"{}{}>{}</text>\n", number(x), number(y),
                       number(font_px), extra.empty() ? "" : " ", extra, xml_escape(text));
}

// Text on a white halo, readable where it crosses grid lines or other marks.
constexpr const char* halo = "paint-order=\"stroke\" stroke=\"#ffffff\" stroke-width=\"3\" stroke-linejoin=\"round\"";

std::string svg_open(const std::string& id_prefix, double width, double height, std::string_view title,
                     std::string_view description) {
    std::string out = fmt::format(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"{}\" class=\"chart\" width=\"{}\" height=\"{}\" "
        "viewBox=\"0 0 {} {}\" role=\"img\" aria-labelledby=\"{}-title {}-desc\" "
        "font-family=\"'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif\" fill=\"{}\">\n",
        xml_escape(id_prefix), number(width), number(height), number(width), number(height), xml_escape(id_prefix),
        xml_escape(id_prefix), text_colour);
    out += fmt::format("<title id=\"{}-title\">{}</title>\n", xml_escape(id_prefix), xml_escape(title));
    out += fmt::format("<desc id=\"{}-desc\">{}</desc>\n", xml_escape(id_prefix), xml_escape(description));
    out += fmt::format("<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"#ffffff\"/>\n", number(width),
                       number(height));
    out += text_element(12, 22, title, title_font_px, "font-weight=\"bold\"");
    return out;
}

// A marker centred on (x, y); `size` is the half-width.
std::string marker_element(int shape, double x, double y, double size, const std::string& colour) {
    const std::string outline = "stroke=\"#111111\" stroke-width=\"1\"";
    switch (shape % marker_shapes) {
        case 0:
            return fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{}\" {}/>", number(x), number(y),
                               number(size), colour, outline);
        case 1:
            return fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" {}/>",
                               number(x - size * 0.9), number(y - size * 0.9), number(size * 1.8), number(size * 1.8),
                               colour, outline);
        case 2:
            return fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\" fill=\"{}\" {}/>", number(x), number(y - size * 1.15),
                               number(x + size * 1.1), number(y + size * 0.85), number(x - size * 1.1),
                               number(y + size * 0.85), colour, outline);
        case 3:
            return fmt::format("<path d=\"M{} {}L{} {}L{} {}L{} {}Z\" fill=\"{}\" {}/>", number(x),
                               number(y - size * 1.25), number(x + size * 1.1), number(y), number(x),
                               number(y + size * 1.25), number(x - size * 1.1), number(y), colour, outline);
        case 4:
            return fmt::format("<path d=\"M{} {}L{} {}L{} {}Z\" fill=\"{}\" {}/>", number(x), number(y + size * 1.15),
                               number(x + size * 1.1), number(y - size * 0.85), number(x - size * 1.1),
                               number(y - size * 0.85), colour, outline);
        default:
            return fmt::format(
                "<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"#111111\" stroke-width=\"4.5\"/>"
                "<path d=\"M{} {}L{} {}M{} {}L{} {}\" stroke=\"{}\" stroke-width=\"2.5\"/>",
                number(x - size), number(y - size), number(x + size), number(y + size), number(x - size),
                number(y + size), number(x + size), number(y - size), number(x - size), number(y - size),
                number(x + size), number(y + size), number(x - size), number(y + size), number(x + size),
                number(y - size), colour);
    }
}

// One legend entry: a drawing `width` px wide and a name.
struct LegendItem {
    std::string swatch;  // SVG drawn with its origin at the left of the swatch, y = text middle
    std::string name;
    double swatch_width = 18;
};

// Lays legend items out in rows from (x, y) within `max_width`; returns the SVG and the y below it.
std::pair<std::string, double> render_legend(const std::vector<LegendItem>& items, double x, double y,
                                             double max_width) {
    std::string out = "<g class=\"legend\">\n";
    double cursor_x = x;
    double row_y = y;
    constexpr double row_height = 18;
    for (const LegendItem& item : items) {
        const double item_width = item.swatch_width + 6 + estimated_text_width(item.name, small_font_px) + 18;
        if (cursor_x > x && cursor_x + item_width > x + max_width) {
            cursor_x = x;
            row_y += row_height;
        }
        out += fmt::format("<g transform=\"translate({} {})\">{}</g>\n", number(cursor_x), number(row_y), item.swatch);
        out += text_element(cursor_x + item.swatch_width + 6, row_y + 4, item.name, small_font_px);
        cursor_x += item_width;
    }
    out += "</g>\n";
    return {out, row_y + row_height};
}

double widest_tick_label(const AxisMap& axis, const std::string& prefix) {
    double widest = 0;
    for (const double tick : axis.ticks) {
        widest = std::max(widest, estimated_text_width(format_tick(tick, prefix), small_font_px));
    }
    return widest;
}

std::string render_x_axis(const AxisMap& axis, const Rect& plot, const AxisSpec& spec) {
    std::string out = "<g class=\"x-axis\">\n";
    for (const double tick : axis.ticks) {
        const double px = axis.to_pixel(tick);
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1\"/>\n",
                           number(px), number(plot.y), number(plot.bottom()), grid_colour);
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\"/>\n", number(px),
                           number(plot.bottom()), number(plot.bottom() + 5), axis_colour);
        out += text_element(px, plot.bottom() + 18, format_tick(tick, spec.tick_prefix), small_font_px,
                            "text-anchor=\"middle\"");
    }
    out += fmt::format("<line x1=\"{0}\" y1=\"{2}\" x2=\"{1}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.2\"/>\n",
                       number(plot.x), number(plot.right()), number(plot.bottom()), axis_colour);
    std::string label = spec.label;
    if (spec.scale == Scale::log) {
        label += " — log scale";
    }
    out += text_element(plot.x + plot.width / 2, plot.bottom() + 38, label, label_font_px, "text-anchor=\"middle\"");
    out += "</g>\n";
    return out;
}

std::string render_y_axis(const AxisMap& axis, const Rect& plot, const AxisSpec& spec) {
    std::string out = "<g class=\"y-axis\">\n";
    for (const double tick : axis.ticks) {
        const double py = axis.to_pixel(tick);
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\" stroke-width=\"1\"/>\n",
                           number(plot.x), number(py), number(plot.right()), grid_colour);
        out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"{3}\"/>\n", number(plot.x - 5),
                           number(py), number(plot.x), axis_colour);
        out +=
            text_element(plot.x - 8, py + 4, format_tick(tick, spec.tick_prefix), small_font_px, "text-anchor=\"end\"");
    }
    out += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"1.2\"/>\n",
                       number(plot.x), number(plot.y), number(plot.bottom()), axis_colour);
    std::string label = spec.label;
    if (spec.scale == Scale::log) {
        label += " — log scale";
    }
    const double label_x = 16;
    const double label_y = plot.y + plot.height / 2;
    out += text_element(
        label_x, label_y, label, label_font_px,
        fmt::format("text-anchor=\"middle\" transform=\"rotate(-90 {} {})\"", number(label_x), number(label_y)));
    out += "</g>\n";
    return out;
}

std::vector<double> finite_values(const std::vector<double>& values, Scale scale) {
    std::vector<double> kept;
    for (const double value : values) {
        if (usable(value, scale)) {
            kept.push_back(value);
        }
    }
    return kept;
}

double overlap_area(const Rect& a, const Rect& b) {
    const double w = std::min(a.right(), b.right()) - std::max(a.x, b.x);
    const double h = std::min(a.bottom(), b.bottom()) - std::max(a.y, b.y);
    return w > 0 && h > 0 ? w * h : 0;
}

bool inside(const Rect& inner, const Rect& outer) {
    return inner.x >= outer.x && inner.y >= outer.y && inner.right() <= outer.right() &&
           inner.bottom() <= outer.bottom();
}

}  // namespace

double estimated_text_width(std::string_view text, double font_size) {
    return static_cast<double>(code_points(text)) * font_size * 0.62;
}

// ---- axes -------------------------------------------------------------------------------

double nice_step(double low, double high, int max_ticks) {
    const double span = high - low;
    const double raw = span / std::max(max_ticks, 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
        const double step = factor * magnitude;
        // Count the intervals the ticks will need, from the multiple below low to the one above high.
        const double intervals = std::ceil(high / step - 1e-9) - std::floor(low / step + 1e-9);
        if (intervals <= max_ticks) {
            return step;
        }
    }
    return 20.0 * magnitude;
}

std::vector<double> linear_ticks(double low, double high, int max_ticks) {
    if (!(high > low)) {
        if (low == 0) {
            low = -1;
            high = 1;
        } else if (low > 0) {
            low = 0;
            high *= 2;
        } else {
            high = 0;
            low *= 2;
        }
    }
    const double step = nice_step(low, high, max_ticks);
    const double first = std::floor(low / step + 1e-9);
    const double last = std::ceil(high / step - 1e-9);
    std::vector<double> ticks;
    for (double k = first; k <= last + 0.5; k += 1) {
        double tick = k * step;
        if (std::fabs(tick) < step * 1e-9) {
            tick = 0;
        }
        ticks.push_back(tick);
    }
    return ticks;
}

std::vector<double> log_ticks(double low, double high, int max_ticks) {
    const int first_decade = static_cast<int>(std::floor(std::log10(low) + 1e-9));
    const int last_decade = static_cast<int>(std::ceil(std::log10(high) - 1e-9));
    std::vector<double> ticks;
    if (last_decade - first_decade > 2) {
        const int decades = last_decade - first_decade;
        const int stride = decades > max_ticks ? (decades + max_ticks - 1) / max_ticks : 1;
        for (int decade = first_decade; decade < last_decade; decade += stride) {
            ticks.push_back(std::pow(10.0, decade));
        }
        ticks.push_back(std::pow(10.0, last_decade));
        return ticks;
    }
    // Within two decades: the 1-2-5 ticks from the largest <= low to the smallest >= high.
    std::vector<double> all;
    for (int decade = first_decade - 1; decade <= last_decade; ++decade) {
        for (const double factor : {1.0, 2.0, 5.0}) {
            all.push_back(factor * std::pow(10.0, decade));
        }
    }
    const double tolerance = 1e-9;
    std::size_t begin = 0;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (all[i] <= low * (1 + tolerance)) {
            begin = i;
        }
    }
    std::size_t end = all.size() - 1;
    for (std::size_t i = all.size(); i-- > 0;) {
        if (all[i] >= high * (1 - tolerance)) {
            end = i;
        }
    }
    ticks.assign(all.begin() + static_cast<std::ptrdiff_t>(begin), all.begin() + static_cast<std::ptrdiff_t>(end) + 1);
    if (low == high && ticks.size() == 1) {
        ticks.push_back(ticks.front() * 2);
    }
    return ticks;
}

std::string format_tick(double value, std::string_view prefix) {
    if (!std::isfinite(value)) {
        return "—";
    }
    const char* sign = value < 0 ? "-" : "";
    double magnitude = std::fabs(value);
    const char* suffix = "";
    if (magnitude >= 1e9 * 0.9995) {
        magnitude /= 1e9;
        suffix = "G";
    } else if (magnitude >= 1e6 * 0.9995) {
        magnitude /= 1e6;
        suffix = "M";
    } else if (magnitude >= 1e3 * 0.9995) {
        magnitude /= 1e3;
        suffix = "k";
    }
    std::string digits;
    if (magnitude == 0) {
        digits = "0";
        sign = "";
    } else {
        // Three significant digits, trailing zeros removed.
        const int exponent = static_cast<int>(std::floor(std::log10(magnitude)));
        const int decimals = std::max(0, 2 - exponent);
        digits = fmt::format("{:.{}f}", magnitude, decimals);
        if (digits.find('.') != std::string::npos) {
            while (digits.back() == '0') {
                digits.pop_back();
            }
            if (digits.back() == '.') {
                digits.pop_back();
            }
        }
    }
    return fmt::format("{}{}{}{}", sign, prefix, digits, suffix);
}

double AxisMap::to_pixel(double value) const {
    double t = 0;
    if (scale == Scale::log) {
        const double low = std::log10(domain_low());
        const double high = std::log10(domain_high());
        t = high > low ? (std::log10(value) - low) / (high - low) : 0.5;
    } else {
        const double low = domain_low();
        const double high = domain_high();
        t = high > low ? (value - low) / (high - low) : 0.5;
    }
    return pixel_start + t * (pixel_end - pixel_start);
}

AxisMap make_axis(const AxisSpec& spec, const std::vector<double>& values, double pixel_start, double pixel_end,
                  int max_ticks) {
    AxisMap axis;
    axis.scale = spec.scale;
    axis.pixel_start = pixel_start;
    axis.pixel_end = pixel_end;
    std::vector<double> kept = finite_values(values, spec.scale);
    if (spec.include_zero && spec.scale == Scale::linear) {
        kept.push_back(0);
    }
    if (kept.empty()) {
        axis.ticks = spec.scale == Scale::log ? log_ticks(1, 10, max_ticks) : linear_ticks(0, 1, max_ticks);
        return axis;
    }
    const auto [low, high] = std::minmax_element(kept.begin(), kept.end());
    if (spec.scale == Scale::linear && spec.tick_step > 0) {
        const double first = std::floor(*low / spec.tick_step + 1e-9);
        const double last = std::max(first + 1, std::ceil(*high / spec.tick_step - 1e-9));
        for (double k = first; k <= last + 0.5; k += 1) {
            axis.ticks.push_back(k * spec.tick_step);
        }
        return axis;
    }
    axis.ticks = spec.scale == Scale::log ? log_ticks(*low, *high, max_ticks) : linear_ticks(*low, *high, max_ticks);
    return axis;
}

// ---- Pareto front -----------------------------------------------------------------------

std::vector<std::size_t> pareto_front(const std::vector<Point>& points, bool minimise_x, bool minimise_y) {
    // Orient both coordinates so that smaller is better.
    auto oriented = [&](const Point& p) { return Point{minimise_x ? p.x : -p.x, minimise_y ? p.y : -p.y}; };
    std::vector<std::size_t> front;
    for (std::size_t i = 0; i < points.size(); ++i) {
        const Point p = oriented(points[i]);
        if (!std::isfinite(p.x) || !std::isfinite(p.y)) {
            continue;
        }
        bool dominated = false;
        for (std::size_t j = 0; j < points.size() && !dominated; ++j) {
            const Point q = oriented(points[j]);
            if (j == i || !std::isfinite(q.x) || !std::isfinite(q.y)) {
                continue;
            }
            dominated = q.x <= p.x && q.y <= p.y && (q.x < p.x || q.y < p.y);
        }
        if (!dominated) {
            front.push_back(i);
        }
    }
    std::stable_sort(front.begin(), front.end(), [&](std::size_t a, std::size_t b) {
        if (points[a].x != points[b].x) {
            return points[a].x < points[b].x;
        }
        return minimise_y ? points[a].y < points[b].y : points[a].y > points[b].y;
    });
    return front;
}

std::vector<Point> pareto_step_path(const std::vector<Point>& front_sorted_by_x, bool minimise_x) {
    std::vector<Point> path;
    for (std::size_t i = 0; i < front_sorted_by_x.size(); ++i) {
        const Point& here = front_sorted_by_x[i];
        path.push_back(here);
        if (i + 1 < front_sorted_by_x.size()) {
            const Point& next = front_sorted_by_x[i + 1];
            path.push_back(minimise_x ? Point{next.x, here.y} : Point{here.x, next.y});
        }
    }
    return path;
}

// ---- styles -----------------------------------------------------------------------------

SeriesStyle series_style(std::size_t index) {
    SeriesStyle style;
    style.colour = palette[index % palette.size()];
    style.marker = static_cast<int>(index % marker_shapes);
    return style;
}

double relative_luminance(std::string_view hex_colour) {
    if (hex_colour.size() != 7 || hex_colour[0] != '#') {
        return 0;
    }
    auto channel = [&](std::size_t offset) {
        const double value = std::stoi(std::string(hex_colour.substr(offset, 2)), nullptr, 16) / 255.0;
        return value <= 0.04045 ? value / 12.92 : std::pow((value + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
}

// ---- scatter plot -----------------------------------------------------------------------

namespace {

double legend_height(const std::vector<LegendItem>& items, double max_width) {
    return render_legend(items, 0, 0, max_width).second;
}

std::vector<LegendItem> scatter_legend(const ScatterSpec& spec) {
    std::vector<LegendItem> items;
    for (std::size_t i = 0; i < spec.series.size(); ++i) {
        const SeriesStyle style = series_style(i);
        items.push_back({marker_element(style.marker, 9, 0, 5, style.colour), spec.series[i]});
    }
    if (spec.show_pareto) {
        items.push_back({fmt::format("<path d=\"M0 5L9 5L9 -5L18 -5\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
                                     "stroke-dasharray=\"5 3\"/>",
                                     front_colour),
                         "Pareto front (no other option is better on both axes)"});
    }
    for (const ReferenceLine& reference : spec.x_references) {
        items.push_back({"<path d=\"M9 -7L9 7\" stroke=\"#b00020\" stroke-width=\"2\" stroke-dasharray=\"2 2\"/>",
                         reference.label});
    }
    for (const ReferenceLine& reference : spec.y_references) {
        items.push_back({"<path d=\"M0 0L18 0\" stroke=\"#b00020\" stroke-width=\"2\" stroke-dasharray=\"2 2\"/>",
                         reference.label});
    }
    return items;
}

// The values each axis must show: the drawn points, padded, and the reference lines with room.
struct AxisValues {
    std::vector<double> xs;
    std::vector<double> ys;
};

AxisValues scatter_axis_values(const ScatterSpec& spec) {
    AxisValues axis_values;
    std::vector<double>& xs = axis_values.xs;
    std::vector<double>& ys = axis_values.ys;
    for (const ScatterPoint& point : spec.points) {
        if (usable(point.x, spec.x_axis.scale) && usable(point.y, spec.y_axis.scale)) {
            xs.push_back(point.x);
            ys.push_back(point.y);
        }
    }
    for (const ErrorBar& bar : spec.error_bars) {
        if (bar.point >= spec.points.size() || !usable(spec.points[bar.point].x, spec.x_axis.scale) ||
            !usable(spec.points[bar.point].y, spec.y_axis.scale)) {
            continue;
        }
        for (const double end : {bar.x_low, bar.x_high}) {
            if (usable(end, spec.x_axis.scale)) {
                xs.push_back(end);
            }
        }
        for (const double end : {bar.y_low, bar.y_high}) {
            if (usable(end, spec.y_axis.scale)) {
                ys.push_back(end);
            }
        }
    }
    // Points get some room from the axes (4 % of the span of points and reference lines, never
    // crossing zero), so that no marker sits on an axis line.
    const auto pad = [](std::vector<double>& values, Scale scale) {
        std::vector<double> kept = finite_values(values, scale);
        if (kept.size() < 2) {
            return;
        }
        const auto [low_it, high_it] = std::minmax_element(kept.begin(), kept.end());
        const double low = *low_it;
        const double high = *high_it;
        if (scale == Scale::log) {
            values.push_back(low / 1.15);
            values.push_back(high * 1.15);
            return;
        }
        const double margin = (high - low) * 0.04;
        values.push_back(low >= 0 ? std::max(0.0, low - margin) : low - margin);
        values.push_back(high <= 0 ? std::min(0.0, high + margin) : high + margin);
    };
    // A reference line gets some room beyond it, so that it never lies on the plot's edge.
    const auto with_room = [](std::vector<double>& values, double value, Scale scale) {
        values.push_back(value);
        values.push_back(scale == Scale::log ? value * 1.25 : value * 1.08);
    };
    for (const ReferenceLine& reference : spec.x_references) {
        with_room(xs, reference.value, spec.x_axis.scale);
    }
    for (const ReferenceLine& reference : spec.y_references) {
        with_room(ys, reference.value, spec.y_axis.scale);
    }
    pad(xs, spec.x_axis.scale);
    pad(ys, spec.y_axis.scale);
    return axis_values;
}

// Pixels of the drawn points and, when asked for, the Pareto front and its step path.
void place_scatter_points(const ScatterSpec& spec, ScatterLayout& layout) {
    std::vector<Point> values;
    for (std::size_t i = 0; i < spec.points.size(); ++i) {
        const ScatterPoint& point = spec.points[i];
        if (usable(point.x, spec.x_axis.scale) && usable(point.y, spec.y_axis.scale)) {
            layout.drawn.push_back(i);
            layout.pixels.push_back(Point{layout.x_axis.to_pixel(point.x), layout.y_axis.to_pixel(point.y)});
        }
        values.push_back(usable(point.x, spec.x_axis.scale) && usable(point.y, spec.y_axis.scale)
                             ? Point{point.x, point.y}
                             : Point{std::numeric_limits<double>::quiet_NaN(), 0});
    }
    if (spec.show_pareto) {
        layout.front = pareto_front(values, spec.minimise_x, spec.minimise_y);
        std::vector<Point> front_values;
        for (const std::size_t index : layout.front) {
            front_values.push_back(values[index]);
        }
        for (const Point& vertex : pareto_step_path(front_values, spec.minimise_x)) {
            layout.front_path.push_back(Point{layout.x_axis.to_pixel(vertex.x), layout.y_axis.to_pixel(vertex.y)});
        }
    }
}

// Boxes a label should not cover: every marker, the front's segments and the reference lines.
std::vector<Rect> label_obstacles(const ScatterSpec& spec, const ScatterLayout& layout) {
    std::vector<Rect> occupied;
    for (const Point& pixel : layout.pixels) {
        occupied.push_back(Rect{pixel.x - 6, pixel.y - 6, 12, 12});
    }
    for (std::size_t i = 1; i < layout.front_path.size(); ++i) {
        const Point& a = layout.front_path[i - 1];
        const Point& b = layout.front_path[i];
        occupied.push_back(
            Rect{std::min(a.x, b.x) - 2, std::min(a.y, b.y) - 2, std::fabs(a.x - b.x) + 4, std::fabs(a.y - b.y) + 4});
    }
    for (const ReferenceLine& reference : spec.x_references) {
        if (usable(reference.value, spec.x_axis.scale)) {
            occupied.push_back(Rect{layout.x_axis.to_pixel(reference.value) - 2, layout.plot.y, 4, layout.plot.height});
        }
    }
    for (const ReferenceLine& reference : spec.y_references) {
        if (usable(reference.value, spec.y_axis.scale)) {
            occupied.push_back(Rect{layout.plot.x, layout.y_axis.to_pixel(reference.value) - 2, layout.plot.width, 4});
        }
    }
    return occupied;
}

// Labels: greedy placement, best-ranked point first (the caller lists them in rank order).
// Each label tries eight positions around its point and takes the first that stays in the
// plot area and clears the other labels and markers; failing that, the least overlapping.
void place_scatter_labels(const ScatterSpec& spec, ScatterLayout& layout) {
    std::vector<Rect> occupied = label_obstacles(spec, layout);
    const double text_height = small_font_px + 2;
    for (std::size_t k = 0; k < layout.drawn.size(); ++k) {
        const Point pixel = layout.pixels[k];
        const double width = estimated_text_width(spec.points[layout.drawn[k]].label, small_font_px);
        const std::array<Point, 8> anchors = {
            Point{pixel.x + 9, pixel.y + 4},          Point{pixel.x - 9 - width, pixel.y + 4},
            Point{pixel.x - width / 2, pixel.y - 10}, Point{pixel.x - width / 2, pixel.y + 19},
            Point{pixel.x + 7, pixel.y - 9},          Point{pixel.x - 7 - width, pixel.y - 9},
            Point{pixel.x + 7, pixel.y + 18},         Point{pixel.x - 7 - width, pixel.y + 18},
        };
        PlacedLabel best;
        double best_overlap = std::numeric_limits<double>::infinity();
        for (const Point& anchor : anchors) {
            PlacedLabel candidate{layout.drawn[k], anchor.x, anchor.y, width, text_height};
            Rect box = candidate.box();
            if (!inside(box, layout.plot)) {
                // Slide it back into the plot area; a label wider than the plot cannot be helped.
                candidate.x = std::clamp(candidate.x, layout.plot.x + 1,
                                         std::max(layout.plot.x + 1, layout.plot.right() - width - 1));
                candidate.y = std::clamp(candidate.y, layout.plot.y + text_height, layout.plot.bottom() - 3);
                box = candidate.box();
            }
            double overlap = 0;
            // Its own marker counts too: a label slid back into the plot may land on it.
            for (const Rect& other : occupied) {
                overlap += overlap_area(box, other);
            }
            if (overlap < best_overlap) {
                best_overlap = overlap;
                best = candidate;
            }
            if (overlap == 0) {
                break;
            }
        }
        layout.labels.push_back(best);
        occupied.push_back(best.box());
    }
}

}  // namespace

ScatterLayout layout_scatter(const ScatterSpec& spec) {
    ScatterLayout layout;
    const double legend_top = 34;
    const double legend_bottom = legend_top + legend_height(scatter_legend(spec), spec.width - 24);
    const AxisValues values = scatter_axis_values(spec);
    const double top = legend_bottom + 10;
    const double bottom = spec.height - 50;
    const int y_max_ticks = std::max(2, static_cast<int>((bottom - top) / 45));
    // Lay the y axis out once to learn its widest label, then place the plot area.
    const AxisMap probe = make_axis(spec.y_axis, values.ys, bottom, top, y_max_ticks);
    const double left = 36 + widest_tick_label(probe, spec.y_axis.tick_prefix);
    const double right = spec.width - 24;
    layout.plot = Rect{left, top, right - left, bottom - top};
    const int x_max_ticks = std::max(2, static_cast<int>(layout.plot.width / 85));
    layout.x_axis = make_axis(spec.x_axis, values.xs, layout.plot.x, layout.plot.right(), x_max_ticks);
    layout.y_axis = make_axis(spec.y_axis, values.ys, layout.plot.bottom(), layout.plot.y, y_max_ticks);
    place_scatter_points(spec, layout);
    place_scatter_labels(spec, layout);
    return layout;
}

namespace {

// Whiskers with 4 px caps over a point's band, in its series colour, thinner than the marker.
std::string error_bars(const ScatterSpec& spec, std::size_t index, const ScatterLayout& layout,
                       const std::string& colour) {
    const auto found = std::find_if(spec.error_bars.begin(), spec.error_bars.end(),
                                    [&](const ErrorBar& bar) { return bar.point == index; });
    if (found == spec.error_bars.end()) {
        return {};
    }
    const ErrorBar& bar = *found;
    const ScatterPoint& point = spec.points[index];
    std::string out;
    const auto at = [](const AxisMap& axis, double value) {
        return std::clamp(axis.to_pixel(value), std::min(axis.pixel_start, axis.pixel_end),
                          std::max(axis.pixel_start, axis.pixel_end));
    };
    const double px = layout.x_axis.to_pixel(point.x);
    const double py = layout.y_axis.to_pixel(point.y);
    const std::string stroke = fmt::format("stroke=\"{}\" stroke-width=\"1.2\" stroke-opacity=\"0.8\"", colour);
    if (usable(bar.x_low, spec.x_axis.scale) && usable(bar.x_high, spec.x_axis.scale)) {
        const double x1 = at(layout.x_axis, bar.x_low);
        const double x2 = at(layout.x_axis, bar.x_high);
        out += fmt::format("<path class=\"error-bar\" d=\"M{0} {2}L{1} {2}M{0} {3}L{0} {4}M{1} {3}L{1} {4}\" {5}/>",
                           number(x1), number(x2), number(py), number(py - 4), number(py + 4), stroke);
    }
    if (usable(bar.y_low, spec.y_axis.scale) && usable(bar.y_high, spec.y_axis.scale)) {
        const double y1 = at(layout.y_axis, bar.y_low);
        const double y2 = at(layout.y_axis, bar.y_high);
        out += fmt::format("<path class=\"error-bar\" d=\"M{2} {0}L{2} {1}M{3} {0}L{4} {0}M{3} {1}L{4} {1}\" {5}/>",
                           number(y1), number(y2), number(px), number(px - 4), number(px + 4), stroke);
    }
    return out;
}

}  // namespace

std::string render_scatter(const ScatterSpec& spec) {
    const ScatterLayout layout = layout_scatter(spec);
    std::string out = svg_open(spec.id_prefix, spec.width, spec.height, spec.title, spec.description);
    out += render_legend(scatter_legend(spec), 14, 40, spec.width - 24).first;
    out += render_x_axis(layout.x_axis, layout.plot, spec.x_axis);
    out += render_y_axis(layout.y_axis, layout.plot, spec.y_axis);
    for (const ReferenceLine& reference : spec.x_references) {
        if (usable(reference.value, spec.x_axis.scale)) {
            const double px = layout.x_axis.to_pixel(reference.value);
            out += fmt::format(
                "<line class=\"reference\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#b00020\" "
                "stroke-width=\"2\" stroke-dasharray=\"2 2\"/>\n",
                number(px), number(layout.plot.y), number(layout.plot.bottom()));
        }
    }
    for (const ReferenceLine& reference : spec.y_references) {
        if (usable(reference.value, spec.y_axis.scale)) {
            const double py = layout.y_axis.to_pixel(reference.value);
            out += fmt::format(
                "<line class=\"reference\" x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#b00020\" "
                "stroke-width=\"2\" stroke-dasharray=\"2 2\"/>\n",
                number(layout.plot.x), number(py), number(layout.plot.right()));
        }
    }
    if (layout.front_path.size() >= 2) {
        std::string path;
        for (std::size_t i = 0; i < layout.front_path.size(); ++i) {
            path += fmt::format("{}{} {}", i == 0 ? "M" : "L", number(layout.front_path[i].x),
                                number(layout.front_path[i].y));
        }
        out += fmt::format(
            "<path class=\"pareto-front\" d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\" "
            "stroke-dasharray=\"5 3\"/>\n",
            path, front_colour);
    }
    out += "<g class=\"points\">\n";
    for (std::size_t k = 0; k < layout.drawn.size(); ++k) {
        const ScatterPoint& point = spec.points[layout.drawn[k]];
        const SeriesStyle style = series_style(point.series);
        const bool on_front =
            std::find(layout.front.begin(), layout.front.end(), layout.drawn[k]) != layout.front.end();
        out += fmt::format("<g class=\"point{}\" data-x=\"{}\" data-y=\"{}\">", on_front ? " front" : "",
                           number(layout.pixels[k].x), number(layout.pixels[k].y));
        if (on_front) {
            // A ring marks the points on the front, in greyscale too.
            out += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"9\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.2\"/>",
                               number(layout.pixels[k].x), number(layout.pixels[k].y), front_colour);
        }
        out += error_bars(spec, layout.drawn[k], layout, style.colour);
        out += marker_element(style.marker, layout.pixels[k].x, layout.pixels[k].y, 5.5, style.colour);
        out += "</g>\n";
    }
    out += "</g>\n<g class=\"labels\">\n";
    for (const PlacedLabel& label : layout.labels) {
        out += text_element(label.x, label.y, spec.points[label.point].label, small_font_px, halo);
    }
    out += "</g>\n</svg>\n";
    return out;
}

// ---- stacked horizontal bars ------------------------------------------------------------

namespace {

struct CategoryFill {
    std::string colour;
    std::string overlay;  // pattern strokes drawn over the colour ("" = plain)
};

// Six fills: lightness alternates dark/light and every other one carries a pattern, so that
// neighbouring segments stay distinct when printed in grey.
CategoryFill category_fill(std::size_t index) {
    switch (index % 6) {
        case 0:
            return {"#1f2f5f", ""};
        case 1:
            return {"#a3d5f0", "<path d=\"M0 6L6 0M-1 1L1 -1M5 7L7 5\" stroke=\"#1f2f5f\" stroke-width=\"1.3\"/>"};
        case 2:
            return {"#8e2c6f", ""};
        case 3:
            return {"#ef8a2a", "<circle cx=\"3\" cy=\"3\" r=\"1.2\" fill=\"#222222\"/>"};
        case 4:
            return {"#1f8a8a", "<path d=\"M0 3L6 3M3 0L3 6\" stroke=\"#ffffff\" stroke-width=\"1\"/>"};
        default:
            return {"#d9d9d9", "<path d=\"M0 0L6 6M-1 5L1 7M5 -1L7 1\" stroke=\"#555555\" stroke-width=\"1\"/>"};
    }
}

std::size_t fill_of(const StackedBarSpec& spec, std::size_t category) {
    return category < spec.category_fills.size() ? spec.category_fills[category] : category;
}

std::string category_defs(const StackedBarSpec& spec) {
    const std::string& id_prefix = spec.id_prefix;
    std::string out = "<defs>\n";
    for (std::size_t i = 0; i < spec.categories.size(); ++i) {
        const CategoryFill fill = category_fill(fill_of(spec, i));
        out += fmt::format(
            "<pattern id=\"{}-fill{}\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
            "<rect width=\"6\" height=\"6\" fill=\"{}\"/>{}</pattern>\n",
            xml_escape(id_prefix), i, fill.colour, fill.overlay);
    }
    out += "</defs>\n";
    return out;
}

std::vector<LegendItem> bar_legend(const StackedBarSpec& spec) {
    std::vector<LegendItem> items;
    for (std::size_t i = 0; i < spec.categories.size(); ++i) {
        items.push_back({fmt::format("<rect x=\"0\" y=\"-6\" width=\"16\" height=\"12\" fill=\"url(#{}-fill{})\" "
                                     "stroke=\"#333333\" stroke-width=\"0.6\"/>",
                                     xml_escape(spec.id_prefix), i),
                         spec.categories[i], 16});
    }
    items.push_back({"<path d=\"M7 -8L7 8\" stroke=\"#b00020\" stroke-width=\"3\"/>", spec.capacity_label, 14});
    return items;
}

double bar_value(const StackedBar& bar, std::size_t category) {
    const double value = category < bar.values.size() ? bar.values[category] : 0;
    return std::isfinite(value) && value > 0 ? value : 0;
}

}  // namespace

StackedBarLayout layout_stacked_bars(const StackedBarSpec& spec) {
    StackedBarLayout layout;
    const double legend_bottom = 34 + legend_height(bar_legend(spec), spec.width - 24);
    double widest_label = 0;
    double widest_note = 0;
    std::vector<double> extents;
    for (const StackedBar& bar : spec.bars) {
        widest_label = std::max(widest_label, estimated_text_width(bar.label, small_font_px));
        widest_note = std::max(widest_note, estimated_text_width(bar.note, small_font_px));
        double total = 0;
        for (std::size_t c = 0; c < spec.categories.size(); ++c) {
            total += bar_value(bar, c);
        }
        extents.push_back(total);
        if (bar.capacity && std::isfinite(*bar.capacity)) {
            extents.push_back(*bar.capacity);
        }
    }
    const double left = 16 + std::min(widest_label, spec.width * 0.35);
    const double right = spec.width - 16 - std::min(widest_note + 8, spec.width * 0.25);
    const double row_height = spec.bar_height + 14;
    const double top = legend_bottom + 10;
    const double plot_height = row_height * static_cast<double>(std::max<std::size_t>(spec.bars.size(), 1));
    layout.plot = Rect{left, top, right - left, plot_height};
    AxisSpec axis;
    axis.include_zero = true;
    layout.value_axis = make_axis(axis, extents, layout.plot.x, layout.plot.right(),
                                  std::max(2, static_cast<int>(layout.plot.width / 70)));
    layout.height = layout.plot.bottom() + 50;
    for (std::size_t b = 0; b < spec.bars.size(); ++b) {
        const StackedBar& bar = spec.bars[b];
        const double y = layout.plot.y + static_cast<double>(b) * row_height + 7;
        std::vector<Rect> segments;
        double cumulative = 0;
        for (std::size_t c = 0; c < spec.categories.size(); ++c) {
            const double start = layout.value_axis.to_pixel(cumulative);
            cumulative += bar_value(bar, c);
            const double end = layout.value_axis.to_pixel(cumulative);
            segments.push_back(Rect{start, y, end - start, spec.bar_height});
        }
        layout.segments.push_back(segments);
        if (bar.capacity && std::isfinite(*bar.capacity) && *bar.capacity >= 0) {
            layout.capacity_x.emplace_back(layout.value_axis.to_pixel(*bar.capacity));
        } else {
            layout.capacity_x.emplace_back(std::nullopt);
        }
    }
    return layout;
}

std::string render_stacked_bars(const StackedBarSpec& spec) {
    const StackedBarLayout layout = layout_stacked_bars(spec);
    std::string out = svg_open(spec.id_prefix, spec.width, layout.height, spec.title, spec.description);
    out += category_defs(spec);
    out += render_legend(bar_legend(spec), 14, 40, spec.width - 24).first;
    AxisSpec axis;
    axis.label = spec.value_label;
    out += render_x_axis(layout.value_axis, layout.plot, axis);
    const double row_height = spec.bar_height + 14;
    for (std::size_t b = 0; b < spec.bars.size(); ++b) {
        const StackedBar& bar = spec.bars[b];
        const double row_y = layout.plot.y + static_cast<double>(b) * row_height;
        out += fmt::format("<g class=\"bar\" data-label=\"{}\">\n", xml_escape(bar.label));
        out += text_element(layout.plot.x - 8, row_y + 7 + spec.bar_height / 2 + 4, bar.label, small_font_px,
                            "text-anchor=\"end\"");
        for (std::size_t c = 0; c < layout.segments[b].size(); ++c) {
            const Rect& segment = layout.segments[b][c];
            if (segment.width <= 0) {
                continue;
            }
            out += fmt::format(
                "<rect class=\"segment\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"url(#{}-fill{})\" "
                "stroke=\"#ffffff\" stroke-width=\"0.8\"><title>{}</title></rect>\n",
                number(segment.x), number(segment.y), number(segment.width), number(segment.height),
                xml_escape(spec.id_prefix), c,
                xml_escape(fmt::format("{}: {}", spec.categories[c], format_tick(bar_value(bar, c)))));
        }
        if (layout.capacity_x[b]) {
            out += fmt::format(
                "<line class=\"capacity\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#b00020\" "
                "stroke-width=\"3\"/>\n",
                number(*layout.capacity_x[b]), number(row_y + 2), number(row_y + 12 + spec.bar_height));
        }
        if (!bar.note.empty()) {
            out += text_element(layout.plot.right() + 8, row_y + 7 + spec.bar_height / 2 + 4, bar.note, small_font_px);
        }
        out += "</g>\n";
    }
    out += "</svg>\n";
    return out;
}

// ---- tornado ----------------------------------------------------------------------------

namespace {

constexpr const char* tornado_low_colour = "#2b5c8a";   // dark: the input at its low value
constexpr const char* tornado_high_colour = "#9ecae1";  // light: at its high value

// `text` cut at the end, with "…", to at most `max_width` pixels (whole UTF-8 code points).
std::string fitted(std::string text, double max_width, double font_px) {
    if (estimated_text_width(text, font_px) <= max_width) {
        return text;
    }
    while (!text.empty() && estimated_text_width(text + "…", font_px) > max_width) {
        std::size_t end = text.size();
        do {
            --end;  // back to the lead byte of the last code point
        } while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U);
        text.resize(end);
    }
    return text + "…";
}

std::vector<LegendItem> tornado_legend() {
    return {{fmt::format("<rect x=\"0\" y=\"-6\" width=\"18\" height=\"12\" fill=\"{}\"/>", tornado_low_colour),
             "input at its low value", 18},
            {fmt::format("<rect x=\"0\" y=\"-6\" width=\"18\" height=\"12\" fill=\"{}\"/>", tornado_high_colour),
             "input at its high value", 18}};
}

}  // namespace

TornadoLayout layout_tornado(const TornadoSpec& spec) {
    TornadoLayout layout;
    const double legend_bottom = 34 + legend_height(tornado_legend(), spec.width - 24);
    double widest_label = 0;
    double widest_note = 0;
    std::vector<double> extents{spec.base};
    for (const TornadoBar& bar : spec.bars) {
        widest_label = std::max(widest_label, estimated_text_width(bar.label, small_font_px));
        widest_note = std::max(widest_note, estimated_text_width(bar.note, small_font_px));
        for (const double value : {bar.low_output, bar.high_output}) {
            if (std::isfinite(value)) {
                extents.push_back(value);
            }
        }
    }
    const double left = 16 + std::min(widest_label, spec.width * 0.35);
    const double right = spec.width - 16 - std::min(widest_note + 8, spec.width * 0.25);
    const double row_height = spec.bar_height + 12;
    const double top = legend_bottom + 10;
    layout.plot =
        Rect{left, top, right - left, row_height * static_cast<double>(std::max<std::size_t>(spec.bars.size(), 1))};
    AxisSpec axis;
    axis.tick_prefix = spec.tick_prefix;
    layout.value_axis = make_axis(axis, extents, layout.plot.x, layout.plot.right(),
                                  std::max(2, static_cast<int>(layout.plot.width / 80)));
    layout.height = layout.plot.bottom() + 50;
    layout.base_x = layout.value_axis.to_pixel(spec.base);
    for (std::size_t b = 0; b < spec.bars.size(); ++b) {
        const TornadoBar& bar = spec.bars[b];
        const double y = layout.plot.y + static_cast<double>(b) * row_height + 6;
        const auto span = [&](double value) {
            const double x = std::isfinite(value) ? layout.value_axis.to_pixel(value) : layout.base_x;
            return Rect{std::min(x, layout.base_x), y, std::fabs(x - layout.base_x), spec.bar_height};
        };
        layout.low_bars.push_back(span(bar.low_output));
        layout.high_bars.push_back(span(bar.high_output));
    }
    return layout;
}

std::string render_tornado(const TornadoSpec& spec) {
    const TornadoLayout layout = layout_tornado(spec);
    std::string out = svg_open(spec.id_prefix, spec.width, layout.height, spec.title, spec.description);
    out += render_legend(tornado_legend(), 14, 40, spec.width - 24).first;
    AxisSpec axis;
    axis.label = spec.value_label;
    axis.tick_prefix = spec.tick_prefix;
    out += render_x_axis(layout.value_axis, layout.plot, axis);
    const double row_height = spec.bar_height + 12;
    for (std::size_t b = 0; b < spec.bars.size(); ++b) {
        const TornadoBar& bar = spec.bars[b];
        const double text_y = layout.plot.y + static_cast<double>(b) * row_height + 6 + spec.bar_height / 2 + 4;
        out += fmt::format("<g class=\"swing\" data-label=\"{}\">\n", xml_escape(bar.label));
        // Labels longer than the room left of the plot are cut; the bar's tooltip keeps them whole.
        out += text_element(layout.plot.x - 8, text_y, fitted(bar.label, layout.plot.x - 14, small_font_px),
                            small_font_px, "text-anchor=\"end\"");
        // Each half drawn at least 1 px wide, so that an input that moves nothing still shows.
        const auto rect = [&](const Rect& r, const char* colour, double value) {
            return fmt::format(
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"#333333\" "
                "stroke-width=\"0.6\"><title>{}</title></rect>\n",
                number(r.x), number(r.y), number(std::max(1.0, r.width)), number(r.height), colour,
                xml_escape(bar.label + ": " + format_tick(value, spec.tick_prefix)));
        };
        out += rect(layout.low_bars[b], tornado_low_colour, bar.low_output);
        out += rect(layout.high_bars[b], tornado_high_colour, bar.high_output);
        if (!bar.note.empty()) {
            out += text_element(layout.plot.right() + 8, text_y, bar.note, small_font_px);
        }
        out += "</g>\n";
    }
    out += fmt::format(
        "<line class=\"base\" x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#111111\" "
        "stroke-width=\"1.5\"/>\n",
        number(layout.base_x), number(layout.plot.y), number(layout.plot.bottom()));
    out += "</svg>\n";
    return out;
}

// ---- line chart -------------------------------------------------------------------------

namespace {

const char* dash_array(Dash dash) {
    switch (dash) {
        case Dash::dashed:
            return " stroke-dasharray=\"9 5\"";
        case Dash::dotted:
            return " stroke-dasharray=\"2 4\" stroke-linecap=\"round\"";
        case Dash::solid:
            break;
    }
    return "";
}

std::vector<LegendItem> line_legend(const LineChartSpec& spec) {
    std::vector<LegendItem> items;
    for (const LineSeries& series : spec.series) {
        const SeriesStyle style = series_style(series.style);
        items.push_back({fmt::format("<path d=\"M0 0L26 0\" stroke=\"{}\" stroke-width=\"2.5\"{}/>{}", style.colour,
                                     dash_array(series.dash), marker_element(style.marker, 13, 0, 4.5, style.colour)),
                         series.name, 26});
    }
    if (!spec.markers.empty()) {
        items.push_back(
            {"<circle cx=\"7\" cy=\"0\" r=\"6\" fill=\"#ffffff\" stroke=\"#111111\" stroke-width=\"2\"/>"
             "<circle cx=\"7\" cy=\"0\" r=\"2\" fill=\"#111111\"/>",
             "break-even", 14});
    }
    return items;
}

}  // namespace

LineChartLayout layout_line_chart(const LineChartSpec& spec) {
    LineChartLayout layout;
    const double legend_bottom = 34 + legend_height(line_legend(spec), spec.width - 24);
    std::vector<double> xs;
    std::vector<double> ys;
    for (const LineSeries& series : spec.series) {
        for (const Point& point : series.points) {
            if (usable(point.x, spec.x_axis.scale) && usable(point.y, spec.y_axis.scale)) {
                xs.push_back(point.x);
                ys.push_back(point.y);
            }
        }
    }
    const double top = legend_bottom + 10;
    const double bottom = spec.height - 50;
    const int y_max_ticks = std::max(2, static_cast<int>((bottom - top) / 45));
    const AxisMap probe = make_axis(spec.y_axis, ys, bottom, top, y_max_ticks);
    const double left = 36 + widest_tick_label(probe, spec.y_axis.tick_prefix);
    double widest_end_label = 0;
    for (const LineSeries& series : spec.series) {
        widest_end_label = std::max(widest_end_label, estimated_text_width(series.end_label, small_font_px));
    }
    // End labels need room right of the plot: a marker (12 px) and the text.
    const double right_margin = widest_end_label > 0 ? 16 + 12 + widest_end_label : 24;
    layout.plot = Rect{left, top, spec.width - right_margin - left, bottom - top};
    layout.x_axis = make_axis(spec.x_axis, xs, layout.plot.x, layout.plot.right(),
                              std::max(2, static_cast<int>(layout.plot.width / 70)));
    layout.y_axis = make_axis(spec.y_axis, ys, layout.plot.bottom(), layout.plot.y, y_max_ticks);
    for (const LineSeries& series : spec.series) {
        std::vector<Point> pixels;
        for (const Point& point : series.points) {
            if (usable(point.x, spec.x_axis.scale) && usable(point.y, spec.y_axis.scale)) {
                pixels.push_back(Point{layout.x_axis.to_pixel(point.x), layout.y_axis.to_pixel(point.y)});
            }
        }
        layout.series_pixels.push_back(pixels);
    }
    for (const LineMarker& marker : spec.markers) {
        if (usable(marker.x, spec.x_axis.scale) && usable(marker.y, spec.y_axis.scale)) {
            layout.marker_pixels.push_back(Point{layout.x_axis.to_pixel(marker.x), layout.y_axis.to_pixel(marker.y)});
        }
    }
    // Marker labels sit at the foot of their dotted drop line, beside it (towards the plot's
    // middle), in the lowest row where they clear the labels placed before them.
    for (std::size_t m = 0; m < layout.marker_pixels.size(); ++m) {
        const Point pixel = layout.marker_pixels[m];
        std::size_t spec_index = 0;
        for (std::size_t seen = 0, i = 0; i < spec.markers.size(); ++i) {
            if (usable(spec.markers[i].x, spec.x_axis.scale) && usable(spec.markers[i].y, spec.y_axis.scale)) {
                if (seen++ == m) {
                    spec_index = i;
                    break;
                }
            }
        }
        const double width = estimated_text_width(spec.markers[spec_index].label, small_font_px) * 1.08;  // bold
        const bool right_half = pixel.x > layout.plot.x + layout.plot.width / 2;
        double x = right_half ? pixel.x - 6 - width : pixel.x + 6;
        x = std::clamp(x, layout.plot.x + 2, std::max(layout.plot.x + 2, layout.plot.right() - width - 2));
        PlacedLabel placed{spec_index, x, layout.plot.bottom() - 6, width, small_font_px + 2};
        for (int row = 0; row < 12; ++row) {
            placed.y = layout.plot.bottom() - 6 - row * 15.0;
            const bool clear =
                std::none_of(layout.marker_labels.begin(), layout.marker_labels.end(),
                             [&](const PlacedLabel& other) { return overlap_area(placed.box(), other.box()) > 0; });
            if (clear) {
                break;
            }
        }
        layout.marker_labels.push_back(placed);
    }
    // End labels at the height of each line's last point, then pushed apart (13 px apart at
    // least) and kept within the plot's height.
    constexpr double label_gap = 13;
    for (std::size_t s = 0; s < spec.series.size(); ++s) {
        if (!spec.series[s].end_label.empty() && !layout.series_pixels[s].empty()) {
            const double width = 12 + estimated_text_width(spec.series[s].end_label, small_font_px);
            layout.end_labels.push_back(
                PlacedLabel{s, layout.plot.right() + 6, layout.series_pixels[s].back().y + 4, width, label_gap});
        }
    }
    std::stable_sort(layout.end_labels.begin(), layout.end_labels.end(),
                     [](const PlacedLabel& a, const PlacedLabel& b) { return a.y < b.y; });
    const double lowest = layout.plot.bottom() + 4;
    const double highest = layout.plot.y + 10;
    for (std::size_t i = 0; i < layout.end_labels.size(); ++i) {
        const double floor_y = i == 0 ? highest : layout.end_labels[i - 1].y + label_gap;
        layout.end_labels[i].y = std::max(layout.end_labels[i].y, floor_y);
    }
    for (std::size_t i = layout.end_labels.size(); i-- > 0;) {
        const double ceiling_y = i + 1 == layout.end_labels.size() ? lowest : layout.end_labels[i + 1].y - label_gap;
        layout.end_labels[i].y = std::min(layout.end_labels[i].y, ceiling_y);
    }
    return layout;
}

std::string render_line_chart(const LineChartSpec& spec) {
    const LineChartLayout layout = layout_line_chart(spec);
    std::string out = svg_open(spec.id_prefix, spec.width, spec.height, spec.title, spec.description);
    out += render_legend(line_legend(spec), 14, 40, spec.width - 24).first;
    out += render_x_axis(layout.x_axis, layout.plot, spec.x_axis);
    out += render_y_axis(layout.y_axis, layout.plot, spec.y_axis);
    for (std::size_t s = 0; s < spec.series.size(); ++s) {
        const std::vector<Point>& pixels = layout.series_pixels[s];
        if (pixels.empty()) {
            continue;
        }
        const SeriesStyle style = series_style(spec.series[s].style);
        std::string path;
        for (std::size_t i = 0; i < pixels.size(); ++i) {
            path += fmt::format("{}{} {}", i == 0 ? "M" : "L", number(pixels[i].x), number(pixels[i].y));
        }
        out += fmt::format("<g class=\"series\" data-name=\"{}\">\n", xml_escape(spec.series[s].name));
        out += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2.5\"{}/>\n", path, style.colour,
                           dash_array(spec.series[s].dash));
        // Markers at about six places along the line tell the series apart without colour;
        // each series starts at a different offset so that coinciding lines stay visible.
        const std::size_t stride = std::max<std::size_t>(1, pixels.size() / 6);
        for (std::size_t i = (s * stride / 3) % stride; i < pixels.size(); i += stride) {
            out += marker_element(style.marker, pixels[i].x, pixels[i].y, 4.5, style.colour);
        }
        out += "\n</g>\n";
    }
    for (const PlacedLabel& label : layout.end_labels) {
        const SeriesStyle style = series_style(spec.series[label.point].style);
        out += fmt::format("<g class=\"end-label\">{}",
                           marker_element(style.marker, label.x + 4, label.y - 4, 4, style.colour));
        out += text_element(label.x + 12, label.y, spec.series[label.point].end_label, small_font_px);
        out += "</g>\n";
    }
    std::size_t drawn_marker = 0;
    for (const LineMarker& marker : spec.markers) {
        if (!usable(marker.x, spec.x_axis.scale) || !usable(marker.y, spec.y_axis.scale)) {
            continue;
        }
        const PlacedLabel& label = layout.marker_labels[drawn_marker];
        const Point pixel = layout.marker_pixels[drawn_marker++];
        out += fmt::format(
            "<g class=\"marker\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#111111\" "
            "stroke-width=\"1\" stroke-dasharray=\"3 3\"/>\n",
            number(pixel.x), number(pixel.y), number(layout.plot.bottom()));
        out += fmt::format(
            "<circle cx=\"{0}\" cy=\"{1}\" r=\"6\" fill=\"#ffffff\" stroke=\"#111111\" stroke-width=\"2\"/>"
            "<circle cx=\"{0}\" cy=\"{1}\" r=\"2\" fill=\"#111111\"/>\n",
            number(pixel.x), number(pixel.y));
        out += text_element(label.x, label.y, marker.label, small_font_px, std::string("font-weight=\"bold\" ") + halo);
        out += "</g>\n";
    }
    out += "</svg>\n";
    return out;
}

std::optional<Point> first_crossing(const std::vector<Point>& a, const std::vector<Point>& b) {
    if (a.size() < 2 || b.size() < 2) {
        return std::nullopt;
    }
    auto value_at = [](const std::vector<Point>& line, double x) {
        for (std::size_t i = 1; i < line.size(); ++i) {
            if (x <= line[i].x) {
                const Point& p = line[i - 1];
                const Point& q = line[i];
                return q.x > p.x ? p.y + (q.y - p.y) * (x - p.x) / (q.x - p.x) : q.y;
            }
        }
        return line.back().y;
    };
    const double low = std::max(a.front().x, b.front().x);
    const double high = std::min(a.back().x, b.back().x);
    if (!(high > low)) {
        return std::nullopt;
    }
    std::vector<double> grid{low, high};
    for (const std::vector<Point>* line : {&a, &b}) {
        for (const Point& point : *line) {
            if (point.x > low && point.x < high) {
                grid.push_back(point.x);
            }
        }
    }
    std::sort(grid.begin(), grid.end());
    grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
    double previous_x = grid.front();
    double previous_gap = value_at(a, previous_x) - value_at(b, previous_x);
    for (std::size_t i = 1; i < grid.size(); ++i) {
        const double x = grid[i];
        const double gap = value_at(a, x) - value_at(b, x);
        if (previous_gap != 0 && (gap == 0 || (gap > 0) != (previous_gap > 0))) {
            const double t = previous_gap / (previous_gap - gap);
            const double crossing_x = previous_x + t * (x - previous_x);
            return Point{crossing_x, value_at(a, crossing_x)};
        }
        previous_x = x;
        previous_gap = gap;
    }
    return std::nullopt;
}

}  // namespace gpusel::svg
