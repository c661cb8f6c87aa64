# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# A 3-primary cluster on 127.0.0.1, made by redis-cli --cluster create and
# used through redis-py's cluster client: the module's key positions route
# every command to its slot's node, filters spread over the nodes, and
# every item of every filter is found, also after their slot moved to
# another node (CLUSTER SETSLOT and MIGRATE, which carries each filter in
# its RDB record).
import shutil
import subprocess

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import wait_until

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def make_cluster(make_server):
    """Three primaries on loopback ports, with every slot assigned."""
    nodes = [make_server(f"node{i}", extra=["--cluster-enabled", "yes",
                                            "--cluster-config-file", "nodes.conf",
                                            "--cluster-node-timeout", "5000"])
             for i in range(3)]
    subprocess.run([REDIS_CLI, "--cluster", "create"]
                   + [f"127.0.0.1:{node.port}" for node in nodes]
                   + ["--cluster-replicas", "0", "--cluster-yes"],
                   check=True, timeout=60, stdout=subprocess.DEVNULL)
    wait_until(lambda: all(node.client.cluster("info")["cluster_state"] == "ok"
                           for node in nodes), what="the cluster")
    return nodes


def test_filters_spread_over_a_cluster_and_lose_nothing(make_server):
    nodes = make_cluster(make_server)
    cluster = RedisCluster(host="127.0.0.1", port=nodes[0].port, socket_timeout=30)
    try:
        filters = [f"filter:{i}" for i in range(300)]
        for name in filters:
            cluster.execute_command("CF.INSERT", name, "ITEMS",
                                    *[f"{name}:{j}" for j in range(20)])
        assert all(node.client.dbsize() > 30 for node in nodes)
        for name in filters:
            assert cluster.execute_command(
                "CF.MEXISTS", name, *[f"{name}:{j}" for j in range(20)]) == [1] * 20
        # Two keys of one slot merge; keys of two slots are refused.
        cluster.execute_command("CF.ADD", "{tag}a", "x")
        cluster.execute_command("CF.MERGE", "{tag}b", "{tag}a")
        assert cluster.execute_command("CF.EXISTS", "{tag}b", "x") == 1
        assert cluster.keyslot("filter:1") != cluster.keyslot("filter:2")
        with pytest.raises(redis.ResponseError, match="CROSSSLOT"):
            nodes[0].client.execute_command("CF.MERGE", "filter:1", "filter:2")
    finally:
        cluster.close()


def test_a_slot_of_filters_moves_to_another_node_and_loses_nothing(make_server):
    nodes = make_cluster(make_server)
    names = [f"{{moving}}:{i}" for i in range(20)]
    expected = {name: [f"{name}:{j}" for j in range(2000)] for name in names}
    cluster = RedisCluster(host="127.0.0.1", port=nodes[0].port, socket_timeout=30)
    try:
        for name, items in expected.items():
            # Reserved small, so that each filter has grown.
            cluster.execute_command("CF.RESERVE", name, 100)
            cluster.execute_command("CF.INSERT", name, "ITEMS", *items)
        slot = cluster.keyslot(names[0])
    finally:
        cluster.close()
    source = next(node for node in nodes
                  if node.client.cluster("countkeysinslot", slot) == len(names))
    target = next(node for node in nodes if node is not source)
    digests = {name: source.client.execute_command("DEBUG", "DIGEST-VALUE", name)
               for name in names}
    infos = {name: vars(source.client.cf().info(name)) for name in names}
    assert all(info["filterNum"] > 1 for info in infos.values())

    source_id = source.client.execute_command("CLUSTER", "MYID").decode()
    target_id = target.client.execute_command("CLUSTER", "MYID").decode()
    target.client.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
    source.client.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
    keys = source.client.execute_command("CLUSTER", "GETKEYSINSLOT", slot, 1000)
    assert sorted(key.decode() for key in keys) == sorted(names)
    source.client.execute_command("MIGRATE", "127.0.0.1", target.port, "", 0,
                                  60000, "KEYS", *keys)
    for node in nodes:
        node.client.execute_command("CLUSTER", "SETSLOT", slot, "NODE", target_id)
    assert source.client.cluster("countkeysinslot", slot) == 0
    for name in names:
        assert target.client.execute_command("DEBUG", "DIGEST-VALUE", name) == digests[name]
        assert vars(target.client.cf().info(name)) == infos[name]
    wait_until(lambda: all(node.client.cluster("info")["cluster_state"] == "ok"
                           for node in nodes), what="the cluster after the move")
    cluster = RedisCluster(host="127.0.0.1", port=nodes[0].port, socket_timeout=30)
    try:
        for name, items in expected.items():
            assert cluster.execute_command("CF.MEXISTS", name, *items) == [1] * len(items)
        # The moved filters take writes on their new node.
        cluster.execute_command("CF.ADD", names[0], "after the move")
        assert cluster.execute_command("CF.EXISTS", names[0], "after the move") == 1
    finally:
        cluster.close()
