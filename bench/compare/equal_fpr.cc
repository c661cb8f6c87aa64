// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Measures the false-positive curves of the equal-FPR view (equal_fpr.h).
#include "equal_fpr.h"

#include <memory>

#include "filter_families.h"
#include "rocksdb/table.h"
#include "table/block_based/filter_policy_internal.h"

namespace filter_compare {

namespace rdb = ROCKSDB_NAMESPACE;

using filter_bench::FixedKeys;

std::vector<FprPoint> MeasureFprCurve(const std::string& family,
                                      const std::vector<int>& budgets,
                                      uint64_t keys, uint64_t probes) {
  const FixedKeys present(keys, 'p');
  const FixedKeys absent(probes, 'a');
  std::vector<FprPoint> points;
  for (int bits : budgets) {
    const auto policy = filter_bench::MakeFilterPolicy(family, bits);
    rdb::BlockBasedTableOptions table_options;
    table_options.optimize_filters_for_memory = false;
    rdb::FilterBuildingContext context(table_options);
    std::unique_ptr<rdb::FilterBitsBuilder> builder(
        static_cast<const rdb::FilterPolicy*>(policy.get())
            ->GetBuilderWithContext(context));
    for (uint64_t i = 0; i < present.size(); ++i) builder->AddKey(present[i]);
    std::unique_ptr<const char[]> buffer;
    const rdb::Slice block = builder->Finish(&buffer);
    std::unique_ptr<rdb::FilterBitsReader> reader(
        policy->GetFilterBitsReader(block));
    FprPoint point;
    point.budget = bits;
    point.bits_per_key =
        8.0 * static_cast<double>(block.size()) / static_cast<double>(keys);
    point.probes = probes;
    for (uint64_t i = 0; i < absent.size(); ++i) {
      point.false_positives += reader->MayMatch(absent[i]) ? 1 : 0;
    }
    points.push_back(point);
  }
  return points;
}

}  // namespace filter_compare
