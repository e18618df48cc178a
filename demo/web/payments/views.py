"""The payment lab's HTML fragments: the panels (polled), the sequence diagram as SVG,
and the order form of a new order. The JSON API that changes the lab is :mod:`.api`."""

from __future__ import annotations

import re

from flask import Blueprint, Response, render_template, request
from flask.blueprints import BlueprintSetupState
from werkzeug.wrappers import Response as BaseResponse

from ...payments.explain.charged import RETRY
from ...payments.gateway import summarise
from .. import lab_to_read, lab_to_write
from .order import KEY_TEMPLATE, order_form
from .panels import panels_context, panels_response, poll_s
from .sequence import diagram

bp = Blueprint("payments", __name__)


@bp.record_once
def _template_globals(state: BlueprintSetupState) -> None:
    # The explanation's "A Retry from here…", which holds only for the answer's own order:
    # the page marks it, so a tab whose form holds another order says what its Retry sends.
    state.app.jinja_env.globals["retry_advice"] = RETRY


@bp.get("/lab/<lab_id>/panels")
def panels(lab_id: str) -> BaseResponse:
    """The four panels, for polling: 204 (nothing to swap) while ``since`` is current."""
    lab = lab_to_read(lab_id)
    stale = request.args.get("settings_version", str(lab.payments.settings_version)) != str(
        lab.payments.settings_version
    )
    if request.args.get("since") == str(lab.version) and not stale:
        return Response(status=204)
    return panels_response(lab, settings_stale=stale)


@bp.get("/lab/<lab_id>/sequence.svg")
def sequence_svg(lab_id: str) -> Response:
    """The sequence diagram of the last requests, as SVG (``?download=1`` to save it)."""
    lab = lab_to_read(lab_id)
    summary = summarise(lab.payments.gateway.ledger())
    svg = render_template("payments/sequence.svg", d=diagram(lab.payments.requests(), summary))
    response = Response(svg, 200, mimetype="image/svg+xml")
    response.headers["Cache-Control"] = "no-store"
    if request.args.get("download") == "1":
        response.headers["Content-Disposition"] = 'attachment; filename="idempotency-sequence.svg"'
    return response


@bp.post("/lab/<lab_id>/new-order")
def new_order(lab_id: str) -> str:
    """The order form for a new intent: the next unused order id, and so a new key; the
    panels out of band, so the explanation's advice speaks of the new order at once."""
    lab = lab_to_write(lab_id)
    current = request.form.get("order_id", "")
    amount = request.form.get("amount", "")
    keep = re.fullmatch(r"[0-9]{1,15}", amount) is not None
    form = render_template(
        "payments/_partials/order_form.html",
        form=order_form(lab.payments.new_order_id(after=current), int(amount) if keep else 100_000),
        lab=lab,
        key_template=KEY_TEMPLATE,
    )
    panels = render_template(
        "payments/_partials/panels.html", poll_s=poll_s(), oob=True, **panels_context(lab)
    )
    return form + panels
