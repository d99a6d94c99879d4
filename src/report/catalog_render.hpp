#pragma once
// Renderers of `gpusel catalog list` and `catalog show`: pure functions of the catalog.

#include <iosfwd>

#include "catalog/catalog.hpp"

namespace gpusel {

struct CatalogStyle {
    bool quiet = false;  // --quiet: no summary line under the list
};

// One row per GPU: memory, bandwidth, dense BF16/FP8 TFLOPS, power, link, segment and the
// lowest new purchase and on-demand price per GPU of any offer ("~" marks an estimate), then a
// summary line unless quiet.
void render_catalog_list(const Catalog& catalog, std::ostream& out, const CatalogStyle& style);

// Every field of `gpu` (an entry of `catalog`), its offers with their prices and dates, and its
// sources.
void render_catalog_show(const Catalog& catalog, const GpuSpec& gpu, std::ostream& out);

}  // namespace gpusel
