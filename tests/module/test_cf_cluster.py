# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# A 3-primary cluster on 127.0.0.1, made by redis-cli --cluster create and
# used through redis-py's cluster client: the module's key positions route
# every command to its slot's node, filters spread over the nodes, and
# every item of every filter is found.
import shutil
import subprocess

import pytest
import redis
from redis.cluster import RedisCluster

from conftest import wait_until

REDIS_CLI = shutil.which("redis-cli") or "/usr/bin/redis-cli"


def test_filters_spread_over_a_cluster_and_lose_nothing(make_server):
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
