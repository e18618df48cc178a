"""Shared fixtures: the app and its test client (as in Flask's tutorial)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from flask import Flask
from flask.testing import FlaskClient

from demo import create_app
from demo.registry import LabRegistry
from demo.workspace import Workspace


@pytest.fixture
def app() -> Iterator[Flask]:
    app = create_app({"TESTING": True, "DEFAULT_LATENCY_MS": 0})
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
