// SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
// Formats and writes the comparison's results (see report.h).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>

#include "paired_stats.h"

namespace filter_compare {

namespace {

std::string Format(const char* format, double value) {
  char text[64];
  std::snprintf(text, sizeof(text), format, value);
  return text;
}

// "median× [low–high]", with "within noise" when the range holds 1.0.
std::string FormatRatio(const PairedRatio& ratio) {
  if (!ratio.valid) return "";
  std::string text = Format("%.2f×", ratio.median);
  if (ratio.pairs > 1) {
    text += " [" + Format("%.2f", ratio.low) + "–" +
            Format("%.2f", ratio.high) + "]";
  }
  if (ratio.WithinNoise()) text += " within noise";
  return text;
}

using Metric = std::function<double(const Sample&)>;

std::vector<double> PerRepetition(const std::vector<Sample>& samples,
                                  const Metric& metric) {
  std::vector<double> values;
  for (const Sample& sample : samples) values.push_back(metric(sample));
  return values;
}

std::vector<double> AllLatencies(const std::vector<Sample>& samples) {
  std::vector<double> all;
  for (const Sample& sample : samples) {
    all.insert(all.end(), sample.latency_us.begin(), sample.latency_us.end());
  }
  return all;
}

// The median of the repetitions' measured FPRs, -1 if none was measured.
double MedianFpr(const std::vector<Sample>& samples) {
  std::vector<double> rates;
  for (const Sample& sample : samples) {
    if (sample.false_positive_rate >= 0) {
      rates.push_back(sample.false_positive_rate);
    }
  }
  return rates.empty() ? -1 : Median(rates);
}

const Metric kOps = [](const Sample& s) { return s.OpsPerSecond(); };
const Metric kCpu = [](const Sample& s) { return s.CpuMicrosPerOp(); };
const Metric kReads = [](const Sample& s) { return s.StorageReadsPer1000(); };
const Metric kKib = [](const Sample& s) { return s.KibReadPer1000(); };
const Metric kChecks = [](const Sample& s) {
  return s.FilterChecksPerLookup();
};

// The figures of one regime, workload and policy.
struct Summary {
  double ops = 0, cpu_us = 0, p50_us = 0, p99_us = 0, reads = 0, kib = 0,
         checks = 0, fpr = -1;
  PairedRatio ops_ratio, reads_ratio, cpu_ratio;
};

Summary Summarize(const std::vector<PolicyRun>& policies,
                  const RegimeResults& regime, size_t p, size_t w) {
  const std::vector<Sample>& samples = regime.samples[p][w];
  Summary summary;
  summary.ops = Median(PerRepetition(samples, kOps));
  summary.cpu_us = Median(PerRepetition(samples, kCpu));
  const std::vector<double> latencies = AllLatencies(samples);
  summary.p50_us = Quantile(latencies, 0.50);
  summary.p99_us = Quantile(latencies, 0.99);
  summary.reads = Median(PerRepetition(samples, kReads));
  summary.kib = Median(PerRepetition(samples, kKib));
  summary.checks = Median(PerRepetition(samples, kChecks));
  summary.fpr = MedianFpr(samples);
  const int bloom = BloomIndexFor(policies, p);
  if (bloom >= 0) {
    const std::vector<Sample>& base =
        regime.samples[static_cast<size_t>(bloom)][w];
    summary.ops_ratio =
        RatioOf(PerRepetition(samples, kOps), PerRepetition(base, kOps));
    summary.reads_ratio =
        RatioOf(PerRepetition(samples, kReads), PerRepetition(base, kReads));
    summary.cpu_ratio =
        RatioOf(PerRepetition(samples, kCpu), PerRepetition(base, kCpu));
  }
  return summary;
}

// The per-level perf context counts the filter checks of Get and MultiGet;
// a prefix seek's checks are not counted there.
bool CountsFilterChecks(Workload workload) {
  return workload != Workload::kSeekPrefix &&
         workload != Workload::kSeekMissingPrefix;
}

std::string FormatBytes(double bytes) {
  if (bytes >= 1 << 20) return Format("%.1f MiB", bytes / (1 << 20));
  return Format("%.0f KiB", bytes / 1024);
}

}  // namespace

int BloomIndexFor(const std::vector<PolicyRun>& policies, size_t policy) {
  const PolicyRun& run = policies[policy];
  if (run.family == "bloom" || run.family == "none") return -1;
  for (size_t i = 0; i < policies.size(); ++i) {
    if (policies[i].family == "bloom" && policies[i].bits == run.bits) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

std::string FormatRegime(const std::vector<PolicyRun>& policies,
                         const RegimeResults& regime) {
  std::string text =
      "| workload | filter | ops/s | ops/s × Bloom | CPU µs/op | p50 / p99 µs "
      "| storage reads /1000 | reads × Bloom | KiB read /1000 | filter checks "
      "/lookup | FPR |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (size_t w = 0; w < regime.workloads.size(); ++w) {
    for (size_t p = 0; p < policies.size(); ++p) {
      if (regime.samples[p][w].empty()) continue;
      const Summary s = Summarize(policies, regime, p, w);
      text +=
          "| " + std::string(WorkloadName(regime.workloads[w])) + " | " +
          policies[p].Label() + " | " + Format("%.0f", s.ops) + " | " +
          FormatRatio(s.ops_ratio) + " | " + Format("%.2f", s.cpu_us) + " | " +
          Format("%.1f", s.p50_us) + " / " + Format("%.1f", s.p99_us) + " | " +
          Format("%.1f", s.reads) + " | " + FormatRatio(s.reads_ratio) + " | " +
          Format("%.1f", s.kib) + " | " +
          (CountsFilterChecks(regime.workloads[w]) ? Format("%.2f", s.checks)
                                                   : std::string()) +
          " | " + (s.fpr >= 0 ? Format("%.4f%%", 100 * s.fpr) : "") + " |\n";
    }
  }
  return text;
}

std::string FormatLevels(const std::vector<PolicyRun>& policies,
                         const RegimeResults& regime) {
  size_t num_levels = 0;
  for (const auto& by_workload : regime.samples) {
    for (const auto& samples : by_workload) {
      for (const Sample& s : samples) {
        num_levels = std::max(num_levels, s.by_level.size());
      }
    }
  }
  if (num_levels == 0) return std::string();
  std::string text = "| workload | filter |";
  std::string rule = "|---|---|";
  for (size_t level = 0; level < num_levels; ++level) {
    text += " L" + std::to_string(level) + " |";
    rule += "---|";
  }
  text += "\n" + rule + "\n";
  for (size_t w = 0; w < regime.workloads.size(); ++w) {
    if (!MostlyAbsent(regime.workloads[w]) ||
        !CountsFilterChecks(regime.workloads[w])) {
      continue;
    }
    for (size_t p = 0; p < policies.size(); ++p) {
      const std::vector<Sample>& samples = regime.samples[p][w];
      if (samples.empty() || policies[p].family == "none") continue;
      text += "| " + std::string(WorkloadName(regime.workloads[w])) + " | " +
              policies[p].Label() + " |";
      for (size_t level = 0; level < num_levels; ++level) {
        auto per_1000 = [&](uint64_t LevelCounts::*field) {
          return Median(PerRepetition(samples, [&](const Sample& s) {
            return level < s.by_level.size() && s.ops > 0
                       ? 1000.0 *
                             static_cast<double>(s.by_level[level].*field) /
                             static_cast<double>(s.ops)
                       : 0.0;
          }));
        };
        text += " " + Format("%.1f", per_1000(&LevelCounts::false_positives)) +
                " / " + Format("%.1f", per_1000(&LevelCounts::cache_misses)) +
                " |";
      }
      text += "\n";
    }
  }
  return text;
}

std::string FormatEqualFpr(const std::vector<FprCurve>& curves,
                           const std::vector<double>& targets,
                           uint64_t db_keys) {
  std::string text = "| target FPR | family | bits/key | filter memory for " +
                     std::to_string(db_keys) +
                     " keys | × Bloom | between budgets |\n"
                     "|---|---|---|---|---|---|\n";
  for (double target : targets) {
    double bloom_bits = -1;
    for (const FprCurve& curve : curves) {
      if (curve.family != "bloom") continue;
      if (auto bits = BitsPerKeyFor(curve.points, target)) {
        bloom_bits = bits->bits_per_key;
      }
    }
    for (const FprCurve& curve : curves) {
      const auto bits = BitsPerKeyFor(curve.points, target);
      text += "| " + Format("%g%%", 100 * target) + " | " + curve.family;
      if (!bits) {
        text += " | not bracketed by the measured grid | | | |\n";
        continue;
      }
      text +=
          " | " + Format("%.2f", bits->bits_per_key) + " | " +
          FormatBytes(bits->bits_per_key * static_cast<double>(db_keys) / 8) +
          " | " +
          (bloom_bits > 0 && curve.family != "bloom"
               ? Format("%.2f×", bits->bits_per_key / bloom_bits)
               : std::string()) +
          " | " + std::to_string(bits->lower_budget) + "–" +
          std::to_string(bits->upper_budget) +
          (bits->precise ? "" : " (fewer than 100 false positives)") + " |\n";
    }
  }
  return text;
}

void WriteCsv(const std::string& file, const std::vector<PolicyRun>& policies,
              const std::vector<RegimeResults>& regimes) {
  std::ofstream out(file);
  out << "regime,workload,filter,label,bits_budget,sst_bits_per_key,"
         "ops_median,ops_min,ops_max,ops_ratio,ops_ratio_low,ops_ratio_high,"
         "cpu_us_per_op,p50_us,p99_us,storage_reads_per_1000,reads_ratio,"
         "reads_ratio_low,reads_ratio_high,kib_read_per_1000,"
         "filter_checks_per_lookup,fpr\n";
  for (const RegimeResults& regime : regimes) {
    for (size_t w = 0; w < regime.workloads.size(); ++w) {
      for (size_t p = 0; p < policies.size(); ++p) {
        const std::vector<Sample>& samples = regime.samples[p][w];
        if (samples.empty()) continue;
        const Summary s = Summarize(policies, regime, p, w);
        const std::vector<double> ops = PerRepetition(samples, kOps);
        auto ratio = [](const PairedRatio& r) {
          return r.valid
                     ? std::to_string(r.median) + "," + std::to_string(r.low) +
                           "," + std::to_string(r.high)
                     : std::string(",,");
        };
        out << regime.name << ',' << WorkloadName(regime.workloads[w]) << ','
            << policies[p].family << ',' << policies[p].Label() << ','
            << policies[p].bits << ',' << policies[p].sst_bits_per_key << ','
            << s.ops << ',' << *std::min_element(ops.begin(), ops.end()) << ','
            << *std::max_element(ops.begin(), ops.end()) << ','
            << ratio(s.ops_ratio) << ',' << s.cpu_us << ',' << s.p50_us << ','
            << s.p99_us << ',' << s.reads << ',' << ratio(s.reads_ratio) << ','
            << s.kib << ',' << s.checks << ',' << s.fpr << '\n';
      }
    }
  }
}

void WriteFprCsv(const std::string& file, const std::vector<FprCurve>& curves) {
  std::ofstream out(file);
  out << "family,bits_budget,bits_per_key,false_positives,probes,fpr,"
         "bound_bits_per_key,precise\n";
  for (const FprCurve& curve : curves) {
    for (const FprPoint& point : curve.points) {
      out << curve.family << ',' << point.budget << ',' << point.bits_per_key
          << ',' << point.false_positives << ',' << point.probes << ','
          << point.Fpr() << ','
          << (point.false_positives ? std::log2(1 / point.Fpr()) : 0) << ','
          << (point.Precise() ? 1 : 0) << '\n';
    }
  }
}

void WriteJson(const std::string& file, const std::string& settings_json,
               const std::vector<PolicyRun>& policies,
               const std::vector<RegimeResults>& regimes,
               const std::vector<FprCurve>& curves) {
  std::ofstream out(file);
  out << "{\"settings\": " << settings_json << ",\n \"policies\": [";
  for (size_t p = 0; p < policies.size(); ++p) {
    out << (p ? ", " : "") << "{\"label\": \"" << policies[p].Label()
        << "\", \"sst_bits_per_key\": " << policies[p].sst_bits_per_key
        << ", \"build_seconds\": " << policies[p].build_seconds << "}";
  }
  out << "],\n \"regimes\": [";
  for (size_t r = 0; r < regimes.size(); ++r) {
    const RegimeResults& regime = regimes[r];
    out << (r ? ",\n  " : "\n  ") << "{\"name\": \"" << regime.name
        << "\", \"runs\": [";
    bool first = true;
    for (size_t w = 0; w < regime.workloads.size(); ++w) {
      for (size_t p = 0; p < policies.size(); ++p) {
        for (const Sample& s : regime.samples[p][w]) {
          out << (first ? "\n   " : ",\n   ") << "{\"workload\": \""
              << WorkloadName(regime.workloads[w]) << "\", \"filter\": \""
              << policies[p].Label() << "\", \"ops\": " << s.ops
              << ", \"seconds\": " << s.seconds
              << ", \"cpu_seconds\": " << s.cpu_seconds
              << ", \"storage_reads\": " << s.storage_reads
              << ", \"storage_bytes\": " << s.storage_bytes
              << ", \"filter_checks\": " << s.filter_checks
              << ", \"fpr\": " << s.false_positive_rate << ", \"levels\": [";
          for (size_t level = 0; level < s.by_level.size(); ++level) {
            const LevelCounts& counts = s.by_level[level];
            out << (level ? ", " : "")
                << "{\"filter_checks\": " << counts.filter_checks
                << ", \"false_positives\": " << counts.false_positives
                << ", \"cache_misses\": " << counts.cache_misses << "}";
          }
          out << "]}";
          first = false;
        }
      }
    }
    out << "]}";
  }
  out << "],\n \"fpr_curves\": [";
  for (size_t c = 0; c < curves.size(); ++c) {
    for (size_t i = 0; i < curves[c].points.size(); ++i) {
      const FprPoint& point = curves[c].points[i];
      out << (c || i ? ",\n  " : "\n  ") << "{\"family\": \""
          << curves[c].family << "\", \"budget\": " << point.budget
          << ", \"bits_per_key\": " << point.bits_per_key
          << ", \"false_positives\": " << point.false_positives
          << ", \"probes\": " << point.probes << "}";
    }
  }
  out << "]}\n";
}

}  // namespace filter_compare
