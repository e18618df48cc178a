"""The queue lab's web side: ``/lab/<id>/queue/…``. ``api.py`` is its JSON API
(``/lab/<id>/queue/api/…``); ``views.py`` is the page and the HTML fragments its buttons
swap in (htmx), with ``panels.py``, ``code.py``, ``sequence.py`` and ``chart.py``."""
