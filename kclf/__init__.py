"""kclf: kernel probabilistic classifiers and the workflow that reproduces their papers."""

__version__ = "0.1.0"
