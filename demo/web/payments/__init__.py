"""The payment lab's web side: its JSON API (:mod:`.api`), its HTML fragments
(:mod:`.views`: the panels, the sequence diagram, a new order) and what they show: the
panels' context, the request timeline, the sequence diagram and the code view.
Its templates are in ``templates/payments/``."""
