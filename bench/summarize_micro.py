#!/usr/bin/env python3
"""Summarizes filter_micro_bench's JSON output as Markdown tables, with every
cuckoo and Ribbon figure as a ratio to the Bloom figure of the same run.

usage: summarize_micro.py RESULTS.json
"""
import json
import re
import sys
from collections import defaultdict

NAME = re.compile(r"^(?P<op>[a-z0-9_]+)/(?P<family>bloom|ribbon|cuckoo)"
                  r"/bits:(?P<bits>\d+)/keys:(?P<keys>\d+)")


def ratio(value, bloom):
    return f"{value / bloom:.2f}x" if bloom else "n/a"


def main(path):
    with open(path) as f:
        data = json.load(f)
    ns = defaultdict(dict)          # (op, bits, keys) -> family -> ns/item
    accuracy = defaultdict(dict)    # (bits, keys) -> family -> (bpk, fpr)
    core = []
    for bench in data["benchmarks"]:
        if bench.get("run_type") == "aggregate" or bench.get("error_occurred"):
            continue
        match = NAME.match(bench["name"])
        per_item = 1e9 / bench["items_per_second"]
        if not match:
            core.append((bench["name"], per_item, bench.get("bits_per_key")))
            continue
        key = (match["op"], int(match["bits"]), int(match["keys"]))
        ns[key][match["family"]] = per_item
        if match["op"] == "construct":
            accuracy[(int(match["bits"]), int(match["keys"]))][match["family"]] = (
                bench["bits_per_key"], bench["fpr"])

    print("| operation | bits/key | keys | Bloom ns | Ribbon ns (vs Bloom) "
          "| cuckoo ns (vs Bloom) | cuckoo vs Ribbon |")
    print("|---|---|---|---|---|---|---|")
    for (op, bits, keys), by_family in sorted(ns.items()):
        bloom = by_family.get("bloom")
        ribbon = by_family.get("ribbon")
        cuckoo = by_family.get("cuckoo")
        if bloom is None or ribbon is None or cuckoo is None:
            continue
        print(f"| {op} | {bits} | {keys} | {bloom:.1f} | {ribbon:.1f} "
              f"({ratio(ribbon, bloom)}) | {cuckoo:.1f} ({ratio(cuckoo, bloom)}) "
              f"| {ratio(cuckoo, ribbon)} |")

    print()
    print("| budget bits/key | keys | Bloom bits/key, FPR | Ribbon bits/key, FPR "
          "| cuckoo bits/key, FPR | cuckoo FPR vs Bloom |")
    print("|---|---|---|---|---|---|")
    for (bits, keys), by_family in sorted(accuracy.items()):
        if len(by_family) < 3:
            continue
        cells = [f"{by_family[f][0]:.2f}, {100 * by_family[f][1]:.4f}%"
                 for f in ("bloom", "ribbon", "cuckoo")]
        print(f"| {bits} | {keys} | " + " | ".join(cells) +
              f" | {ratio(by_family['cuckoo'][1], by_family['bloom'][1])} |")

    if core:
        print()
        print("| core library | ns/op | bits/key |")
        print("|---|---|---|")
        for name, per_item, bpk in core:
            bpk_text = f"{bpk:.2f}" if bpk is not None else ""
            print(f"| {name} | {per_item:.1f} | {bpk_text} |")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
