"""The queue lab: at-least-once delivery, an idempotent consumer, and why "exactly-once"
is not a switch (issue 12). No web framework here.

Modules:

- ``worker.py``: **the lesson**, :func:`~.worker.consume`: receive → dedup check → side
  effect → record → ack, with a ``trace(step)`` at each step (``receive``, ``dedup
  check``, ``side effect``, ``record``, ``ack``); the code view shows this function.
- ``runner.py``: one work call around it (timeline entry, step mode, armed crashes, then
  the relay); ``outbox.py``: the relay (``relay send``, ``relay mark``).
- ``broker.py``: the :class:`~.broker.Broker` protocol (publish, receive with a visibility
  timeout on the lab clock, ack, redelivery with receive count + 1, dead-letter after
  ``max_attempts`` receives, listing); ``memory.py`` (default) and ``redis_streams.py``
  (Redis Streams with a consumer group).
- ``jobs.py`` (the job and its input rules), ``dedup.py`` (the dedup table and the outbox
  rows, one atomic step), ``mailbox.py`` (the e-mails: the side effect), ``settings.py``,
  ``simulator.py`` (delivery semantics), ``scenarios.py`` (the six scenarios as data),
  ``explain.py`` ("what just happened"), ``entries.py`` (timeline entries, step points),
  ``reading.py`` (``state()``), ``workers.py`` (the 1-3 workers), ``lab.py``.

:class:`~.lab.QueueLab` (``name = "queue"``), the public methods:

- ``enqueue(body) -> message_id`` (422 ``invalid-job``, 503 ``queue-full``),
  ``producer_retry() -> message_id`` (the last job again: two messages, one job id);
- ``work() -> WorkEntry`` (outcome ``processed`` | ``duplicate_skipped`` | ``crashed`` |
  ``lost`` | ``idle``; a crash is an outcome, never an exception), ``work_all()`` (every
  worker at once, on real threads), ``step(request_id, to_end=False)``,
  ``release_all()``, ``busy_workers()``;
- ``simulate(body) -> Simulation`` (422 ``invalid-simulation``);
- ``update_settings(changes) -> Settings`` (422 ``invalid-settings``); ``crash_at`` is one
  shot: it fires at the next work call that reaches its point, then reads ``"none"``;
- ``apply_scenario(name, fixed=False)``, ``play(name, fixed=False)`` (apply and run its
  clicks), ``leave_scenario()``, ``reset()``, ``is_blank()``, ``measure(what)``;
- ``state()`` (see :func:`~.reading.lab_state`), ``entries()``, and
  :func:`~.explain.explain` for one entry's "what just happened".
"""
