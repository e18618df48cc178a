"""idempotency-demo: an interactive lab that teaches idempotency keys.

:func:`create_app` is the application factory; ``python -m demo`` serves it.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from flask import Flask

from .engine.stepping import MAX_PAUSED, MAX_PAUSED_PER_LAB
from .payments.settings import Settings
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
        )

    return LabRegistry(
        max_labs=cfg["LAB_MAX"],
        idle_s=cfg["LAB_IDLE_S"],
        fresh_s=cfg["LAB_FRESH_S"],
        max_replays=cfg["LAB_MAX_REPLAYS"],
        make_lab=make_lab,
    )


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
    )
    if test_config is not None:
        app.config.from_mapping(test_config)

    app.extensions["labs"] = _registry(app.config)

    from . import web
    from .web import assets, errors, filters, headers, i18n, nav, shell, workshop
    from .web.natural import bp as natural_bp
    from .web.payments import api, views

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
    app.register_blueprint(workshop.bp)
    app.register_blueprint(natural_bp)
    app.wsgi_app = headers.strip_field_values(app.wsgi_app)  # type: ignore[method-assign,assignment]
    return app
