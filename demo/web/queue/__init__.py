"""The queue lab's web side: the page and the HTML fragments htmx swaps (:mod:`.views`);
the JSON API is :mod:`.api`."""
