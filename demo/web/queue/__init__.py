"""The queue lab's web side: ``/lab/<id>/queue/…``. ``api.py`` is its JSON API
(``/lab/<id>/queue/api/…``); the page and its panels live beside it."""
