#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
"""Summarizes the logs of RocksDB's filter_bench that scripts/filter-bench.sh
writes (VERSION-ALLOCATOR-KEYS-POLICY-REPETITION.log) as one Markdown table
per RocksDB version and allocator, with Ribbon's and cuckoo's figures as
ratios to Bloom's of the same repetition.

Each figure is the median over the repetitions with their range [min-max];
each ratio is the median of the ratios paired by repetition, with their
range. Query times are filter_bench's net ns/op of its mixed (50% inside)
queries: one filter, batches prepared, and a random filter each query.

usage: summarize_filter_bench.py LOG_DIR --versions V,V --keys N,N
         --allocators A,A --repetitions R [--bits-per-key B]
         [--working-mem-mb M] [--m-queries Q]
"""
import argparse
import os
import re
import statistics
import sys

POLICIES = ("bloom", "ribbon", "cuckoo")
NAMES = {"bloom": "Bloom (format_version 5)", "ribbon": "Ribbon",
         "cuckoo": "cuckoofilter"}
# (column, pattern): the figures read from each log.
FIGURES = (
    ("build", re.compile(r"^Build avg ns/key: ([0-9.eE+-]+)")),
    ("single", re.compile(r"^  Single filter net ns/op: ([0-9.eE+-]+)")),
    ("batched", re.compile(r"^  Batched, prepared net ns/op: ([0-9.eE+-]+)")),
    ("random", re.compile(r"^  Random filter net ns/op: ([0-9.eE+-]+)")),
    ("fpr", re.compile(r"^ Prelim FP rate %: ([0-9.eE+-]+)")),
    ("bits", re.compile(r"^Bits/key stored: ([0-9.eE+-]+)")),
)
TIMES = ("build", "single", "batched", "random")


def read_log(path):
    """The figures of one run: the first value of each (the mixed queries
    come before the inside and outside ones)."""
    values = {}
    with open(path) as f:
        for line in f:
            for column, pattern in FIGURES:
                match = pattern.match(line)
                if match and column not in values:
                    values[column] = float(match.group(1))
    return values


def spread(values, digits, unit=""):
    """'median [min-max]' of a list of numbers, each followed by unit."""
    if not values:
        return "n/a"
    text = f"{statistics.median(values):.{digits}f}{unit}"
    if len(values) > 1:
        text += f" [{min(values):.{digits}f}-{max(values):.{digits}f}]"
    return text


def paired_ratio(values, bloom):
    """spread of value[k] / bloom[k] over the repetitions k."""
    return spread([v / b for v, b in zip(values, bloom) if b > 0], 2, "x")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("log_dir")
    parser.add_argument("--versions", required=True)
    parser.add_argument("--keys", required=True)
    parser.add_argument("--allocators", required=True)
    parser.add_argument("--repetitions", type=int, required=True)
    parser.add_argument("--bits-per-key", default="10")
    parser.add_argument("--working-mem-mb", default="64")
    parser.add_argument("--m-queries", default="2")
    args = parser.parse_args()

    print(f"RocksDB's util/filter_bench at {args.bits_per_key} bits/key, "
          f"{args.working_mem_mb} MiB of filters per run, "
          f"{args.m_queries}M queries per test, {args.repetitions} "
          "repetitions; each run a fresh process. Figures: median "
          "[min-max]; ratios to Bloom paired by repetition.")
    for version in args.versions.split(","):
        for allocator in args.allocators.split(","):
            print()
            print(f"### RocksDB {version} (Release), "
                  f"{'glibc malloc, defaults' if allocator == 'glibc' else allocator}")
            print()
            print("| keys/filter | policy | build ns/key | single ns/op | "
                  "batched ns/op | random-filter ns/op | FPR % | bits/key |")
            print("|---|---|---|---|---|---|---|---|")
            for keys in args.keys.split(","):
                runs = {}
                for policy in POLICIES:
                    runs[policy] = []
                    for rep in range(1, args.repetitions + 1):
                        path = os.path.join(
                            args.log_dir,
                            f"{version}-{allocator}-{keys}-{policy}-{rep}.log")
                        if os.path.exists(path):
                            runs[policy].append(read_log(path))
                for policy in POLICIES:
                    if not runs[policy]:
                        continue
                    cells = [keys, NAMES[policy]]
                    for column in TIMES:
                        values = [r[column] for r in runs[policy]
                                  if column in r]
                        text = spread(values, 1)
                        if policy != "bloom":
                            bloom = [r.get(column, 0) for r in runs["bloom"]]
                            mine = [r.get(column, 0) for r in runs[policy]]
                            text += f", {paired_ratio(mine, bloom)}"
                        cells.append(text)
                    cells.append(spread([r["fpr"] for r in runs[policy]
                                         if "fpr" in r], 3))
                    cells.append(spread([r["bits"] for r in runs[policy]
                                         if "bits" in r], 2))
                    print("| " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
