// The `verify` renderers on a hand-built verification.

#include <catch2/catch.hpp>

#include <sstream>

#include "report/verify_render.hpp"

TEST_CASE("render::verify text: a failed check is tabled and explained", "[render][verify]") {
    gpusel::VerifyResult result;
    result.file = "node1.txt";
    result.expected_id = "H100-SXM5";
    result.expected_name = "NVIDIA H100 SXM5 80GB";
    gpusel::GpuVerification gpu;
    gpu.bus_id = "00000000:18:00.0";
    gpu.product_name = "NVIDIA H100 PCIe";
    gpu.checks.push_back({"product", gpusel::CheckStatus::fail, "H100-SXM5", "H100-PCIe", "a PCIe card, not SXM5", 12});
    gpu.checks.push_back({"ecc", gpusel::CheckStatus::pass, "on", "on", "", 0});
    result.verification.gpus.push_back(gpu);
    result.verification.notes = {"a note"};
    std::ostringstream out;
    gpusel::render_verify_text(result, out, gpusel::VerifyStyle{true});
    CHECK(out.str() ==
          "verify: node1.txt against H100-SXM5 (NVIDIA H100 SXM5 80GB): FAILED, 1 of 1 GPU\n"
          "\n"
          "GPU 00000000:18:00.0 NVIDIA H100 PCIe\n"
          "  check    status  expected   observed\n"
          "  product  FAIL    H100-SXM5  H100-PCIe\n"
          "  ecc      pass    on         on\n"
          "  FAIL product (line 12): a PCIe card, not SXM5\n");
    std::ostringstream json;
    gpusel::render_verify_json(result, json);
    CHECK_THAT(json.str(), Catch::Matchers::Contains("\"passed\": false,"));
    CHECK_THAT(json.str(), Catch::Matchers::Contains("\"line\": 12"));
}
