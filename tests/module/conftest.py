# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Servers for the CF module's tests: each test starts its own redis-server
# (or valkey-server) on a free 127.0.0.1 port with the module loaded
# (redis_server.py, beside this file), and stops it whatever the outcome. The module,
# the server binary and a sanitizer runtime to preload come from the
# environment (CUCKOO_CF_MODULE, CUCKOO_CF_SERVER, CUCKOO_CF_PRELOAD), which
# ctest sets.
import os

import pytest

from redis_server import Server, wait_until  # noqa: F401

MODULE = os.environ.get("CUCKOO_CF_MODULE", "")
SERVER = os.environ.get("CUCKOO_CF_SERVER", "redis-server")
PRELOAD = os.environ.get("CUCKOO_CF_PRELOAD", "")


@pytest.fixture
def make_server(tmp_path):
    assert MODULE, "CUCKOO_CF_MODULE must name the built module"
    servers = []

    def make(name="server", extra=()):
        server = Server(tmp_path / name, MODULE, SERVER, PRELOAD, extra)
        servers.append(server)
        return server.start()

    yield make
    for server in servers:
        server.stop()


@pytest.fixture
def server(make_server):
    return make_server()
