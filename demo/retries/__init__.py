"""The retry lab: the client side of idempotency (issue 14).

Modules (no web framework; no import of another lab):

- :mod:`.policy`: :class:`~.policy.Policy` (``max_attempts``, ``strategy``, ``base_ms``,
  ``cap_ms``, ``retry_on``, ``respect_retry_after``, ``same_key``; ``Policy.parse`` → 422
  ``invalid-policy``), :data:`~.policy.STRATEGIES`, :func:`~.policy.backoff_ms` (the AWS
  blog's formulas, shared by the client and the storm).
- :mod:`.client`: **the lesson**, :func:`~.client.charge_with_retries` on tenacity, with
  the virtual clock's ``sleep``; :class:`~.client.Attempt`, :class:`~.client.Run`.
- :mod:`.transport`: :class:`~.transport.Transport` (one HTTP request → ``(status,
  headers, body)``), :class:`~.transport.NetworkError`.
- :mod:`.faults`: the fault plan (``parse_faults`` → 422 ``invalid-faults``) and
  :class:`~.faults.FaultLayer`, the transport in front of the payment lab.
- :mod:`.storm`: the simulator (``contention`` and ``outage``, a retry budget),
  :func:`~.storm.simulate`; :mod:`.storm_input`: the API's rules and answer
  (:func:`~.storm_input.storm_answer`, 422 ``invalid-storm``).
- :mod:`.steps`: the timeline's steps (``send``, ``answer``) and what each carries.
- :mod:`.scenarios`: ``retry-policy``, ``lost-response-retry``, ``retry-after``,
  ``jitter``, ``retry-budget`` (:data:`~.scenarios.SCENARIOS`, :class:`~.scenarios.Scenario`).
- :mod:`.lab`: :class:`~.lab.RetriesLab`, ``name = "retries"``:

  - ``run(request, transport=None) -> dict``: ``{"attempts": [...], "outcome",
    "charges", "order_id"}``;
  - ``storm(request) -> dict``: one result, or ``{"results": [...]}`` for ``"all"``;
  - ``set_policy(changes) -> Policy``;
  - ``apply_scenario(name, *, fixed=False)``, ``leave_scenario()``, ``reset()``,
    ``is_blank()``, ``state()``, ``expected()`` (the scenario's expected vs actual),
    ``runs()`` (the timeline's entries);
  - attributes ``policy``, ``faults``, ``storm_request``, ``scenario``, ``fixed``,
    ``last_run`` (``LastRun``), ``last_storm`` (the storm answer), ``timeline``.
"""
