#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module against RedisBloom, each loaded into a fresh redis-server of
# the same binary (scripts/redis-bench.sh builds both and runs this):
#   * throughput and latency of CF.ADD and CF.EXISTS with redis-benchmark,
#     50 clients, without a pipeline and 16 deep, random items, and of
#     CF.EXISTS on a filter RedisBloom has expanded 4 times; each
#     repetition runs both modules, in alternating order, and the ratio of
#     each pair is reported as the median and range over the repetitions;
#   * MEMORY USAGE and the measured false-positive rate of filters reserved
#     for the same capacity and filled to it;
#   * the false-positive rate and memory after RedisBloom's 1, 2 and 4
#     expansions, with the same items in both.
# Prints Markdown tables.
import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tests", "module"))
from redis_server import Server  # noqa: E402

BATCH = 1000


# The server runs on one core and redis-benchmark on another, so that they
# do not take turns on one (on a 2-core machine they otherwise do, and the
# ratios' ranges span tens of percent).
SERVER_CORE, CLIENT_CORE = 0, 1
PINNED = {SERVER_CORE, CLIENT_CORE} <= os.sched_getaffinity(0)


def pin(pid, core):
    if PINNED:
        os.sched_setaffinity(pid, {core})


def run_benchmark(port, command, requests, pipeline):
    """redis-benchmark's requests/s and latency percentiles (ms)."""
    output = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "50",
         "-n", str(requests), "-r", "100000000", "-P", str(pipeline), "--csv",
         *command.split()],
        check=True, capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: pin(0, CLIENT_CORE)).stdout
    rows = list(csv.DictReader(io.StringIO(output)))
    row = rows[-1]
    return {key: float(row[key]) for key in
            ("rps", "avg_latency_ms", "p50_latency_ms", "p99_latency_ms")}


def insert(client, key, items, nx=False):
    """Inserts items in batches; returns how many were refused (full)."""
    refused = 0
    pipe = client.pipeline(transaction=False)
    for start in range(0, len(items), BATCH):
        pipe.execute_command("CF.INSERTNX" if nx else "CF.INSERT", key, "ITEMS",
                             *items[start:start + BATCH])
    for replies in pipe.execute():
        refused += sum(1 for reply in replies if reply == -1)
    return refused


def false_positive_rate(client, key, probes):
    pipe = client.pipeline(transaction=False)
    for start in range(0, len(probes), BATCH):
        pipe.execute_command("CF.MEXISTS", key, *probes[start:start + BATCH])
    return sum(sum(replies) for replies in pipe.execute()) / len(probes)


def info(client, key):
    reply = client.execute_command("CF.INFO", key)
    return dict(zip((field.decode() for field in reply[::2]), reply[1::2]))


class Modules:
    def __init__(self, ours, redisbloom, folder):
        self.paths = {"ours": ours, "RedisBloom": redisbloom}
        self.folder = folder
        self.count = 0

    def start(self, name):
        self.count += 1
        server = Server(os.path.join(self.folder, f"{name}-{self.count}"),
                        self.paths[name]).start()
        pin(server.process.pid, SERVER_CORE)
        return server


def ratio_cell(values):
    values = sorted(values)
    return (f"{statistics.median(values):.2f} "
            f"[{values[0]:.2f}–{values[-1]:.2f}]")


def expand(client, key, capacity, expansions):
    """Fills RedisBloom's filter (CF.RESERVE key capacity, defaults) until it
    has expanded `expansions` times; returns the items added."""
    client.execute_command("CF.RESERVE", key, capacity)
    count = 0
    while info(client, key)["Number of filters"] < expansions + 1:
        insert(client, key, [f"item:{i}" for i in range(count, count + BATCH)])
        count += BATCH
        if count > 1000 * capacity:
            raise AssertionError("RedisBloom did not expand")
    return count


def grown_items(modules, capacity, expansions):
    server = modules.start("RedisBloom")
    try:
        return expand(server.client, "f", capacity, expansions)
    finally:
        server.stop()


def throughput(modules, repetitions, quick):
    print("### Throughput and latency (redis-benchmark, 50 clients)")
    print()
    grown_capacity = 10_000 if quick else 100_000
    grown = grown_items(modules, grown_capacity, 4)
    prefill = 20_000 if quick else 200_000
    cores = (f"the server on core {SERVER_CORE}, redis-benchmark on core "
             f"{CLIENT_CORE}" if PINNED else "server and client unpinned")
    print(f"{repetitions} paired repetitions, a fresh server for each run, "
          f"{cores}; "
          "ratios ours / RedisBloom, median [range]; latencies are medians. "
          "Items are redis-benchmark's random integers, none of them among "
          "those the filters were filled with. The filters: CF.ADD's "
          "reserved for all it adds; CF.EXISTS's reserved for and holding "
          f"{prefill:,} items; the grown one `CF.RESERVE key "
          f"{grown_capacity:,}` (defaults) holding {grown:,} items, where "
          "RedisBloom has expanded 4 times (5 sub-filters) and ours has grown "
          "in place.")
    print()
    print("| command | filter | pipeline | ours req/s | RedisBloom req/s | ratio | "
          "ours p50 / p99 ms | RedisBloom p50 / p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    scenarios = (("CF.ADD", "reserved"), ("CF.EXISTS", "reserved"),
                 ("CF.EXISTS", "grown"))
    for command, shape in scenarios:
        for pipeline in (1, 16):
            requests = (50_000 if quick else 200_000) * (4 if pipeline > 1 else 1)
            results = {"ours": [], "RedisBloom": []}
            for repetition in range(repetitions):
                order = ["ours", "RedisBloom"]
                if repetition % 2:
                    order.reverse()
                for name in order:
                    server = modules.start(name)
                    try:
                        client = server.client
                        if shape == "grown":
                            client.execute_command("CF.RESERVE", "bench",
                                                   grown_capacity)
                            items = grown
                        elif command == "CF.ADD":
                            client.execute_command("CF.RESERVE", "bench",
                                                   4 * requests)
                            items = 0
                        else:
                            client.execute_command("CF.RESERVE", "bench", prefill)
                            items = prefill
                        if insert(client, "bench",
                                  [f"item:{i}" for i in range(items)]):
                            raise AssertionError(f"{name} refused items")
                        results[name].append(run_benchmark(
                            server.port, f"{command} bench __rand_int__", requests,
                            pipeline))
                    finally:
                        server.stop()
            ratios = [o["rps"] / r["rps"] for o, r in
                      zip(results["ours"], results["RedisBloom"])]

            def median(name, key):
                return statistics.median(run[key] for run in results[name])

            print(f"| {command} | {shape} | {pipeline} | "
                  f"{median('ours', 'rps'):,.0f} | "
                  f"{median('RedisBloom', 'rps'):,.0f} | {ratio_cell(ratios)} | "
                  f"{median('ours', 'p50_latency_ms'):.3f} / "
                  f"{median('ours', 'p99_latency_ms'):.3f} | "
                  f"{median('RedisBloom', 'p50_latency_ms'):.3f} / "
                  f"{median('RedisBloom', 'p99_latency_ms'):.3f} |")
    print()


def same_capacity(modules, quick):
    capacity = 100_000 if quick else 1_000_000
    items = [f"item:{i}" for i in range(capacity)]
    probes = [f"absent:{i}" for i in range(capacity)]
    print(f"### Memory and false positives at the same capacity ({capacity:,} items)")
    print()
    print(f"`CF.RESERVE key {capacity}` with the options shown, then "
          f"{capacity:,} distinct items, then {len(probes):,} absent probes.")
    print()
    print("| module | options | MEMORY USAGE bytes | bits/item | filters | "
          "false-positive rate | memory vs RedisBloom | FPR vs RedisBloom |")
    print("|---|---|---|---|---|---|---|---|")
    configurations = [
        ("RedisBloom", []),
        ("ours", []),
        ("ours", ["EXPANSION", "0"]),
        ("ours", ["BUCKETSIZE", "4", "EXPANSION", "0"]),
        ("ours", ["BUCKETSIZE", "4", "BITS", "9", "EXPANSION", "0"]),
        ("ours", ["BUCKETSIZE", "4", "BITS", "10", "EXPANSION", "0"]),
    ]
    baseline = None
    for name, options in configurations:
        server = modules.start(name)
        try:
            client = server.client
            client.execute_command("CF.RESERVE", "f", capacity, *options)
            refused = insert(client, "f", items)
            memory = client.memory_usage("f")
            rate = false_positive_rate(client, "f", probes)
            filters = info(client, "f")["Number of filters"]
        finally:
            server.stop()
        if baseline is None:
            baseline = (memory, rate)
        note = f" ({refused:,} refused)" if refused else ""
        print(f"| {name} | {' '.join(options) or 'defaults'}{note} | {memory:,} | "
              f"{8 * memory / capacity:.2f} | {filters} | {100 * rate:.3f}% | "
              f"{memory / baseline[0]:.2f} | {rate / baseline[1]:.2f} |")
    print()


def after_expansions(modules, quick):
    capacity = 10_000 if quick else 100_000
    probes = [f"absent:{i}" for i in range(200_000 if quick else 1_000_000)]
    print(f"### After expansions (`CF.RESERVE key {capacity:,}`, defaults)")
    print()
    print("Items are added until RedisBloom's filter has expanded the given "
          "number of times; the same items go into ours.")
    print()
    print("| expansions | items | RedisBloom FPR | ours FPR | FPR ratio | "
          "RedisBloom bytes | ours bytes | memory ratio | ours growths |")
    print("|---|---|---|---|---|---|---|---|---|")
    for expansions in (1, 2, 4):
        server = modules.start("RedisBloom")
        try:
            client = server.client
            count = expand(client, "f", capacity, expansions)
            theirs = (false_positive_rate(client, "f", probes), client.memory_usage("f"))
        finally:
            server.stop()
        server = modules.start("ours")
        try:
            client = server.client
            client.execute_command("CF.RESERVE", "f", capacity)
            refused = insert(client, "f", [f"item:{i}" for i in range(count)])
            if refused:
                raise AssertionError(f"ours refused {refused} items")
            ours = (false_positive_rate(client, "f", probes), client.memory_usage("f"))
            growths = info(client, "f")["Number of filters"] - 1
        finally:
            server.stop()
        print(f"| {expansions} | {count:,} | {100 * theirs[0]:.3f}% | "
              f"{100 * ours[0]:.3f}% | {ours[0] / theirs[0]:.2f} | {theirs[1]:,} | "
              f"{ours[1]:,} | {ours[1] / theirs[1]:.2f} | {growths} |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ours", required=True)
    parser.add_argument("--redisbloom", required=True)
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repetitions = args.repetitions or (2 if args.quick else 5)
    with tempfile.TemporaryDirectory(prefix="cf-bench-") as folder:
        modules = Modules(args.ours, args.redisbloom, folder)
        throughput(modules, repetitions, args.quick)
        same_capacity(modules, args.quick)
        after_expansions(modules, args.quick)


if __name__ == "__main__":
    main()
