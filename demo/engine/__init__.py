"""The engine every lab shares: no web framework here."""
