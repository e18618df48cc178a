"""The plain-language "what just happened" of one work call, in the reader's language."""

from __future__ import annotations

from ..engine.text import N_, Text
from .entries import WorkEntry
from .worker import INVOICE_ID_ERROR


def explain(entry: WorkEntry) -> list[str | Text]:
    """Sentences saying what the work call ``entry`` did and why, under the settings it
    ran with (``entry.settings``); empty while it runs."""
    said: list[str | Text] = []
    s = entry.settings
    if entry.dead_lettered:
        said.append(Text(
            "%(ids)s had reached Max attempts (%(max)s) without an ack: the broker moved it "
            "to the dead-letter queue instead of delivering it again.",
            ids=", ".join(entry.dead_lettered), max=s.get("max_attempts"),
        ))  # fmt: skip
    outcome = entry.outcome
    if outcome == "idle" and entry.in_flight:
        said.append(Text(
            "No message was visible: %(n)s in flight, hidden until the visibility timeout "
            "passes. Move the clock past it to see a redelivery.",
            n=entry.in_flight,
        ))  # fmt: skip
    elif outcome == "idle":
        # Not "the queue is empty": the queue panel lists a dead letter as one of its
        # messages (run M read the two side by side).
        said.append(N_(
            "No message was visible, and none is in flight: nothing is left to deliver, and "
            "nothing will come back. An acked message is gone for good; a dead-lettered one "
            "waits in the dead-letter queue, which is never delivered from."
        ))  # fmt: skip
    elif outcome == "processed":
        said.append(_processed(entry))
    elif outcome == "duplicate_skipped":
        said.append(Text(
            "The dedup table already holds %(key)s as completed: the worker acked %(id)s and "
            "sent nothing. The table, not the number of deliveries, decides.",
            key=entry.key, id=entry.message_id,
        ))  # fmt: skip
    elif outcome == "lost":
        said.append(N_(
            "At-most-once: the broker acked the message on receive, then the worker failed. "
            "The job is gone: no message left to redeliver, no e-mail, and no error anywhere."
        ))  # fmt: skip
    elif outcome == "crashed":
        said.append(_crashed(entry))
    said += _relay(entry)
    return said


def _relay(entry: WorkEntry) -> list[str | Text]:
    """What the outbox relay did in the call ``entry``, beyond the worker's own answer."""
    said: list[str | Text] = []
    s = entry.settings
    outcome = entry.outcome
    # An idle call still runs the relay: a row left unmarked by its crash goes out again.
    resent = [st for st in entry.steps if st.name == "relay send"] if outcome == "idle" else []
    if resent:
        row = resent[-1].detail.get("row")
        said.append(
            Text("The relay ran after it and sent outbox row %(row)s again: the provider "
                 "dropped the repeat, so no second e-mail.", row=row)
            if all(st.detail.get("dropped") for st in resent)
            else Text("The relay ran after it and sent outbox row %(row)s again: a second "
                      "e-mail.", row=row)
        )  # fmt: skip
    if entry.relay_crashed:
        said.append(
            N_("The relay crashed after sending an outbox row, before marking it sent. Its "
               "next run sends the row again; the provider drops the repeat, since the relay "
               "passes the row id as a stable message id.")
            if s.get("provider_dedup")
            else N_("The relay crashed after sending an outbox row, before marking it sent. "
                    "Its next run sends the row again: a second e-mail, unless the provider "
                    "dedups on a stable message id.")
        )  # fmt: skip
    return said


def _processed(entry: WorkEntry) -> str | Text:
    s = entry.settings
    if (entry.receive_count or 0) > 1 and not s.get("dedup") and not entry.repeats:
        return Text(
            "Delivery %(n)s of %(id)s: the deliveries before it crashed before the side effect, "
            "so this one sent the first e-mail. With no dedup check, a redelivery after the "
            "e-mail would send another.",
            n=entry.receive_count, id=entry.message_id,
        )  # fmt: skip
    if (entry.receive_count or 0) > 1 and not s.get("dedup"):
        return Text(
            "Delivery %(n)s of %(id)s: with no dedup check, the worker did the job again and "
            "sent another e-mail. Every redelivery repeats the side effect.",
            n=entry.receive_count, id=entry.message_id,
        )  # fmt: skip
    if s.get("outbox"):
        return Text(
            "%(worker)s received %(id)s, wrote the e-mail to the outbox with the dedup record "
            "in one atomic step, and acked; the relay sent it.",
            worker=entry.worker, id=entry.message_id,
        )  # fmt: skip
    if s.get("delivery") == "at_most_once":
        return Text(
            "%(worker)s received %(id)s, already acked by the broker, and sent the e-mail.",
            worker=entry.worker, id=entry.message_id,
        )  # fmt: skip
    if not s.get("dedup"):
        return Text(
            "%(worker)s received %(id)s (receive %(n)s), sent the e-mail and acked, recording "
            "nothing (dedup is off): the message is done.",
            worker=entry.worker, id=entry.message_id, n=entry.receive_count,
        )  # fmt: skip
    return Text(
        "%(worker)s received %(id)s (receive %(n)s), sent the e-mail, recorded it and acked: "
        "the message is done.",
        worker=entry.worker, id=entry.message_id, n=entry.receive_count,
    )  # fmt: skip


def _crashed(entry: WorkEntry) -> str | Text:
    s, vt = entry.settings, entry.settings.get("visibility_timeout_s")
    if entry.error is not None:
        error = Text(entry.error) if entry.error == INVOICE_ID_ERROR else entry.error
        if (entry.receive_count or 0) >= (s.get("max_attempts") or 0):
            # Run L: "it comes back" beside a queue panel already showing it dead.
            return Text(
                "The handler failed on this job (%(error)s), receive %(n)s of %(max)s: its "
                "last. No ack: once the visibility timeout passes, the broker gives up on it "
                "and moves it to the dead-letter queue, where the next Work finds it.",
                error=error, n=entry.receive_count, max=s.get("max_attempts"),
            )  # fmt: skip
        return Text(
            "The handler failed on this job (%(error)s), receive %(n)s of %(max)s. No ack: "
            "it comes back after each visibility timeout until receive %(max)s, then goes to "
            "the dead-letter queue.",
            error=error, n=entry.receive_count, max=s.get("max_attempts"),
        )  # fmt: skip
    if s.get("delivery") == "at_most_once":
        return N_(
            "The worker crashed after the e-mail left. The broker had acked the message on "
            "receive, so no redelivery comes: this time nothing was lost."
        )  # fmt: skip
    if entry.crashed_at == "after_receive":
        return Text(
            "The worker crashed right after receiving, before doing anything. The message "
            "stays unacked; after the visibility timeout (%(vt)s s) it is delivered again.",
            vt=vt,
        )  # fmt: skip
    if entry.crashed_at == "after_effect" and not s.get("outbox"):
        return N_(
            "The worker crashed after sending the e-mail, before recording it. The redelivery "
            "will find no record and send it again, dedup or not: the consumer's crash window. "
            "The outbox closes it."
        )  # fmt: skip
    if entry.crashed_at == "after_effect" and s.get("dedup"):
        return N_(
            "The worker crashed after the one atomic step that wrote the outbox row and the "
            "dedup record together: the relay still sends the e-mail once, and the "
            "redelivery will find the key completed."
        )  # fmt: skip
    if s.get("dedup"):
        return N_(
            "The worker crashed after its dedup record, before the ack. The redelivery will "
            "find the key completed and skip it: dedup alone covers this crash."
        )  # fmt: skip
    return N_(
        "The worker crashed before the ack, after its side effect. Nothing records the job as "
        "done, so the redelivery will send a second e-mail."
    )  # fmt: skip
