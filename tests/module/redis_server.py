# SPDX-License-Identifier: Apache-2.0 OR GPL-2.0-only
# Starting and stopping a redis-server (or valkey-server) with a module (the
# CF module, or RedisBloom to compare with) on a free 127.0.0.1 port, in a folder of its own, for the module's tests
# and its benchmark. Every wait is bounded in time; stop() ends the process
# whatever state it is in.
import os
import socket
import subprocess
import time

import redis


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(condition, timeout=20.0, what="the condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Server:
    """A server process with a module, on a loopback port. server is the
    binary, module the .so to load, preload a library for LD_PRELOAD (a
    sanitizer's runtime)."""

    def __init__(self, folder, module, server="redis-server", preload="",
                 extra=()):
        self.folder = str(folder)
        self.module = module
        self.server = server
        self.preload = preload
        os.makedirs(self.folder, exist_ok=True)
        self.extra = list(extra)
        self.port = None
        self.process = None
        self.client = None

    def start(self):
        for _ in range(5):  # another process may take the port first
            self.port = free_port()
            args = [self.server, "--port", str(self.port), "--bind", "127.0.0.1",
                    "--dir", self.folder, "--loadmodule", self.module,
                    "--enable-debug-command", "yes", "--save", "",
                    "--logfile", "server.log"] + self.extra
            environment = dict(os.environ)
            if self.preload:
                environment["LD_PRELOAD"] = self.preload
                # The server's own allocations at exit are not the module's.
                environment["ASAN_OPTIONS"] = ":".join(
                    filter(None, [os.environ.get("ASAN_OPTIONS"), "detect_leaks=0"]))
            self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL,
                                            stderr=subprocess.STDOUT,
                                            env=environment)
            self.client = redis.Redis(host="127.0.0.1", port=self.port,
                                      socket_timeout=60)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and self.process.poll() is None:
                try:
                    self.client.ping()
                    return self
                except redis.exceptions.ConnectionError:
                    time.sleep(0.02)
            self.stop()
        raise AssertionError("the server did not start: " + self.log())

    def log(self):
        try:
            with open(os.path.join(self.folder, "server.log")) as f:
                return f.read()[-4000:]
        except OSError:
            return "(no log)"

    def restart(self, save=False):
        """Stops the server (after a SAVE if asked) and starts it again on
        the same folder, which it then loads its data from."""
        self.stop(save=save)
        return self.start()

    def stop(self, save=False):
        if self.process is None:
            return
        if self.process.poll() is None:
            try:
                self.client.shutdown(save=save, nosave=not save)
            except redis.exceptions.ConnectionError:
                pass
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.process = None
