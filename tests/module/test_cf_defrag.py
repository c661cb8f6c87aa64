# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Active defragmentation moves the filters' allocations and loses nothing:
# many small filters, three of four deleted so that the allocator's slabs
# are sparse, then `activedefrag yes`. The module's INFO counts the values
# and buffers its defrag callback moved; every remaining filter then holds
# the same bytes, reports the same CF.INFO, answers every item it was given
# and takes new ones, before and after a reload.
#
# Servers built on the system's jemalloc (Debian's) refuse activedefrag:
# the test skips there, unless CUCKOO_CF_REQUIRE_DEFRAG=1, as
# scripts/check-defrag.sh sets with servers built with their own jemalloc.
import os

import pytest
import redis

from conftest import wait_until

REQUIRE_DEFRAG = os.environ.get("CUCKOO_CF_REQUIRE_DEFRAG") == "1"
FILTERS = 20000
ITEMS = 90  # of a capacity of 100: enough for kick-out walks


def defrag_info(r):
    info = r.info("cuckoocf_defrag")
    return (info.get("cuckoocf_defrag_values_moved"),
            info.get("cuckoocf_defrag_buffers_moved"))


def snapshot(r, keys):
    pipe = r.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("DEBUG", "DIGEST-VALUE", key)
        pipe.execute_command("CF.INFO", key)
    replies = pipe.execute()
    return {key: (replies[2 * i], replies[2 * i + 1])
            for i, key in enumerate(keys)}


def assert_answers(r, kept):
    pipe = r.pipeline(transaction=False)
    for i in kept:
        pipe.execute_command("CF.MEXISTS", f"f:{i}",
                             *[f"{i}:{j}" for j in range(ITEMS)])
    for i, answers in zip(kept, pipe.execute()):
        assert answers == [1] * ITEMS, f"f:{i}"


def test_defrag_moves_filters_and_keeps_every_item(make_server):
    r = make_server(extra=["--hz", "100"]).client
    assert defrag_info(r) == (0, 0)
    try:
        r.config_set("activedefrag", "no")
        r.config_set("active-defrag-ignore-bytes", "1")
        r.config_set("active-defrag-threshold-lower", "0")
        r.config_set("active-defrag-cycle-min", "50")
        r.config_set("active-defrag-cycle-max", "90")
        r.config_set("activedefrag", "yes")
        r.config_set("activedefrag", "no")
    except redis.ResponseError as e:
        if REQUIRE_DEFRAG:
            raise
        pytest.skip(f"this server has no active defragmentation: {e}")

    # Allocated interleaved, then three of four freed: the survivors sit in
    # sparse slabs.
    for start in range(0, FILTERS, 1000):
        pipe = r.pipeline(transaction=False)
        for i in range(start, start + 1000):
            pipe.execute_command("CF.RESERVE", f"f:{i}", 100)
            pipe.execute_command("CF.INSERT", f"f:{i}", "ITEMS",
                                 *[f"{i}:{j}" for j in range(ITEMS)])
        for reply in pipe.execute():
            assert reply == b"OK" or reply == [1] * ITEMS
    kept = list(range(0, FILTERS, 4))
    for start in range(0, FILTERS, 1000):
        pipe = r.pipeline(transaction=False)
        for i in range(start, start + 1000):
            if i % 4 != 0:
                pipe.delete(f"f:{i}")
        assert all(pipe.execute())
    keys = [f"f:{i}" for i in kept]
    before = snapshot(r, keys)

    r.config_set("activedefrag", "yes")
    wait_until(lambda: all(n > 0 for n in defrag_info(r)), timeout=60,
               what="the defrag callback to move values and buffers")
    # The pass in progress ends: nothing moves under the checks below.
    r.config_set("activedefrag", "no")
    wait_until(lambda: r.info("memory").get("active_defrag_running") == 0,
               timeout=30, what="the defragmentation to stop")
    values, buffers = defrag_info(r)
    assert snapshot(r, keys) == before
    assert_answers(r, kept)

    # The moved filters take new items and survive a reload.
    pipe = r.pipeline(transaction=False)
    for i in kept:
        pipe.execute_command("CF.ADD", f"f:{i}", f"{i}:new")
    assert all(reply == 1 for reply in pipe.execute())
    after_adds = snapshot(r, keys)
    r.execute_command("DEBUG", "RELOAD")
    assert snapshot(r, keys) == after_adds
    assert_answers(r, kept)
    assert r.dbsize() == len(kept)
    assert values > 0 and buffers > 0
