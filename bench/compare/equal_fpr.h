// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The equal-FPR view: each family's false-positive rate measured on a grid of
// bits-per-key budgets, through the same FilterBitsBuilder/FilterBitsReader
// interface RocksDB uses, and the bits per key (and filter memory) each needs
// for a target rate (fpr_curve.h interpolates).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpr_curve.h"

namespace filter_compare {

// family: bloom, ribbon or cuckoo. Builds one filter of `keys` keys per
// budget and probes it with `probes` absent keys.
std::vector<FprPoint> MeasureFprCurve(const std::string& family,
                                      const std::vector<int>& budgets,
                                      uint64_t keys, uint64_t probes);

}  // namespace filter_compare
