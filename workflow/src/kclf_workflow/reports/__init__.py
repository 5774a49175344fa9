"""Every table and figure, from records only (shared helpers in :mod:`.tables`)."""
