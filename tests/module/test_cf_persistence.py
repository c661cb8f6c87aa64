# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Nothing lost, nothing diverges: RDB (DEBUG RELOAD, a restart, RESTORE),
# AOF (a restart from commands and from a rewrite), COPY, SCANDUMP and
# LOADCHUNK with bad chunks, and a replica that holds the primary's bytes
# after a million mixed writes and answers every key after a failover; the
# BUCKETSIZE a layout does not record, through all of them.
import ctypes
import ctypes.util
import random
import resource

import pytest
import redis

from conftest import PRELOAD, wait_until


def items(n, prefix="item"):
    return [f"{prefix}:{i}" for i in range(n)]


def fill(r, n=20000):
    """Filters of each kind, and the items each must answer."""
    cf = r.cf()
    expected = {}
    r.execute_command("CF.RESERVE", "grown", 1000, "EXPANSION", 1)
    expected["grown"] = items(n, "g")
    r.execute_command("CF.RESERVE", "wide", 5000, "BUCKETSIZE", 4, "BITS", 16,
                      "EXPANSION", 0)
    expected["wide"] = items(4000, "w")
    # A BUCKETSIZE the layout does not record (its arguments chunk).
    r.execute_command("CF.RESERVE", "bucket3", 3000, "BUCKETSIZE", 3)
    expected["bucket3"] = items(3000, "b")
    expected["deleted"] = items(3000, "d")
    for key, keys in expected.items():
        for i in range(0, len(keys), 1000):
            cf.insert(key, keys[i:i + 1000])
    for key in items(1000, "d"):
        assert cf.delete("deleted", key) == 1
    expected["deleted"] = expected["deleted"][1000:]
    return expected


def digests(r, keys):
    """Each filter's bytes (its digest) and what CF.INFO reports of it, "Size"
    included: the same after every reload, copy and replication."""
    return {key: (r.execute_command("DEBUG", "DIGEST-VALUE", key)[0],
                  vars(r.cf().info(key)))
            for key in keys}


def memory(r, keys):
    return {key: r.memory_usage(key) for key in keys}


def assert_answers(r, expected):
    cf = r.cf()
    for key, keys in expected.items():
        for i in range(0, len(keys), 1000):
            assert cf.mexists(key, *keys[i:i + 1000]) == [1] * len(keys[i:i + 1000]), key


def test_debug_reload_restart_and_copy(server):
    r = server.client
    expected = fill(r)
    before = digests(r, expected)
    assert before["bucket3"][1]["bucketSize"] == 3
    memory_before = memory(r, expected)
    assert r.execute_command("DEBUG", "RELOAD")
    assert digests(r, expected) == before
    assert memory(r, expected) == memory_before
    assert_answers(r, expected)
    assert r.copy("grown", "copied")
    assert digests(r, ["copied"])["copied"] == before["grown"]
    r.cf().add("copied", "only in the copy")
    assert r.cf().info("copied").insertedNum == len(expected["grown"]) + 1
    assert r.cf().info("grown").insertedNum == len(expected["grown"])
    server.restart(save=True)
    r = server.client
    assert digests(r, expected) == before
    assert memory(r, expected) == memory_before
    assert_answers(r, expected)


@pytest.mark.parametrize("rewrite", [False, True])
def test_aof_restart(make_server, rewrite):
    server = make_server(extra=["--appendonly", "yes", "--appendfsync", "no"])
    r = server.client
    expected = fill(r, 5000)
    if rewrite:
        r.bgrewriteaof()
        wait_until(lambda: r.info("persistence")["aof_rewrite_in_progress"] == 0
                   and r.info("persistence")["aof_rewrite_scheduled"] == 0,
                   what="the AOF rewrite")
        # Writes after the rewrite go to the AOF's incremental part.
        r.cf().insert("grown", ["after the rewrite"])
        expected["grown"].append("after the rewrite")
    before = digests(r, expected)
    memory_before = memory(r, expected)
    server.restart()
    r = server.client
    assert digests(r, expected) == before
    assert memory(r, expected) == memory_before
    assert_answers(r, expected)


def dump(r, key):
    chunks = []
    position = 0
    for _ in range(1000):
        position, data = r.cf().scandump(key, position)
        if position == 0:
            return chunks
        chunks.append((position, data))
    raise AssertionError("SCANDUMP did not end")


def test_scandump_loadchunk_refuses_bad_chunks(server):
    r = server.client
    cf = r.cf()
    # More than 16 MiB of table, so that the dump has several chunks.
    r.execute_command("CF.RESERVE", "big", 20_000_000, "EXPANSION", 0, "BITS", 16)
    keys = items(50000)
    for i in range(0, len(keys), 5000):
        cf.insert("big", keys[i:i + 5000])
    r.execute_command("CF.RESERVE", "other", 20_000_000, "EXPANSION", 0, "BITS", 16)
    chunks = dump(r, "big")
    foreign = dump(r, "other")
    assert len(chunks) >= 3
    assert [position for position, _ in chunks] == list(range(1, len(chunks) + 1))

    def bytes_of_copy():  # no CF.INFO while a load is in progress
        if not r.exists("copy"):
            return None
        return r.execute_command("DEBUG", "DIGEST-VALUE", "copy")[0]

    def refused(position, data, what):
        state = bytes_of_copy()
        with pytest.raises(redis.ResponseError, match=what):
            cf.loadchunk("copy", position, data)
        assert bytes_of_copy() == state

    first = chunks[0][1]
    refused(1, first[:-10], "shorter|payload")
    refused(1, first[:20], "shorter than its frame")
    refused(2, chunks[1][1], "not found")
    assert cf.loadchunk("copy", 1, first)
    with pytest.raises(redis.ResponseError, match="still being loaded"):
        cf.exists("copy", keys[0])
    refused(1, first, "item exists")
    refused(3, chunks[2][1], "position 2 is expected")
    refused(2, chunks[2][1], "arrived where chunk 1 was expected")
    refused(2, foreign[1][1], "another dump")
    damaged = bytearray(chunks[1][1])
    damaged[len(damaged) // 2] ^= 0x40
    refused(2, bytes(damaged), "checksum mismatch")
    refused(2, chunks[1][1][:1000], "describes a payload")
    # A load in progress survives a reload, and continues after it.
    assert r.execute_command("DEBUG", "RELOAD")
    for position, data in chunks[1:]:
        assert cf.loadchunk("copy", position, data)
    assert digests(r, ["copy"])["copy"] == digests(r, ["big"])["big"]
    assert cf.mexists("copy", *keys[:5000]) == [1] * 5000


def test_scandump_after_writes_dumps_the_filter_as_it_is_now(server):
    """SCANDUMP keeps the filter's checksum between calls; each write makes
    it dump the new bytes, which load into a copy of the filter."""
    r = server.client
    cf = r.cf()
    r.execute_command("CF.RESERVE", "f", 1000, "EXPANSION", 1)
    assert cf.insert("f", items(100)) == [1] * 100
    dump(r, "f")
    writes = [
        lambda: cf.add("f", "added"),
        lambda: cf.insert("f", ["inserted"]),
        lambda: cf.delete("f", "item:0"),
    ]
    for step, write in enumerate(writes):
        write()
        copy = f"copy{step}"
        for position, data in dump(r, "f"):
            assert cf.loadchunk(copy, position, data)
        assert digests(r, [copy])[copy] == digests(r, ["f"])["f"]


def test_the_bucket_size_travels_in_the_dump(server):
    """A BUCKETSIZE the layout does not record leads the dump in an
    arguments chunk, which CF.LOADCHUNK checks like any other."""
    r = server.client
    cf = r.cf()
    r.execute_command("CF.RESERVE", "f", 5000, "BUCKETSIZE", 7)
    cf.insert("f", items(1000))
    chunks = dump(r, "f")
    position, arguments = chunks[0]
    assert position == 1 and arguments[:4] == b"CFA\x01" and len(arguments) == 16
    # A filter of BUCKETSIZE 2, 4 or 8 dumps as before the chunk existed.
    r.execute_command("CF.RESERVE", "plain", 5000, "BUCKETSIZE", 4)
    assert dump(r, "plain")[0][1][:4] == b"CKC\x01"

    damaged = bytearray(arguments)
    damaged[4] = 9
    for bad, what in [(bytes(damaged), "wrong checksum"),
                      (arguments[:12], "arguments chunk of 12 bytes")]:
        with pytest.raises(redis.ResponseError, match=what):
            cf.loadchunk("copy", 1, bad)
        assert not r.exists("copy")
    for position, data in chunks:
        assert cf.loadchunk("copy", position, data)
    assert digests(r, ["copy"])["copy"] == digests(r, ["f"])["f"]
    assert cf.info("copy").bucketSize == 7
    assert cf.mexists("copy", *items(1000)) == [1] * 1000
    # The chunk must name another size than the filter's own slots per
    # bucket: of 2, 4 and 8, exactly one is refused, at the filter's end.
    refused = []
    for size in (2, 4, 8):
        forged = bytearray(arguments)
        forged[4] = size
        forged[8:] = xxh3_64(bytes(forged[:8])).to_bytes(8, "little")
        key = f"forged{size}"
        assert cf.loadchunk(key, 1, bytes(forged))
        try:
            for position, data in chunks[1:]:
                cf.loadchunk(key, position, data)
            assert cf.info(key).bucketSize == size
        except redis.ResponseError as e:
            assert "the filter's own bucket size" in str(e)
            refused.append(size)
    assert len(refused) == 1


def xxh3_64(data):
    """XXH3-64 with seed 0, from the libxxhash the module is built with."""
    library = ctypes.CDLL(ctypes.util.find_library("xxhash"))
    library.XXH3_64bits.restype = ctypes.c_uint64
    library.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    return library.XXH3_64bits(data, len(data))


def crc64(data):
    """Redis's CRC-64 (Jones), as RESTORE checks it."""
    crc = 0
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ (0x95AC9329AC4BC9B5 if crc & 1 else 0)
    return crc


def test_restore_validates_the_record(server):
    assert crc64(b"123456789") == 0xE9C6D914C4B8D9CA
    r = server.client
    # Uncompressed, so that a byte of the payload is a byte of the record.
    r.config_set("rdbcompression", "no")
    r.cf().insert("f", items(100))
    payload = r.dump("f")
    assert r.restore("g", 0, payload)
    assert r.cf().mexists("g", *items(100)) == [1] * 100
    body = bytearray(payload[:-8])
    # A byte of the filter's table, inside the module's string: its own
    # checksum must catch it, since the payload's CRC is made to match.
    body[len(body) // 2] ^= 0x01
    forged = bytes(body) + crc64(body).to_bytes(8, "little")
    with pytest.raises(redis.ResponseError, match="Bad data format"):
        r.restore("h", 0, forged)
    assert not r.exists("h")
    assert "invalid CF record" in server.log()
    assert r.ping()


def rdb_len(data, at):
    """An RDB length at data[at]: (value, next position)."""
    kind = data[at] >> 6
    if kind == 0:
        return data[at] & 0x3F, at + 1
    if kind == 1:
        return ((data[at] & 0x3F) << 8) | data[at + 1], at + 2
    width = 4 if data[at] == 0x80 else 8
    return int.from_bytes(data[at + 1:at + 1 + width], "big"), at + 1 + width


def encode_rdb_len(value):
    if value < 64:
        return bytes([value])
    if value < 16384:
        return bytes([0x40 | (value >> 8), value & 0xFF])
    if value < 2**32:
        return b"\x80" + value.to_bytes(4, "big")
    return b"\x81" + value.to_bytes(8, "big")


def as_single_buffer_record(payload):
    """A DUMP payload of a filter (encoding version 2: its record in string
    buffers) rewritten as encoding version 1 wrote it: one string."""
    at = 1  # the type byte
    module_id, at = rdb_len(payload, at)
    assert module_id & 0x3FF == 2
    assert payload[at] == 2  # the buffer count, an unsigned
    count, at = rdb_len(payload, at + 1)
    record = b""
    for _ in range(count):
        assert payload[at] == 5  # a string
        size, at = rdb_len(payload, at + 1)
        record += payload[at:at + size]
        at += size
    assert payload[at] == 0  # the module's end marker
    body = (payload[:1] + encode_rdb_len(module_id - 2 + 1) + b"\x05" +
            encode_rdb_len(len(record)) + record + payload[at:-8])
    return body + crc64(body).to_bytes(8, "little")


def test_records_of_the_single_buffer_version_still_load(server):
    r = server.client
    r.config_set("rdbcompression", "no")
    r.execute_command("CF.RESERVE", "f", 1000, "EXPANSION", 1)
    r.cf().insert("f", items(3000))
    assert r.restore("g", 0, as_single_buffer_record(r.dump("f")))
    assert digests(r, ["g"])["g"] == digests(r, ["f"])["f"]
    assert r.cf().mexists("g", *items(3000)) == [1] * 3000


def mixed_writes(r, count, seed):
    """count writes of every kind, pipelined, over a few filters."""
    generator = random.Random(seed)
    keys = ["small", "grows", "nogrowth", "auto", "bucket16"]
    r.execute_command("CF.RESERVE", "small", 100000, "BUCKETSIZE", 4)
    r.execute_command("CF.RESERVE", "bucket16", 5000, "BUCKETSIZE", 16)
    r.execute_command("CF.RESERVE", "grows", 1000, "EXPANSION", 1, "MAXITERATIONS", 500)
    r.execute_command("CF.RESERVE", "nogrowth", 2000, "EXPANSION", 0)
    added = {key: [] for key in keys}
    pipe = r.pipeline(transaction=False)
    for n in range(count):
        key = keys[generator.randrange(len(keys))]
        item = f"i{generator.randrange(count // 2)}"
        kind = generator.randrange(10)
        if kind < 5:
            pipe.execute_command("CF.ADD", key, item)
        elif kind < 6:
            pipe.execute_command("CF.ADDNX", key, item)
        elif kind < 7:
            pipe.execute_command("CF.INSERT", key, "ITEMS", item, item + "b")
        elif kind < 8:
            pipe.execute_command("CF.INSERTNX", key, "ITEMS", item)
        else:
            pipe.execute_command("CF.DEL", key, item)
        if n % 5000 == 4999:
            pipe.execute(raise_on_error=False)
    pipe.execute(raise_on_error=False)
    return keys


def test_replica_holds_the_primarys_bytes_and_survives_failover(make_server):
    primary = make_server("primary")
    replica = make_server("replica")
    # Filters written before the replica attaches reach it in the primary's
    # RDB (a full sync); the writes after, in the replication stream.
    before = fill(primary.client, 5000)
    replica.client.replicaof("127.0.0.1", primary.port)
    wait_until(lambda: replica.client.info("replication")["master_link_status"] == "up",
               what="the replica's link")
    keys = mixed_writes(primary.client, 1_000_000, seed=3) + list(before)
    primary.client.cf().insert("loaded", items(1000, "l"))
    for position, data in dump(primary.client, "loaded"):
        primary.client.cf().loadchunk("copy", position, data)
    primary.client.execute_command("CF.MERGE", "merged", "loaded")
    primary.client.execute_command("CF.RESERVE", "held", 1000)
    primary.client.execute_command("CF.INSERT", "held", "NOGROW", "ITEMS",
                                   *items(3000, "h"))
    keys += ["loaded", "copy", "merged", "held"]
    assert primary.client.wait(1, 60000) == 1
    wait_until(lambda: replica.client.info("replication")["master_repl_offset"]
               == primary.client.info("replication")["master_repl_offset"],
               what="the replica to catch up")
    assert digests(replica.client, keys) == digests(primary.client, keys)
    assert (replica.client.execute_command("DEBUG", "DIGEST")
            == primary.client.execute_command("DEBUG", "DIGEST"))
    for key in keys:
        assert replica.client.cf().scandump(key, 0) == primary.client.cf().scandump(key, 0)
    # A CF.DEL that deleted nothing is not replicated.
    offset = primary.client.info("replication")["master_repl_offset"]
    assert primary.client.cf().delete("small", "never added") == 0
    assert primary.client.info("replication")["master_repl_offset"] == offset
    # The failover: the replica answers as the primary did, and takes writes.
    probes = [f"i{i}" for i in range(0, 500_000, 25)]
    answers = {key: primary.client.cf().mexists(key, *probes) for key in keys}
    expected = {"copy": items(1000, "l"), "merged": items(1000, "l"), **before}
    primary.stop()
    replica.client.replicaof("NO", "ONE")
    assert {key: replica.client.cf().mexists(key, *probes) for key in keys} == answers
    assert_answers(replica.client, expected)
    replica.client.cf().add("small", "after the failover")
    assert replica.client.cf().exists("small", "after the failover") == 1


def address_space_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmSize:"):
                return int(line.split()[1])
    raise AssertionError("no VmSize in /proc/{pid}/status")


def test_growth_refused_for_want_of_memory_leaves_the_replica_identical(make_server):
    """A primary that cannot allocate a growth answers as for a full filter and
    replicates those items with NOGROW: the replica, which has the memory,
    does not grow either, and both hold the same bytes and every item."""
    if PRELOAD:
        pytest.skip("a sanitizer's runtime maps more than the limit allows")
    primary = make_server("primary")
    replica = make_server("replica")
    replica.client.replicaof("127.0.0.1", primary.port)
    wait_until(lambda: replica.client.info("replication")["master_link_status"] == "up",
               what="the replica's link")
    r = primary.client
    # One growth by 2 * 32768 of a filter for 1000 items needs about 200 MB.
    r.execute_command("CF.RESERVE", "f", 1000, "EXPANSION", 32768)
    pid = primary.process.pid
    soft, hard = resource.prlimit(pid, resource.RLIMIT_AS)
    resource.prlimit(pid, resource.RLIMIT_AS,
                     ((address_space_kib(pid) << 10) + (64 << 20), hard))
    try:
        keys = items(3000)
        replies = r.execute_command("CF.INSERT", "f", "ITEMS", *keys)
        with pytest.raises(redis.ResponseError, match="Filter is full"):
            r.execute_command("CF.ADD", "f", "one more")
    finally:
        resource.prlimit(pid, resource.RLIMIT_AS, (soft, hard))
    assert set(replies) == {1, -1}
    stored = [key for key, reply in zip(keys, replies) if reply == 1]
    assert r.cf().info("f").filterNum == 1
    assert r.wait(1, 60000) == 1
    wait_until(lambda: replica.client.info("replication")["master_repl_offset"]
               == r.info("replication")["master_repl_offset"],
               what="the replica to catch up")
    assert digests(replica.client, ["f"]) == digests(r, ["f"])
    for client in (r, replica.client):
        assert client.cf().mexists("f", *stored) == [1] * len(stored)
    # With the memory back, the filter grows and takes the rest.
    assert r.execute_command("CF.INSERT", "f", "ITEMS", *keys) == [1] * len(keys)
    assert r.cf().info("f").filterNum == 2
