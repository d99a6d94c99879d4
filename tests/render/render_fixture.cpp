// Renders the hand-built PlanReport of tests/support/plan_fixture.hpp in one format, for checks
// that run outside C++ (tests/render/check_xlsx.py, check_goldens.sh) and for looking at it by eye:
//   gpusel_render_fixture table [WIDTH] [color] [show-rejected]
//   gpusel_render_fixture markdown|json|csv
//   gpusel_render_fixture xlsx FILE

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "report/render.hpp"
#include "support/plan_fixture.hpp"

int main(int argc, char** argv) {
    const gpusel::PlanReport report = gpusel::test::fixture_plan_report();
    const std::string format = argc > 1 ? argv[1] : "table";
    if (format == "table") {
        gpusel::TerminalStyle style;
        gpusel::PlanTableOptions options;
        if (argc > 2) {
            style.width = static_cast<std::size_t>(std::strtoul(argv[2], nullptr, 10));
        }
        for (int i = 3; i < argc; ++i) {
            const std::string flag = argv[i];
            style.color = style.color || flag == "color";
            options.show_rejected = options.show_rejected || flag == "show-rejected";
        }
        gpusel::render_plan_table(report, std::cout, style, options);
    } else if (format == "markdown") {
        gpusel::render_plan_markdown(report, std::cout);
    } else if (format == "json") {
        gpusel::render_plan_json(report, std::cout);
    } else if (format == "csv") {
        gpusel::render_plan_csv(report, std::cout);
    } else if (format == "xlsx" && argc > 2) {
        gpusel::XlsxOptions options;
        options.created = 1767225600;  // 2026-01-01T00:00:00Z: reproducible bytes
        const std::string bytes = gpusel::render_plan_xlsx(report, options);
        std::ofstream file(argv[2], std::ios::binary);
        file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return file.good() ? 0 : 1;
    } else {
        std::cerr << "usage: gpusel_render_fixture table [WIDTH] [color] [show-rejected] | markdown | json | csv | "
                     "xlsx FILE\n";
        return 2;
    }
    return 0;
}
