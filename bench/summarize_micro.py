#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
"""Summarizes filter_micro_bench's JSON output as Markdown tables, with every
cuckoo and Ribbon figure as a ratio to the Bloom figure of the same run.

Run the benchmarks with --benchmark_repetitions=N (N >= 5) and
--benchmark_enable_random_interleaving=true (scripts/micro-bench.sh does).
Each time is the median over the repetitions, with their range [min-max];
each ratio is the median of the ratios paired by repetition index, with
their range. A false-positive rate resting on fewer than 100 false positives
is marked as imprecise.

usage: summarize_micro.py RESULTS.json
"""
import json
import re
import statistics
import sys
from collections import defaultdict

NAME = re.compile(r"^(?P<op>[a-z0-9_]+)/(?P<family>bloom|ribbon|cuckoo)"
                  r"/bits:(?P<bits>\d+)/keys:(?P<keys>\d+)")
MIN_FALSE_POSITIVES = 100


def spread(values):
    """'median [min-max]' of a list of numbers."""
    if len(values) == 1:
        return f"{values[0]:.1f}"
    return (f"{statistics.median(values):.1f} "
            f"[{min(values):.1f}-{max(values):.1f}]")


def paired_ratio(values, bloom):
    """Median [min-max] of value[k] / bloom[k] over the repetitions k."""
    ratios = [values[k] / bloom[k] for k in values if k in bloom and bloom[k]]
    if not ratios:
        return "n/a"
    text = f"{statistics.median(ratios):.2f}x"
    if len(ratios) > 1:
        text += f" [{min(ratios):.2f}-{max(ratios):.2f}]"
    if len(ratios) > 1 and min(ratios) <= 1 <= max(ratios):
        text += " within noise"
    return text


def fpr_text(bits_per_key, fpr, false_positives):
    text = f"{bits_per_key:.2f}, {100 * fpr:.4f}%"
    if false_positives is not None and false_positives < MIN_FALSE_POSITIVES:
        text += f" ({false_positives:.0f} FPs, imprecise)"
    return text


def main(path):
    with open(path) as f:
        data = json.load(f)
    # (op, bits, keys) -> family -> repetition -> ns per item
    ns = defaultdict(lambda: defaultdict(dict))
    # (bits, keys) -> family -> (bits per key, fpr, false positives)
    accuracy = defaultdict(dict)
    core = defaultdict(dict)  # name -> repetition -> ns per item
    core_bits = {}
    for bench in data["benchmarks"]:
        if bench.get("run_type") == "aggregate" or bench.get("error_occurred"):
            continue
        name = bench.get("run_name", bench["name"])
        repetition = bench.get("repetition_index", 0)
        per_item = 1e9 / bench["items_per_second"]
        match = NAME.match(name)
        if not match:
            core[name][repetition] = per_item
            core_bits[name] = bench.get("bits_per_key")
            continue
        key = (match["op"], int(match["bits"]), int(match["keys"]))
        ns[key][match["family"]][repetition] = per_item
        if match["op"] == "construct":
            accuracy[(int(match["bits"]), int(match["keys"]))][match["family"]] = (
                bench["bits_per_key"], bench["fpr"], bench.get("false_positives"))

    repetitions = max((len(r) for by in ns.values() for r in by.values()),
                      default=0)
    print(f"Medians of {repetitions} repetitions [min-max]; ratios paired by "
          "repetition.\n")
    print("| operation | bits/key | keys | Bloom ns | Ribbon ns | Ribbon vs Bloom "
          "| cuckoo ns | cuckoo vs Bloom | cuckoo vs Ribbon |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (op, bits, keys), by_family in sorted(ns.items()):
        if not all(f in by_family for f in ("bloom", "ribbon", "cuckoo")):
            continue
        bloom, ribbon, cuckoo = (by_family[f] for f in ("bloom", "ribbon", "cuckoo"))
        print(f"| {op} | {bits} | {keys} | {spread(list(bloom.values()))} "
              f"| {spread(list(ribbon.values()))} | {paired_ratio(ribbon, bloom)} "
              f"| {spread(list(cuckoo.values()))} | {paired_ratio(cuckoo, bloom)} "
              f"| {paired_ratio(cuckoo, ribbon)} |")

    print()
    print("| budget bits/key | keys | Bloom bits/key, FPR | Ribbon bits/key, FPR "
          "| cuckoo bits/key, FPR | cuckoo FPR vs Bloom |")
    print("|---|---|---|---|---|---|")
    for (bits, keys), by_family in sorted(accuracy.items()):
        if len(by_family) < 3:
            continue
        cells = [fpr_text(*by_family[f]) for f in ("bloom", "ribbon", "cuckoo")]
        cuckoo_fp = by_family["cuckoo"][2]
        bloom_fp = by_family["bloom"][2]
        if (cuckoo_fp is not None and bloom_fp is not None and
                min(cuckoo_fp, bloom_fp) < MIN_FALSE_POSITIVES):
            vs_bloom = "imprecise (fewer than 100 FPs)"
        elif by_family["bloom"][1]:
            vs_bloom = f"{by_family['cuckoo'][1] / by_family['bloom'][1]:.2f}x"
        else:
            vs_bloom = "n/a"
        print(f"| {bits} | {keys} | " + " | ".join(cells) + f" | {vs_bloom} |")

    if core:
        print()
        print("| core library | ns/op | bits/key |")
        print("|---|---|---|")
        for name, by_repetition in core.items():
            bpk = core_bits.get(name)
            bpk_text = f"{bpk:.2f}" if bpk is not None else ""
            print(f"| {name} | {spread(list(by_repetition.values()))} "
                  f"| {bpk_text} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
