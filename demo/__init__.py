"""idempotency-demo: an interactive lab that teaches idempotency keys.

:func:`create_app` is the application factory; ``python -m demo`` serves it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from .engine.stepping import MAX_PAUSED, MAX_PAUSED_PER_LAB
from .payments.settings import Settings
from .queue.broker import Broker
from .queue.redis_streams import connect, redis_brokers
from .registry import LabRegistry
from .workspace import Workspace

__all__ = ["create_app"]


def _resources() -> Path:
    """Where ``templates/`` and ``static/`` are: the package (wheel) or the project root."""
    here = Path(__file__).resolve().parent
    return here if (here / "templates").is_dir() else here.parent


def _registry(cfg: Mapping[str, Any]) -> LabRegistry:
    """The registry of workspaces, each made with the configured defaults and caps."""
    # Each paused request holds a server thread: one budget for every lab.
    paused_slots = threading.BoundedSemaphore(cfg["STEP_MAX_PAUSED"])
    queue_brokers = _queue_brokers(cfg)

    def make_lab(lab_id: str) -> Workspace:
        settings = Settings(
            gateway_latency_ms=cfg["DEFAULT_LATENCY_MS"], ttl_s=cfg["DEFAULT_TTL_S"]
        )
        return Workspace(
            lab_id,
            settings=settings,
            max_log=cfg["LAB_MAX_LOG"],
            max_records=cfg["LAB_MAX_RECORDS"],
            max_ledger=cfg["LAB_MAX_LEDGER"],
            max_paused=cfg["STEP_MAX_PAUSED_PER_LAB"],
            paused_slots=paused_slots,
            queue_broker=queue_brokers(lab_id) if queue_brokers else None,
        )

    return LabRegistry(
        max_labs=cfg["LAB_MAX"],
        idle_s=cfg["LAB_IDLE_S"],
        fresh_s=cfg["LAB_FRESH_S"],
        max_replays=cfg["LAB_MAX_REPLAYS"],
        make_lab=make_lab,
    )


def _queue_brokers(cfg: Mapping[str, Any]) -> Callable[[str], Callable[[], Broker]] | None:
    """With ``REDIS_URL`` (``python -m demo --redis URL``): each workspace's queue lab on
    Redis Streams, under a prefix of this process and workspace, its keys expiring a while
    after the workspace would (``LAB_IDLE_S`` + 1 h). ``None``: the in-memory broker."""
    url = cfg.get("REDIS_URL")
    if not url:
        return None
    client = connect(url)
    base = f"idem-demo:{secrets.token_hex(4)}:"  # two servers on one Redis never share keys
    ttl_s = int(cfg["LAB_IDLE_S"]) + 3600
    return lambda lab_id: redis_brokers(client, lab_id, base=base, ttl_s=ttl_s)


def create_app(test_config: Mapping[str, Any] | None = None) -> Flask:
    """Create the lab's Flask app.

    :param test_config: settings that override the defaults below, e.g.
        ``{"DEFAULT_LATENCY_MS": 0}`` in tests.
    """
    root = _resources()
    app = Flask(
        __name__, template_folder=str(root / "templates"), static_folder=str(root / "static")
    )
    app.config.from_mapping(
        MAX_CONTENT_LENGTH=16 * 1024,  # bytes; a charge body is under 200
        LAB_MAX=300,  # attendees' labs at once, < 0.5 GiB full (see LabRegistry for who goes)
        LAB_IDLE_S=2 * 3600,  # a lab unused this long expires
        LAB_FRESH_S=5,  # a new lab is spared this long while its page proves it a person's
        LAB_MAX_REPLAYS=20,  # replays of exported histories at once, a quota of their own
        LAB_MAX_LOG=200,  # requests kept per lab (ring buffer)
        LAB_MAX_RECORDS=1000,  # idempotency records per lab
        LAB_MAX_LEDGER=500,  # charges kept per lab (ring buffer)
        DEFAULT_LATENCY_MS=300,  # gateway latency of a new lab, ms
        DEFAULT_TTL_S=24 * 3600,  # record TTL of a new lab, s
        POLL_S=2,  # how often an open page refreshes its panels, s
        STEP_MAX_PAUSED=MAX_PAUSED,  # requests in step mode at once, all labs together
        STEP_MAX_PAUSED_PER_LAB=MAX_PAUSED_PER_LAB,  # and in one lab
        INSTRUCTOR_TOKEN=secrets.token_urlsafe(16),  # of the /instructor link
        REDIS_URL=None,  # the queue lab's broker: Redis Streams at this URL, else in memory
    )
    if test_config is not None:
        app.config.from_mapping(test_config)

    app.extensions["labs"] = _registry(app.config)

    from . import web
    from .web import assets, errors, filters, headers, i18n, nav, shell, workshop
    from .web.natural import bp as natural_bp
    from .web.payments import api, views
    from .web.queue import api as queue_api
    from .web.queue import views as queue_views
    from .web.retries import api as retries_api
    from .web.retries import views as retries_views

    i18n.init(app)
    assets.init(app)
    errors.register(app)
    filters.register(app)
    nav.register(app)
    app.before_request(web.refuse_cross_site_writes)
    app.before_request(web.refuse_writes_to_replays)
    app.register_blueprint(shell.bp)
    app.register_blueprint(views.bp)
    app.register_blueprint(api.bp)
    app.register_blueprint(queue_api.bp)
    app.register_blueprint(workshop.bp)
    app.register_blueprint(natural_bp)
    app.register_blueprint(queue_views.bp)
    app.register_blueprint(retries_api.bp)
    app.register_blueprint(retries_views.bp)
    app.wsgi_app = headers.strip_field_values(app.wsgi_app)  # type: ignore[method-assign,assignment]
    return app
