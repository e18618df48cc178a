"""Shared fixtures: the app and its test client (as in Flask's tutorial)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo import create_app
from demo.registry import LabRegistry
from demo.workspace import Workspace


@pytest.fixture
def app(request: pytest.FixtureRequest) -> Iterator[Flask]:
    # A module may add to the config: ``APP_CONFIG = {"I18N_MARK_MISSING": True}`` marks an
    # untranslated text in its pages.
    extra = getattr(request.module, "APP_CONFIG", {})
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0, **extra})
    yield app


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture
def lab_of(app: Flask):
    """``lab_of("id")``: the in-memory lab behind ``/lab/id``."""
    registry: LabRegistry = app.extensions["labs"]

    def get(lab_id: str) -> Workspace:
        return registry.get(lab_id)

    return get


# -- Redis, for the queue lab's broker tests ------------------------------------------------


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A Redis to test against: ``$DEMO_REDIS_URL``, else a ``redis-server`` started here
    on a free loopback port (stopped at the end), else skip; under ``CI`` a missing Redis
    fails instead, so the Redis tests never silently skip there."""
    url = os.environ.get("DEMO_REDIS_URL")
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("CI is set and no Redis is available (DEMO_REDIS_URL, redis-server)")
        pytest.skip("no Redis: set DEMO_REDIS_URL or install redis-server")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        import redis

        client = redis.Redis.from_url(url, socket_connect_timeout=1)
        deadline = time.monotonic() + 30
        while True:  # wait for the server to answer, not for a fixed time
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if server.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"redis-server did not start on port {port}")
                time.sleep(0.05)
        client.close()
        yield url
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(params=["memory", "redis"])
def make_broker(request: pytest.FixtureRequest) -> Iterator[Callable[[], Any]]:
    """Each test that takes it runs twice: on the in-memory broker, and on Redis Streams
    (each test under a prefix of its own, deleted afterwards)."""
    from demo.queue.memory import MemoryBroker

    if request.param == "memory":
        yield MemoryBroker
        return
    from demo.queue.redis_streams import connect, redis_brokers

    client = connect(request.getfixturevalue("redis_url"), timeout_s=10)
    base = f"idem-test:{uuid.uuid4().hex}:"
    yield redis_brokers(client, "t", base=base)
    for key in client.scan_iter(f"{base}*"):
        client.delete(key)
    client.close()
