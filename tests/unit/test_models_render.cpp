// The `models` and `catalog` listings on hand-built and built-in inputs.

#include <catch2/catch.hpp>

#include <sstream>

#include "report/catalog_render.hpp"
#include "report/models_render.hpp"
#include "support/test_support.hpp"

TEST_CASE("render::models list: a dash where a value does not apply", "[render][models]") {
    gpusel::ModelSpec cnn;
    cnn.name = "resnet-50";
    cnn.family = gpusel::ModelFamily::cnn;
    cnn.params = 25.6e6;
    std::ostringstream out;
    gpusel::render_models_list({cnn}, out);
    CHECK(out.str() ==
          "name       family  params  layers  hidden  heads/kv  ffn  vocab\n"
          "resnet-50  cnn      25.6M       —       —         —    —      —\n");
}

TEST_CASE("render::catalog show: the entry, its offers and sources", "[render][catalog]") {
    const gpusel::Catalog& catalog = gpusel::test::catalog();
    const gpusel::GpuSpec* gpu = catalog.find("H100-SXM5");
    REQUIRE(gpu != nullptr);
    std::ostringstream out;
    gpusel::render_catalog_show(catalog, *gpu, out);
    CHECK_THAT(out.str(), Catch::Matchers::StartsWith("H100-SXM5 — "));
    CHECK_THAT(out.str(), Catch::Matchers::Contains("\n  sources:\n    - "));
}
