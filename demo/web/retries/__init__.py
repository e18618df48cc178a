"""The retry lab's web side: its JSON API (:mod:`.api`), and the transport that sends its
client's requests to the payment lab of the same workspace (:mod:`.transport`)."""
