"""Plot helpers (``ax=None``, they return the axes) and byte-stable saving of artifacts."""
