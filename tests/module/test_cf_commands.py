# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# The CF.* commands as RedisBloom's clients use them: redis-py's cf()
# commands and CFInfo, RESP2 integers and RESP3 booleans, RedisBloom's error
# strings, growth without false negatives, and arguments that must never
# crash the server.
import random
import socket

import pytest
import redis


def items(n, prefix="item"):
    return [f"{prefix}:{i}" for i in range(n)]


def test_reserve_add_exists_count_del_info(server):
    r = server.client
    cf = r.cf()
    assert r.execute_command("CF.RESERVE", "f", 1000) is True
    assert cf.add("f", "a") == 1
    assert cf.addnx("f", "a") == 0
    assert cf.add("f", "a") == 1
    assert cf.count("f", "a") == 2
    assert cf.exists("f", "a") == 1
    assert cf.exists("f", "never added") == 0
    assert cf.mexists("f", "a", "never added") == [1, 0]
    assert cf.insert("f", ["x", "y"]) == [1, 1]
    assert cf.insertnx("f", ["x", "z"]) == [0, 1]
    assert cf.delete("f", "a") == 1
    assert cf.count("f", "a") == 1
    assert cf.delete("f", "never added") == 0
    info = cf.info("f")
    assert info.insertedNum == 4
    assert info.deletedNum == 1
    assert info.bucketSize == 2
    assert info.filterNum == 1
    assert info.expansionRate == 1
    assert info.maxIteration == 20
    assert info.bucketNum * info.bucketSize >= 1000
    # 8-bit fingerprints and 5 growth bits a slot, and MEMORY USAGE counts
    # the key besides.
    assert info.size >= info.bucketNum * info.bucketSize * 13 // 8
    assert info.size <= r.memory_usage("f")


def test_reserve_options_and_info(server):
    cf = server.client.cf()
    cf.create("f", 10000, bucket_size=4, max_iterations=50, expansion=3)
    info = cf.info("f")
    assert (info.bucketSize, info.maxIteration) == (4, 50)
    r = server.client
    assert r.execute_command("CF.RESERVE", "g", 100, "EXPANSION", 0, "BITS",
                             16, "SEED", 12345) is True
    assert cf.info("g").expansionRate == 0
    # RedisBloom reports EXPANSION rounded up to a power of two.
    for expansion, reported in [(1, 1), (2, 2), (3, 4), (4, 4), (5, 8),
                                (1000, 1024), (32768, 32768)]:
        cf.create(f"e{expansion}", 1000, expansion=expansion)
        assert cf.info(f"e{expansion}").expansionRate == reported, expansion


def redisbloom_rate(bucket_size, capacity):
    """The false-positive rate of RedisBloom's first sub-filter for
    BUCKETSIZE b holding `capacity` items: nextpow2(capacity / b) buckets of
    b slots, each absent item compared with the 8-bit fingerprints (255
    values) of its two buckets."""
    buckets = 1
    while buckets < capacity // bucket_size:
        buckets *= 2
    load = min(1.0, capacity / (buckets * bucket_size))
    return 1 - (1 - 1 / 255) ** (2 * bucket_size * load), buckets * bucket_size


@pytest.mark.parametrize("bucket_size", [1, 3, 5, 16, 255])
def test_every_redisbloom_bucket_size_is_taken(server, bucket_size):
    """A BUCKETSIZE other than 2, 4 and 8 (which are the buckets' slots
    here as there): CF.INFO reports it, the filter holds its capacity, and
    without growth bits (EXPANSION 0) it takes no more memory than
    RedisBloom's table at a false-positive rate no higher."""
    r = server.client
    cf = r.cf()
    capacity = 20000
    r.execute_command("CF.RESERVE", "f", capacity, "BUCKETSIZE", bucket_size,
                      "EXPANSION", 0)
    added = items(capacity)
    for start in range(0, capacity, 1000):
        assert cf.insert("f", added[start:start + 1000]) == [1] * 1000
    info = cf.info("f")
    assert (info.bucketSize, info.insertedNum) == (bucket_size, capacity)
    assert_all_found(cf, "f", added)
    rate, redisbloom_bytes = redisbloom_rate(bucket_size, capacity)
    absent = items(100000, "absent")
    false_positives = sum(sum(cf.mexists("f", *absent[i:i + 1000]))
                          for i in range(0, len(absent), 1000))
    expected = rate * len(absent)
    assert false_positives <= expected + 4 * expected ** 0.5
    # Table against table: ours without what every filter has besides (the
    # value, its stash and its walk's log: the size of a filter reserved
    # for 4 items, whose table is a few bytes).
    r.execute_command("CF.RESERVE", "tiny", 4, "EXPANSION", 0)
    assert info.size - cf.info("tiny").size <= redisbloom_bytes


def assert_all_found(cf, key, added):
    for start in range(0, len(added), 1000):
        chunk = added[start:start + 1000]
        assert cf.mexists(key, *chunk) == [1] * len(chunk)


def test_missing_keys_and_wrong_types(server):
    r = server.client
    cf = r.cf()
    assert cf.exists("missing", "a") == 0
    assert cf.mexists("missing", "a", "b") == [0, 0]
    assert cf.count("missing", "a") == 0
    r.set("string", "1")
    errors = {
        ("CF.DEL", "missing", "a"): "Not found",
        ("CF.INFO", "missing"): "not found",
        ("CF.INSERT", "missing", "NOCREATE", "ITEMS", "a"): "not found",
        ("CF.SCANDUMP", "missing", 0): "not found",
        ("CF.ADD", "string", "a"): "WRONGTYPE",
        ("CF.EXISTS", "string", "a"): None,  # a missing filter: 0
        ("CF.RESERVE", "string", 100): "WRONGTYPE",
        ("CF.MERGE", "string", "missing"): "not found",
    }
    for args, error in errors.items():
        if error is None:
            assert r.execute_command(*args) == 0
            continue
        with pytest.raises(redis.ResponseError, match=error):
            r.execute_command(*args)
    assert r.get("string") == b"1"


def test_error_replies_are_redisblooms(server):
    r = server.client
    r.execute_command("CF.RESERVE", "f", 100)
    cases = [
        (("CF.RESERVE", "f", 100), "item exists"),
        (("CF.RESERVE", "g", "many"), "Bad capacity"),
        (("CF.RESERVE", "g", 3), r"Capacity must be in the range \[2 \* BUCKETSIZE"),
        (("CF.RESERVE", "g", 1 << 31), "Capacity must be in the range"),
        (("CF.RESERVE", "g", -5), "Capacity must be in the range"),
        (("CF.RESERVE", "g", 100, "MAXITERATIONS", "x"), "Couldn't parse MAXITERATIONS"),
        (("CF.RESERVE", "g", 100, "MAXITERATIONS", 0),
         r"MAXITERATIONS: value must be in the range \[1, 65535\]"),
        (("CF.RESERVE", "g", 100, "EXPANSION", 40000),
         r"EXPANSION: value must be in the range \[0, 32768\]"),
        (("CF.RESERVE", "g", 100, "BUCKETSIZE", "x"), "Couldn't parse BUCKETSIZE"),
        (("CF.RESERVE", "g", 100, "BUCKETSIZE", 0),
         r"BUCKETSIZE: value must be in the range \[1, 255\]"),
        (("CF.RESERVE", "g", 1000, "BUCKETSIZE", 256),
         r"BUCKETSIZE: value must be in the range \[1, 255\]"),
        (("CF.RESERVE", "g", 509, "BUCKETSIZE", 255), r"Capacity must be in the range \[2 \* BUCKETSIZE"),
        (("CF.RESERVE", "g", 100, "BITS", 40), r"BITS: value must be in the range \[4, 32\]"),
        (("CF.RESERVE", "g", 100, "SEED", -1), "Couldn't parse SEED"),
        # 30-bit fingerprints leave no room for EXPANSION 1's 5 growth bits.
        (("CF.RESERVE", "g", 100, "BITS", 30), "Could not create filter"),
        (("CF.RESERVE", "g", 100, "COLOUR", 1), "Unknown argument received"),
        (("CF.RESERVE", "g"), "wrong number of arguments"),
        (("CF.RESERVE", "g", 100, "EXPANSION"), "wrong number of arguments"),
        (("CF.ADD", "f"), "wrong number of arguments"),
        (("CF.INSERT", "f", "ITEMS"), "wrong number of arguments"),
        (("CF.INSERT", "f", "CAPACITY"), "wrong number of arguments"),
        (("CF.INSERT", "f", "BOGUS", "ITEMS", "a"), "Unknown argument received"),
        (("CF.INSERT", "g", "CAPACITY", "x", "ITEMS", "a"), "Bad capacity"),
        (("CF.SCANDUMP", "f", -1), "Invalid position"),
        (("CF.LOADCHUNK", "f", 0, "x"), "Invalid position"),
        (("CF.LOADCHUNK", "f", 1, "x"), "item exists"),
    ]
    for args, error in cases:
        with pytest.raises(redis.ResponseError, match=error):
            r.execute_command(*args)
    assert not r.exists("g")


def read_reply(stream):
    """One RESP2/RESP3 reply from a buffered socket file."""
    line = stream.readline()
    kind, rest = line[:1], line[1:-2]
    if kind in (b"+", b"-"):
        return (kind, rest)
    if kind == b":":
        return int(rest)
    if kind == b"#":
        return rest == b"t"
    if kind == b"_":
        return None
    if kind == b"$":
        if int(rest) < 0:
            return None
        data = stream.read(int(rest) + 2)
        return data[:-2]
    if kind in (b"*", b"%"):
        n = int(rest) * (2 if kind == b"%" else 1)
        return [read_reply(stream) for _ in range(n)]
    raise AssertionError(f"unexpected reply {line!r}")


def raw_command(sock, stream, *args):
    parts = [f"*{len(args)}\r\n".encode()]
    for arg in args:
        data = str(arg).encode()
        parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
    sock.sendall(b"".join(parts))
    return read_reply(stream)


# RESP3: booleans where RedisBloom gives them, integers elsewhere.
def test_resp3_booleans(server):
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        stream = sock.makefile("rb")
        raw_command(sock, stream, "HELLO", 3)
        run = lambda *args: raw_command(sock, stream, *args)  # noqa: E731
        assert run("CF.RESERVE", "f", 100, "EXPANSION", 0) == (b"+", b"OK")
        assert run("CF.ADD", "f", "a") is True
        assert run("CF.ADDNX", "f", "a") is False
        assert run("CF.EXISTS", "f", "a") is True
        assert run("CF.EXISTS", "f", "b") is False
        assert run("CF.EXISTS", "missing", "b") is False
        assert run("CF.MEXISTS", "f", "a", "b") == [True, False]
        assert run("CF.COUNT", "f", "a") == 1
        assert run("CF.INSERT", "f", "ITEMS", "c") == [True]
        assert run("CF.INSERTNX", "f", "ITEMS", "c", "d") == [0, 1]
        assert run("CF.DEL", "f", "a") is True
        assert run("CF.DEL", "f", "a") is False
        info = run("CF.INFO", "f")
        fields = dict(zip(info[::2], info[1::2]))
        assert fields[(b"+", b"Number of items inserted")] == 2
        assert fields[(b"+", b"Number of items deleted")] == 1
        # A full filter without growth: CF.INSERT's array says false,
        # CF.INSERTNX's -1, CF.ADD an error. A full filter may still find
        # room for some items (each insert's walk starts at its own
        # buckets), so each command is given new items until one fails.
        def first_failure(command, *successes):
            for i in range(1000):
                reply = run(*command(f"{command.__name__}{i}"))
                if reply not in successes:
                    return reply
            raise AssertionError("a 100-item filter took 1000 items")

        def insert(item):
            return ("CF.INSERT", "f", "ITEMS", item)

        def insertnx(item):
            return ("CF.INSERTNX", "f", "ITEMS", item)

        def add(item):
            return ("CF.ADD", "f", item)

        assert first_failure(insert, [True]) == [False]
        # [0]: a false positive, which CF.INSERTNX does not insert.
        assert first_failure(insertnx, [1], [0]) == [-1]
        assert first_failure(add, True) == (b"-", b"Filter is full")


def test_growth_keeps_every_item(server):
    cf = server.client.cf()
    cf.create("f", 1000, expansion=1)
    keys = items(20000)
    pipe = server.client.pipeline(transaction=False)
    for key in keys:
        pipe.execute_command("CF.ADD", "f", key)
    assert all(reply == 1 for reply in pipe.execute())
    info = cf.info("f")
    assert info.filterNum > 1
    assert info.insertedNum == len(keys)
    assert all(cf.mexists("f", *keys[i:i + 1000]) == [1] * 1000
               for i in range(0, len(keys), 1000))
    absent = items(20000, "absent")
    false_positives = sum(sum(cf.mexists("f", *absent[i:i + 1000]))
                          for i in range(0, len(absent), 1000))
    # 8-bit fingerprints in 2-slot buckets: at most 2 * 2 / 255 = 1.6%.
    assert false_positives < 0.02 * len(absent)


def test_filter_without_growth_fills_and_loses_nothing(server):
    r = server.client
    r.execute_command("CF.RESERVE", "f", 1000, "EXPANSION", 0)
    stored = []
    for key in items(5000):
        try:
            r.execute_command("CF.ADD", "f", key)
            stored.append(key)
        except redis.ResponseError as e:
            assert "Filter is full" in str(e)
    assert 1000 <= len(stored) < 5000
    assert r.cf().info("f").filterNum == 1
    assert r.cf().mexists("f", *stored) == [1] * len(stored)


def test_one_item_added_over_and_over_does_not_grow_the_filter(server):
    # Every copy of an item has its two buckets; once they and the stash
    # hold only its copies, a growth would move them all to the same two
    # buckets of a larger table. Such a copy is refused instead, and the
    # filter keeps its size and every other item.
    r = server.client
    r.execute_command("CF.RESERVE", "f", 100000)
    others = items(1000)
    r.execute_command("CF.INSERT", "f", "ITEMS", *others)
    buckets = r.cf().info("f").bucketNum
    added = 0
    for _ in range(64):
        try:
            r.execute_command("CF.ADD", "f", "again")
            added += 1
        except redis.ResponseError as e:
            assert "Filter is full" in str(e)
            break
    # 2 buckets of 2 slots, and a stash of 4.
    assert added == 8
    assert r.execute_command("CF.COUNT", "f", "again") == added
    memory = r.memory_usage("f")
    assert r.execute_command("CF.INSERT", "f", "ITEMS", "again", "again") == [-1, -1]
    assert r.cf().info("f").filterNum == 1
    assert r.cf().info("f").bucketNum == buckets
    assert r.memory_usage("f") == memory
    assert r.cf().mexists("f", *others) == [1] * len(others)
    assert r.execute_command("CF.DEL", "f", "again") == 1
    assert r.execute_command("CF.ADD", "f", "again") == 1


def test_memory_usage_counts_the_walks_log(server):
    # The first insert that has to move other items reserves the kick-out
    # walk's log for MAXITERATIONS steps (12 bytes each), and keeps it: it is
    # counted from the start, so that the figure does not change then.
    r = server.client
    r.execute_command("CF.RESERVE", "f", 1000, "MAXITERATIONS", 65535,
                      "EXPANSION", 0)
    r.execute_command("CF.RESERVE", "g", 1000, "EXPANSION", 0)
    empty = r.memory_usage("f")
    size = r.cf().info("f").size
    assert size <= empty
    assert size >= r.cf().info("g").size + 65535 * 12 - 20 * 12
    replies = r.execute_command("CF.INSERT", "f", "ITEMS", *items(5000))
    assert -1 in replies
    assert r.memory_usage("f") == empty
    assert r.cf().info("f").size == size


def test_nogrow_holds_the_filter_at_its_size(server):
    r = server.client
    r.execute_command("CF.RESERVE", "f", 1000)
    keys = items(5000)
    replies = r.execute_command("CF.INSERT", "f", "NOGROW", "ITEMS", *keys)
    stored = [key for key, reply in zip(keys, replies) if reply == 1]
    assert set(replies) == {1, -1}
    assert 1000 <= len(stored) < 5000
    assert r.cf().info("f").filterNum == 1
    assert r.cf().mexists("f", *stored) == [1] * len(stored)
    # Without NOGROW the same filter grows and takes the rest.
    assert r.execute_command("CF.INSERT", "f", "ITEMS", *keys) == [1] * len(keys)
    assert r.cf().info("f").filterNum > 1
    assert r.cf().mexists("f", *keys) == [1] * len(keys)


def test_merge(server):
    r = server.client
    cf = r.cf()
    cf.insert("a", items(500, "a"))
    r.execute_command("CF.MERGE", "b", "a")
    assert cf.mexists("b", *items(500, "a")) == [1] * 500
    cf.insert("b", items(500, "b"))
    r.execute_command("CF.MERGE", "a", "b")
    assert cf.info("a").insertedNum == 1500
    assert cf.mexists("a", *items(500, "b")) == [1] * 500
    cf.insert("c", ["x"])
    with pytest.raises(redis.ResponseError, match="different seeds"):
        r.execute_command("CF.MERGE", "a", "c")
    r.execute_command("CF.RESERVE", "s1", 1000, "SEED", 7)
    r.execute_command("CF.RESERVE", "s2", 1000, "SEED", 7)
    cf.insert("s2", items(100, "s2"))
    r.execute_command("CF.MERGE", "s1", "s2")
    assert cf.mexists("s1", *items(100, "s2")) == [1] * 100
    r.execute_command("CF.RESERVE", "other", 1000, "SEED", 7, "BUCKETSIZE", 4)
    with pytest.raises(redis.ResponseError, match="same layout"):
        r.execute_command("CF.MERGE", "s1", "other")


def test_each_filter_hashes_with_its_own_seed(server):
    # Two filters given the same items end in different bytes: their seeds
    # differ, so nobody can pick items that collide in every filter.
    r = server.client
    for key in ("a", "b"):
        r.execute_command("CF.RESERVE", key, 1000, "EXPANSION", 0)
        r.cf().insert(key, items(300))
    assert r.cf().scandump("a", 0)[1] != r.cf().scandump("b", 0)[1]


def test_keyspace_notifications(server):
    r = server.client
    r.config_set("notify-keyspace-events", "KEg")
    pubsub = r.pubsub()
    pubsub.psubscribe("__keyevent@0__:cf.*")
    pubsub.get_message(timeout=5)
    r.cf().add("f", "a")
    r.cf().delete("f", "a")
    events = []
    for _ in range(50):
        message = pubsub.get_message(timeout=0.2)
        if message and message["type"] == "pmessage":
            events.append(message["channel"].decode().split(":")[-1])
        if len(events) == 3:
            break
    pubsub.close()
    assert events == ["cf.reserve", "cf.add", "cf.del"]


def test_random_arguments_never_crash_the_server(server):
    r = server.client
    r.execute_command("CF.RESERVE", "f", 100)
    r.cf().insert("f", items(50))
    commands = ["CF.RESERVE", "CF.ADD", "CF.ADDNX", "CF.INSERT", "CF.INSERTNX",
                "CF.EXISTS", "CF.MEXISTS", "CF.DEL", "CF.COUNT", "CF.SCANDUMP",
                "CF.LOADCHUNK", "CF.INFO", "CF.MERGE"]
    words = ["f", "g", "ITEMS", "CAPACITY", "NOCREATE", "NOGROW", "BUCKETSIZE",
             "MAXITERATIONS", "EXPANSION", "BITS", "SEED", "0", "1", "2", "-1",
             "4", "8", "65536", "1073741824", "9223372036854775807",
             "-9223372036854775808", "18446744073709551616", "", "x" * 1000,
             "\x00\xff"]
    generator = random.Random(42)
    for _ in range(3000):
        args = [generator.choice(commands)]
        for _ in range(generator.randrange(0, 7)):
            args.append(generator.choice(words))
        try:
            r.execute_command(*args)
        except redis.ResponseError:
            pass
    assert r.ping()
    assert r.cf().mexists("f", *items(50)) == [1] * 50


def test_filters_count_in_used_memory_and_maxmemory(server):
    # The filter's table comes from the server's allocator: once a filter
    # takes the server past maxmemory, deny-oom commands are refused.
    r = server.client
    before = r.info("memory")["used_memory"]
    r.execute_command("CF.RESERVE", "big", 10_000_000, "BITS", 16, "EXPANSION", 0)
    size = r.memory_usage("big")
    assert size > 20_000_000
    assert r.info("memory")["used_memory"] - before >= 0.95 * size
    r.config_set("maxmemory-policy", "noeviction")
    r.config_set("maxmemory", before + size // 2)
    with pytest.raises(redis.ResponseError, match="OOM"):
        r.cf().add("big", "a")
    assert r.cf().exists("big", "a") == 0
    r.delete("big")
    assert r.info("memory")["used_memory"] < before + size // 2
    assert r.cf().add("small", "a") == 1


def test_acl_key_patterns_see_every_key(server):
    # The commands' key positions (and CF.MERGE's two keys) reach ACLs:
    # a user limited to allowed:* can use those filters and no other.
    r = server.client
    r.execute_command("ACL", "SETUSER", "limited", "on", ">secret", "~allowed:*",
                      "+@all")
    limited = redis.Redis(host="127.0.0.1", port=server.port, username="limited",
                          password="secret", socket_timeout=30)
    try:
        assert limited.cf().add("allowed:f", "a") == 1
        assert limited.cf().exists("allowed:f", "a") == 1
        for args in (("CF.ADD", "other", "a"), ("CF.EXISTS", "other", "a"),
                     ("CF.MERGE", "allowed:g", "other"),
                     ("CF.MERGE", "other", "allowed:f"),
                     ("CF.LOADCHUNK", "other", 1, "x")):
            with pytest.raises(redis.exceptions.NoPermissionError):
                limited.execute_command(*args)
        limited.execute_command("CF.MERGE", "allowed:g", "allowed:f")
        assert limited.cf().exists("allowed:g", "a") == 1
    finally:
        limited.close()
    assert not r.exists("other")


def test_commands_are_in_acl_categories_where_the_server_has_them(server):
    # Redis 7.2 and Valkey let modules name categories; 7.0 puts module
    # commands in none but @all.
    r = server.client
    version = tuple(int(part) for part in
                    r.info("server")["redis_version"].split(".")[:2])
    reads = {name.decode() for name in r.execute_command("ACL", "CAT", "read")}
    writes = {name.decode() for name in r.execute_command("ACL", "CAT", "write")}
    if version >= (7, 2):
        assert {"cf.exists", "cf.mexists", "cf.count", "cf.info"} <= reads
        assert {"cf.add", "cf.insert", "cf.del", "cf.loadchunk"} <= writes
    else:
        assert not any(name.startswith("cf.") for name in reads | writes)


def test_fprate_chooses_the_fingerprint_width(server):
    r = server.client
    cf = r.cf()
    r.execute_command("CF.RESERVE", "tight", 20000, "FPRATE", 0.001, "EXPANSION", 0)
    r.execute_command("CF.RESERVE", "loose", 20000, "FPRATE", 0.05, "EXPANSION", 0)
    for key in ("tight", "loose"):
        for start in range(0, 20000, 1000):
            cf.insert(key, items(20000)[start:start + 1000])
    absent = items(200000, "absent")
    false_positives = sum(sum(cf.mexists("tight", *absent[i:i + 1000]))
                          for i in range(0, len(absent), 1000))
    # At most 0.1% expected; 200,000 probes put the count near its mean.
    assert false_positives <= 0.0013 * len(absent)
    assert r.memory_usage("loose") < r.memory_usage("tight")
    cases = [
        (("CF.RESERVE", "g", 100, "FPRATE", 0), r"FPRATE: value must be in the range \(0, 1\)"),
        (("CF.RESERVE", "g", 100, "FPRATE", 1), r"FPRATE: value must be in the range \(0, 1\)"),
        (("CF.RESERVE", "g", 100, "FPRATE", "often"), "Couldn't parse FPRATE"),
        (("CF.RESERVE", "g", 100, "FPRATE", 0.01, "BITS", 8), "FPRATE and BITS exclude each other"),
        # 27 bits are left beside EXPANSION 1's 5 growth bits.
        (("CF.RESERVE", "g", 100, "FPRATE", 1e-12), "needs fingerprints wider than the 27 bits"),
    ]
    for args, error in cases:
        with pytest.raises(redis.ResponseError, match=error):
            r.execute_command(*args)
    assert not r.exists("g")
