"""Per-experiment report builders: tables and figures from records (see kclf.reporting)."""
