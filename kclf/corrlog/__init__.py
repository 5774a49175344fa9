"""The correlated logistic model for multilabel data: :class:`CorrLog`.

``corrlog.py`` holds the estimator; ``_solver.py`` its FISTA solver and CV paths,
``_penalty_search.py`` the CV choice of the penalties, ``_decoding.py`` the decisions,
``_f_measure.py`` the F1 decision, ``belief_propagation.py`` the inference on the label
graph.
"""

from .corrlog import BP_WARN_FRACTION, LABEL_CRITERIA, MAX_EXACT_LABELS, CorrLog

__all__ = ["BP_WARN_FRACTION", "LABEL_CRITERIA", "MAX_EXACT_LABELS", "CorrLog"]
