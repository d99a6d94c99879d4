// Writes the HTML report of a hand-built plan (tests/support/sample_plan.hpp) to a file, so
// that the browser test can render the report without depending on the estimators.
//   gpusel_sample_report VARIANT OUTPUT.html

#include <fstream>
#include <iostream>
#include <string>

#include "report/html_report.hpp"
#include "support/sample_plan.hpp"

int main(int argc, char** argv) {
    if (argc != 3) {
        std::cerr << "usage: gpusel_sample_report 1|2 OUTPUT.html\n";
        return 2;
    }
    const std::string variant = argv[1];
    if (variant != "1" && variant != "2") {
        std::cerr << "gpusel_sample_report: variant must be 1 or 2\n";
        return 2;
    }
    std::ofstream out(argv[2], std::ios::binary);
    out << gpusel::render_plan_html(gpusel::test::sample_plan_report(variant == "1" ? 1 : 2));
    out.close();
    if (!out) {
        std::cerr << "gpusel_sample_report: cannot write " << argv[2] << "\n";
        return 4;
    }
    return 0;
}
