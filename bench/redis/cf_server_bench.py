#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF module against RedisBloom, each loaded into a fresh redis-server of
# the same binary (scripts/redis-bench.sh builds both and runs this):
#   * throughput and latency of CF.ADD and CF.EXISTS with redis-benchmark,
#     50 clients, without a pipeline and 16 deep, random items, and of
#     CF.EXISTS on a filter RedisBloom has expanded 4 times, beside the
#     server's own time in the command (INFO commandstats); each
#     repetition starts a server for each module and runs them in short
#     bursts, taking turns, so that both meet the same state of the
#     machine; the ratio of each repetition is reported as the median and
#     range over the repetitions;
#   * MEMORY USAGE and the measured false-positive rate of filters reserved
#     for the same capacity, empty, half full and full, and after
#     RedisBloom's 1, 2 and 4 expansions, with the same items in all.
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
# Bursts of requests in each repetition of a throughput row.
BURSTS = 10


# The server runs on one core and redis-benchmark on another, so that they
# do not take turns on one (on a 2-core machine they otherwise do, and the
# ratios' ranges span tens of percent).
SERVER_CORE, CLIENT_CORE = 0, 1
PINNED = {SERVER_CORE, CLIENT_CORE} <= os.sched_getaffinity(0)


def pin(pid, core):
    if PINNED:
        os.sched_setaffinity(pid, {core})


def run_benchmark(port, command, requests, pipeline, random_range):
    """redis-benchmark's requests/s and latency percentiles (ms)."""
    run = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-c", "50",
         "-n", str(requests), "-r", str(random_range), "-P", str(pipeline), "--csv",
         *command.split()],
        capture_output=True, text=True, timeout=600,
        preexec_fn=lambda: pin(0, CLIENT_CORE))
    if run.returncode != 0:
        raise RuntimeError(f"redis-benchmark on port {port} exited with "
                           f"{run.returncode}: {run.stdout[-500:]} {run.stderr[-500:]}")
    row = list(csv.DictReader(io.StringIO(run.stdout)))[-1]
    return {key: float(row[key]) for key in ("rps", "p50_latency_ms", "p99_latency_ms")}


def take_turns(servers, command, requests, pipeline, bursts,
               random_range=100_000_000, tag_items=True):
    """Runs the servers in turn, bursts bursts of requests each, the order
    alternating; returns for each server its throughput over all of its
    bursts, the median of its bursts' latency percentiles (ms), and its own
    time in the command (INFO commandstats, microseconds per call): what
    the module does, without the network and parsing around it, which make
    up most of a request's time and most of its noise. A ratio of two
    servers' figures is then free of what changes in the machine from one
    burst to the next, which fresh servers run one after the other are not.

    redis-benchmark seeds its random items with the second XOR its process
    id, so two of its runs a second apart can draw the same items; with
    tag_items, each burst's items start with the burst's number
    (3:000012345678), so that no burst adds an item another added."""
    for server in servers.values():
        server.client.config_resetstat()
    runs = {name: [] for name in servers}
    order = list(servers)
    for burst in range(bursts):
        burst_command = (command.replace("__rand_int__", f"{burst}:__rand_int__")
                         if tag_items else command)
        for name in order if burst % 2 == 0 else reversed(order):
            runs[name].append(run_benchmark(servers[name].port, burst_command,
                                            requests, pipeline, random_range))
    results = {}
    for name, server in servers.items():
        stats = server.client.info("commandstats")
        results[name] = {
            "rps": bursts * requests / sum(requests / run["rps"] for run in runs[name]),
            "usec_per_call": float(
                stats[f"cmdstat_{command.split()[0].lower()}"]["usec_per_call"]),
            **{key: statistics.median(run[key] for run in runs[name])
               for key in ("p50_latency_ms", "p99_latency_ms")}}
    return results


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


def throughput(modules, repetitions, quick, control=False):
    """The throughput table; with control, of ours against ours (the
    RedisBloom server loads ours too), the single-item rows on the reserved
    filters only: what the method reads where the modules are the same."""
    peer = "ours again" if control else "RedisBloom"
    print("### Throughput and latency (redis-benchmark, 50 clients)"
          + (": control, ours against ours" if control else ""))
    print()
    grown_capacity = 10_000 if quick else 100_000
    grown = 0 if control else grown_items(modules, grown_capacity, 4)
    prefill = 20_000 if quick else 200_000
    bursts = 4 if quick else BURSTS
    cores = (f"the servers on core {SERVER_CORE}, redis-benchmark on core "
             f"{CLIENT_CORE}" if PINNED else "servers and client unpinned")
    print(f"{repetitions} repetitions, each with a fresh server for each module "
          f"that take turns for {bursts} bursts of requests each, the order "
          f"alternating; {cores}; "
          f"ratios ours / {peer} of the repetitions' throughputs, median "
          "[range]; latencies are medians of the bursts' and the repetitions'; "
          "the in-command time is the server's own (INFO commandstats), its "
          f"ratio {peer}'s / ours, so that above 1 ours is faster there "
          "too. "
          "Items are redis-benchmark's random integers after the burst's "
          "number (3:000012345678), none of them among those the filters "
          "were filled with. The filters: CF.ADD's "
          "reserved for four times what it adds; CF.EXISTS's reserved for and "
          f"holding {prefill:,} items"
          + ("." if control else
             f"; the grown one `CF.RESERVE key {grown_capacity:,}` (defaults) "
             f"holding {grown:,} items, where RedisBloom has expanded 4 times "
             "(5 sub-filters) and ours has grown in place."))
    print()
    print("| command | filter | pipeline | requests per burst | ours req/s | "
          f"{peer} req/s | ratio | ours p50 / p99 ms | {peer} p50 / p99 ms | "
          f"in-command µs ours / {peer} | in-command ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    scenarios = (("CF.ADD", "reserved"), ("CF.EXISTS", "reserved"),
                 ("CF.EXISTS", "grown"))[:2 if control else 3]
    for command, shape in scenarios:
        for pipeline in (1, 16):
            requests = (10_000 if quick else 40_000) * (5 if pipeline > 1 else 1)
            if shape == "grown":
                capacity, items = grown_capacity, grown
            elif command == "CF.ADD":
                capacity, items = 4 * bursts * requests, 0
            else:
                capacity, items = prefill, prefill
            results = []
            for _ in range(repetitions):
                servers = pair(modules)
                try:
                    for name, server in servers.items():
                        server.client.execute_command("CF.RESERVE", "bench", capacity)
                        if insert(server.client, "bench",
                                  [f"item:{i}" for i in range(items)]):
                            raise AssertionError(f"{name} refused items")
                    results.append(take_turns(
                        servers, f"{command} bench __rand_int__", requests,
                        pipeline, bursts))
                finally:
                    stop(servers)
            print_row(command, shape, pipeline, requests, results)
    if not control:
        large_filter(modules, repetitions, bursts, quick)
    print()


def pair(modules):
    """A fresh server for each module."""
    servers = {}
    try:
        for name in ("ours", "RedisBloom"):
            servers[name] = modules.start(name)
    except BaseException:
        stop(servers)
        raise
    return servers


def stop(servers):
    for server in servers.values():
        server.stop()


def print_row(command, shape, pipeline, requests, results):
    """A row of the throughput table from take_turns' result for each
    repetition."""
    ratios = [run["ours"]["rps"] / run["RedisBloom"]["rps"] for run in results]
    # Above 1, ours spends less time in the command, as the throughput
    # ratio is above 1 when ours serves more requests.
    command_ratios = [run["RedisBloom"]["usec_per_call"] / run["ours"]["usec_per_call"]
                      for run in results]

    def median(name, key):
        return statistics.median(run[name][key] for run in results)

    print(f"| {command} | {shape} | {pipeline} | {requests:,} | "
          f"{median('ours', 'rps'):,.0f} | "
          f"{median('RedisBloom', 'rps'):,.0f} | {ratio_cell(ratios)} | "
          f"{median('ours', 'p50_latency_ms'):.3f} / "
          f"{median('ours', 'p99_latency_ms'):.3f} | "
          f"{median('RedisBloom', 'p50_latency_ms'):.3f} / "
          f"{median('RedisBloom', 'p99_latency_ms'):.3f} | "
          f"{median('ours', 'usec_per_call'):.3f} / "
          f"{median('RedisBloom', 'usec_per_call'):.3f} | "
          f"{ratio_cell(command_ratios)} |")


def fill_numbered(servers, count, key="bench"):
    """CF.INSERT key ITEMS of the even numbers below 2 * count, written as
    redis-benchmark writes __rand_int__ (12 digits), into every server at
    once through redis-cli --pipe: one pass makes the items for all."""
    pipes = [subprocess.Popen(
        ["redis-cli", "-h", "127.0.0.1", "-p", str(server.port), "--pipe"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for server in servers]
    head = (f"*{BATCH + 3}\r\n$9\r\nCF.INSERT\r\n${len(key)}\r\n{key}\r\n"
            "$5\r\nITEMS\r\n").encode()
    try:
        for start in range(0, 2 * count, 2 * BATCH):
            body = "".join(f"$12\r\n{i:012d}\r\n"
                           for i in range(start, start + 2 * BATCH, 2))
            command = head + body.encode()
            for pipe in pipes:
                pipe.stdin.write(command)
        for pipe in pipes:
            pipe.stdin.close()
        for pipe in pipes:
            output = pipe.stdout.read().decode()
            if pipe.wait(timeout=3600) != 0 or "errors: 0," not in output:
                raise AssertionError(f"filling failed: {output}")
    finally:
        for pipe in pipes:
            if pipe.poll() is None:
                pipe.kill()


def large_filter(modules, repetitions, bursts, quick):
    """CF.MEXISTS of 100 items on a filter larger than the CPU's caches:
    both servers filled once, then each repetition a round of bursts."""
    count = 1_000_000 if quick else 100_000_000
    requests = 2_000 if quick else 4_000
    servers = pair(modules)
    try:
        for server in servers.values():
            server.client.execute_command("CF.RESERVE", "bench", count)
        fill_numbered(list(servers.values()), count)
        shape = (f"{count:,} items "
                 f"({info(servers['RedisBloom'].client, 'bench')['Number of filters']}"
                 f" RedisBloom filters), half the probes present")
        command = "CF.MEXISTS bench" + " __rand_int__" * 100
        for pipeline in (1, 16):
            # The items are the numbers the filters hold and their
            # neighbours, untagged; a burst that draws another's items only
            # reads the filter.
            results = [take_turns(servers, command, requests, pipeline, bursts,
                                  random_range=2 * count, tag_items=False)
                       for _ in range(repetitions)]
            print_row("CF.MEXISTS, 100 items", shape, pipeline, requests, results)
    finally:
        stop(servers)


# The options a user would try beside the defaults: no growth, and the
# 4-slot layouts near RedisBloom's memory (BITS 9: its false-positive rate
# at capacity; BITS 8: less memory).
PLAN_OPTIONS = [
    [],
    ["EXPANSION", "0"],
    ["BUCKETSIZE", "4", "BITS", "9", "EXPANSION", "0"],
    ["BUCKETSIZE", "4", "BITS", "9"],
    ["BUCKETSIZE", "4", "EXPANSION", "0"],
]


def measure(client, probes):
    """MEMORY USAGE and the false-positive rate of filter "f" now."""
    return client.memory_usage("f"), false_positive_rate(client, "f", probes)


def memory_plan(modules, quick):
    """CF.RESERVE key capacity in RedisBloom (defaults) and in ours with
    PLAN_OPTIONS: MEMORY USAGE and the false-positive rate empty, at half
    and at all of the capacity, and where RedisBloom has expanded 1, 2 and
    4 times, with the same items in every filter."""
    capacity = 100_000 if quick else 1_000_000
    probes = [f"absent:{i}" for i in range(200_000 if quick else 1_000_000)]
    server = modules.start("RedisBloom")
    try:
        client = server.client
        client.execute_command("CF.RESERVE", "f", capacity)
        counts, theirs = [], []
        for count in (0, capacity // 2, capacity):
            start = counts[-1] if counts else 0
            insert(client, "f", [f"item:{i}" for i in range(start, count)])
            counts.append(count)
            theirs.append(measure(client, probes))
        added = capacity
        for expansions in (1, 2, 4):
            while info(client, "f")["Number of filters"] < expansions + 1:
                insert(client, "f", [f"item:{i}" for i in range(added, added + BATCH)])
                added += BATCH
            counts.append(added)
            theirs.append(measure(client, probes))
    finally:
        server.stop()
    rows = [("RedisBloom", "defaults", [(m, r, 0) for m, r in theirs])]
    for options in PLAN_OPTIONS:
        server = modules.start("ours")
        try:
            client = server.client
            client.execute_command("CF.RESERVE", "f", capacity, *options)
            cells, added, refused = [], 0, 0
            for count in counts:
                refused += insert(client, "f", [f"item:{i}" for i in range(added, count)])
                added = count
                cells.append((*measure(client, probes), refused))
        finally:
            server.stop()
        rows.append(("ours", " ".join(options) or "defaults", cells))
    stages = ["empty", "50%", "100%", "1 expansion", "2 expansions",
              "4 expansions"]
    header = ("| module | options | " +
              " | ".join(f"{stage} ({count:,})" for stage, count in zip(stages, counts)) +
              " |")
    rule = "|---|---|" + "---|" * len(stages)
    print(f"### Memory a user can plan (`CF.RESERVE key {capacity:,}`)")
    print()
    print(f"RedisBloom at its defaults and ours with the options shown, "
          f"filled with the same items; the stages are the items added (in "
          f"brackets): none, half and all of the capacity, and as many as "
          f"make RedisBloom's filter expand 1, 2 and 4 times. False-positive "
          f"rates over {len(probes):,} absent probes. Ratios to RedisBloom "
          f"at the same stage. \"full\": the filter does not grow and "
          f"refused that many of the items.")
    print()
    print("MEMORY USAGE, bytes (ratio):")
    print()
    print(header)
    print(rule)
    for name, options, cells in rows:
        print(f"| {name} | {options} | " + " | ".join(
            f"{m:,} ({m / theirs[i][0]:.2f})" for i, (m, _, _) in enumerate(cells)) + " |")
    print()
    print("False-positive rate (ratio):")
    print()
    print(header)
    print(rule)
    for name, options, cells in rows:
        def cell(i, rate, refused):
            text = f"{100 * rate:.3f}%"
            if theirs[i][1] > 0:
                text += f" ({rate / theirs[i][1]:.2f})"
            if refused:
                text += f", full: {refused:,} refused"
            return text
        print(f"| {name} | {options} | " + " | ".join(
            cell(i, r, refused) for i, (_, r, refused) in enumerate(cells)) + " |")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--ours", required=True)
    parser.add_argument("--redisbloom", required=True)
    parser.add_argument("--repetitions", type=int, default=None)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--parts", default="throughput,memory",
                        help="which tables: throughput, memory")
    parser.add_argument("--control", action="store_true",
                        help="after the throughput table, its single-item rows "
                             "of ours against ours")
    args = parser.parse_args()
    parts = args.parts.split(",")
    repetitions = args.repetitions or (2 if args.quick else 5)
    with tempfile.TemporaryDirectory(prefix="cf-bench-") as folder:
        modules = Modules(args.ours, args.redisbloom, folder)
        if "throughput" in parts:
            throughput(modules, repetitions, args.quick)
            if args.control:
                throughput(Modules(args.ours, args.ours,
                                   os.path.join(folder, "control")),
                           repetitions, args.quick, control=True)
        if "memory" in parts:
            memory_plan(modules, args.quick)


if __name__ == "__main__":
    main()
