"""The operations lab: which operations survive a retry on their own (a SET, a full PUT,
a DELETE by id) and which need a dedup record (+=, an e-mail, an invoice number, a
transfer); a late duplicate that loses an update, and the conditional write that stops
it; and a tracking pixel, the GET that counts twice. No web framework here."""
