"""Experiment trials: split, CV, fit, score, records (one module per experiment family)."""
