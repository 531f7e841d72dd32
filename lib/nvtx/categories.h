// NVTX category names: nvtxNameCategoryA/W (the default domain) and nvtxDomainNameCategoryA/W name
// a category number within one domain; events carry the number (nvtxEventAttributes_t::category).
// Ranges keep the number (range_table.h, intervals.h) and the dump looks the name up, so a name given
// after the range was pushed still applies. At most kMaxCategoryNames (domain, number) pairs are
// named; later ones are not kept and such a category is reported by its number, as an unnamed one is.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vramtrace::nvtx {

constexpr uint32_t kMaxCategoryNames = 256;

// Names `category` (never 0: 0 means no category) of `domain`; a later name of the same pair
// replaces it. The text is normalised and cut like a range name (range_table.h).
void name_category(uint16_t domain, uint32_t category, const char *name);
// The name of `category` in `domain`, nullptr when it has none (or category is 0).
const char *category_name(uint16_t domain, uint32_t category);
// The text a report gives the category: its name, else its number in decimal; "" for 0. Writes a
// NUL-terminated string of at most kMaxNameBytes bytes to out (range_table.h).
size_t category_text(uint16_t domain, uint32_t category, char *out);

// Tests only: forget every category name.
void reset_categories_for_testing();

} // namespace vramtrace::nvtx
