"""The payment lab: idempotency keys on an HTTP charge endpoint."""
