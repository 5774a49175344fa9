"""Dataset loaders and generators (one module per source)."""
