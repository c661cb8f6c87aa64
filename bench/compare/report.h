// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// The comparison's output: Markdown tables for the terminal and the README,
// and CSV and JSON files for the charts (bench/plots.gnuplot). Every figure
// of a filter is also given as a paired ratio to the Bloom filter of the same
// budget, with its interval (paired_stats.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fpr_curve.h"
#include "workloads.h"

namespace filter_compare {

struct PolicyRun {
  std::string family;  // none, bloom, ribbon, cuckoo
  int bits = 0;        // the budget given to the policy
  std::string options_string;
  std::string expected_name;  // FilterPolicy::Name(), "" for none
  double sst_bits_per_key = 0;
  double build_seconds = 0;
  std::string Label() const {
    return family == "none" ? "none" : family + ":" + std::to_string(bits);
  }
};

struct RegimeResults {
  std::string name;         // memory, io
  std::string description;  // one line: what the regime is
  std::vector<Workload> workloads;
  // samples[policy][workload][repetition]
  std::vector<std::vector<std::vector<Sample>>> samples;
};

struct FprCurve {
  std::string family;
  std::vector<FprPoint> points;
};

// The index of the Bloom policy with the same budget, or -1.
int BloomIndexFor(const std::vector<PolicyRun>& policies, size_t policy);

std::string FormatRegime(const std::vector<PolicyRun>& policies,
                         const RegimeResults& regime);
// For the workloads of absent keys, each level's false positives and
// block-cache misses per 1000 lookups (medians over repetitions): where the
// storage reads come from.
std::string FormatLevels(const std::vector<PolicyRun>& policies,
                         const RegimeResults& regime);
// Bits per key and whole-DB filter memory for each target rate.
std::string FormatEqualFpr(const std::vector<FprCurve>& curves,
                           const std::vector<double>& targets,
                           uint64_t db_keys);

// One row per regime, workload and policy.
void WriteCsv(const std::string& file, const std::vector<PolicyRun>& policies,
              const std::vector<RegimeResults>& regimes);
// One row per family and budget, with the bound log2(1/FPR).
void WriteFprCsv(const std::string& file, const std::vector<FprCurve>& curves);
void WriteJson(const std::string& file, const std::string& settings_json,
               const std::vector<PolicyRun>& policies,
               const std::vector<RegimeResults>& regimes,
               const std::vector<FprCurve>& curves);

}  // namespace filter_compare
