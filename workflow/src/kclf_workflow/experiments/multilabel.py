"""Multilabel experiments of the CorrLog paper: the toy example (Sec. V) and real data.

A data set is one ``.npz`` with ``X_<t>, Y_<t>, Xt_<t>, Yt_<t>`` per trial ``t`` (training
and test parts) and optionally ``label_names``. Every method picks its hyper-parameters by
CV on the training part only.

Besides the label-set measures of the paper, every method's per-label probabilities
``P(y_j = 1 | x)`` on the test part are scored (log loss, Brier, ECE, reliability bins:
:func:`kclf_workflow.records.calibration_records`, one task per label). Where they come from
(:data:`MARGINALS`, stored as ``marginals`` in the records' params):

* CorrLog: the marginals of the fitted joint model, Eq. (4), by exact enumeration of the
  ``2^m`` label vectors when ``m <= kclf.corrlog.MAX_EXACT_LABELS`` (the toy example, scene),
  else the beliefs of loopy sum-product belief propagation;
* ILR: the per-label sigmoids (exact: without couplings the model factorises);
* ClassifierChain: scikit-learn's ``predict_proba``, each label's logistic probability given
  the *predicted* earlier labels of the chain (not a marginal over them);
* MultiOutput (SVC): Platt scaling of the SVCs with the C the CV chose: a sigmoid on
  out-of-fold decision values of seeded stratified folds, over an SVC refitted on the whole
  training part (:func:`probability_model`); the label predictions stay the plain SVCs'.

CorrLog's (and ILR's) label-set measures are scored with the decoder of :data:`DECODERS`:
the joint MAP label vector for subset accuracy (its Bayes decision), each label's marginal
thresholded at 1/2 for Hamming loss (its Bayes decision), the label vector of largest
expected example-based F1 under the fitted joint (GFM, ``decode="f1"``, its Bayes
decision) for the example-based F1 and its precision and recall, and the thresholded
marginals for the example accuracy (Jaccard) and the micro / macro F-measures, whose Bayes
decisions neither decoder is. The F-type measures are also scored on the joint MAP, as
metrics ``<measure>_map`` (:data:`ALSO_MAP`, rows "<name> (MAP)" of the table), and the
example F1, precision and recall on the thresholded marginals, as ``<measure>_marginal``
(:data:`ALSO_MARGINAL`, rows "<name> (marginals)"). The other methods have one
prediction, scored once. The records' params name the decoder; CorrLog's
belief-propagation rows that did not converge are counted in ``bp_nonconverged`` records
(CorrLog warns above :data:`kclf.corrlog.BP_WARN_FRACTION`).
"""

from __future__ import annotations

import copy
import logging
import time

import numpy as np
from sklearn.base import clone
from sklearn.multioutput import ClassifierChain, MultiOutputClassifier

from kclf import CorrLog, PlattScaled
from kclf.corrlog import MAX_EXACT_LABELS
from kclf.metrics import multilabel_scores

from ..datasets import user_data
from ..datasets.corrlog_toy import make_corrlog_toy
from ..methods import family_methods, spec
from ..progress import Progress
from ..records import calibration_records, record
from ..seeding import rng_for, seed_for

logger = logging.getLogger(__name__)

#: method key -> display name (the registry's "multilabel" family)
METHODS = family_methods("multilabel")
#: source of the per-label probabilities -> description (captions, records' params)
MARGINALS = {
    "exact": "exact marginals of the joint model (enumeration of the 2^m label vectors)",
    "bp": "beliefs of loopy sum-product belief propagation",
    "chain": "chain probabilities given the predicted earlier labels",
    "platt": "Platt scaling of the SVC decision values (sigmoid on out-of-fold decisions)",
}


#: label-set measure -> CorrLog's (and ILR's) decoder for the table's row of that measure.
#: Thresholding each label's marginal at 1/2 is the Bayes decision for Hamming loss, the
#: joint MAP for subset (0/1) loss and GFM's ``decode="f1"`` for the example-based F1
#: (Dembczynski et al., NIPS 2011); its precision and recall rows score the same decision.
#: None of them is the Bayes decision for the example accuracy (Jaccard) or the micro /
#: macro F-measures, which depend on the joint distribution of the labels beyond the
#: marginals and the mode (Dembczynski et al., Machine Learning 88, 2012): their rows score
#: the thresholded marginals and :data:`ALSO_MAP` adds their MAP scores.
DECODERS = {
    "hamming_loss": "marginal",
    "subset_accuracy": "map",
    "example_accuracy": "marginal",
    "example_precision": "f1",
    "example_recall": "f1",
    "example_f1": "f1",
    "micro_f1": "marginal",
    "macro_f1": "marginal",
}
#: measures whose joint-MAP scores are recorded too, as metric ``<measure>`` + MAP_SUFFIX
#: (on scene the two decoders differ by several points in these measures, in both
#: directions: the thresholded marginals predict no label for more of the photos)
ALSO_MAP = (
    "example_accuracy",
    "example_precision",
    "example_recall",
    "example_f1",
    "micro_f1",
    "macro_f1",
)
MAP_SUFFIX = "_map"
#: measures scored on the F1 decision whose thresholded-marginal scores are recorded too,
#: as metric ``<measure>`` + MARGINAL_SUFFIX
ALSO_MARGINAL = ("example_precision", "example_recall", "example_f1")
MARGINAL_SUFFIX = "_marginal"


def make_toy(seed, trials, n_train, n_test, shift=0.5):
    """The toy data of every trial (a count or a list of trial indices), each trial from
    its own seed stream."""
    out = {}
    for t in range(trials) if isinstance(trials, int) else trials:
        rng = rng_for(seed, "multilabel", "toy", "trial", t)
        out[f"X_{t}"], out[f"Y_{t}"] = make_corrlog_toy(n_train, rng, shift)
        out[f"Xt_{t}"], out[f"Yt_{t}"] = make_corrlog_toy(n_test, rng, shift)
    return out


def user_trials(dataset, seed, trials, test_size):
    """The data of trials ``trials`` of the user's multi-label set (a
    :class:`kclf_workflow.datasets.user_data.UserDataset`): its train/test split (trial 0),
    or seeded realisations stratified by label set (``test_size``).  The features are
    z-scored on each training part only when the entry says ``standardize: true``; the
    estimators scale by ``multilabel.scaling`` in any case, as for the paper's data."""
    d = user_data.require_task(dataset, ("multilabel",), "multilabel.datasets")
    out = {"label_names": np.asarray(d.classes)}
    for t in trials:
        X, Y, Xt, Yt = user_data.trial_parts(d, seed, t, test_size)
        out[f"X_{t}"], out[f"Y_{t}"], out[f"Xt_{t}"], out[f"Yt_{t}"] = X, Y, Xt, Yt
    return out


def n_trials(data):
    return len(trial_indices(data))


def trial_indices(data):
    """The trials ``t`` of a data set (its ``X_<t>`` keys), in order."""
    return sorted(int(k[2:]) for k in data if k.startswith("X_"))


def make_estimator(method, cfg, seed):
    """The estimator of ``method`` with its CV over the training part built in."""
    return spec("multilabel", method).build(cfg, seed)


def probability_model(method, est, X, Y, seed=0):
    """The fitted model whose per-label probabilities are scored: ``est`` itself, except
    for a method whose spec says ``probability="platt"`` (``mo_svc``), whose best pipeline
    (the C the CV chose) gets Platt scaling per label:
    ``CalibratedClassifierCV(ensemble=False)``, a sigmoid fitted on out-of-fold decision
    values of seeded stratified folds, over an SVC refitted on all of ``X``."""
    if spec("multilabel", method).probability != "platt":
        return est
    pipe = clone(est.best_estimator_.estimator)
    platt = PlattScaled(pipe, cv=est.cv.get_n_splits(), random_state=seed)
    return MultiOutputClassifier(platt).fit(X, np.asarray(Y).astype(int))


def predict_marginals(model, X):
    """Per-label probabilities ``P(y_j = 1 | x)`` of shape (n, L) and their source, a key
    of :data:`MARGINALS` (module docstring)."""
    if isinstance(model, CorrLog):
        if not model.couplings or model.n_labels_ <= MAX_EXACT_LABELS:
            exact = copy.copy(model)  # shallow: same fitted arrays, other inference
            exact.inference = "exact"
            return exact.predict_proba(X), "exact"
        return model.predict_proba(X), model.inference
    inner = getattr(model, "best_estimator_", model)
    if isinstance(inner, ClassifierChain):
        return np.asarray(model.predict_proba(X), dtype=float), "chain"
    if isinstance(inner, MultiOutputClassifier):
        probas = model.predict_proba(X)
        cols = [p[:, list(c).index(1)] for p, c in zip(probas, inner.classes_)]
        return np.column_stack(cols), "platt"
    raise TypeError(f"no per-label probabilities for {type(inner).__name__}")


def label_names(data, n_labels):
    """``data["label_names"]`` when present, else ``y1 .. ym`` (the paper's toy names)."""
    if "label_names" in data:
        names = [str(v) for v in np.asarray(data["label_names"]).tolist()]
        if len(names) == n_labels:
            return names
    return [f"y{j + 1}" for j in range(n_labels)]


def decoded_scores(est, Xt, Yt):
    """The label-set measures of the fitted ``est`` on the test part ``(Xt, Yt)``.

    Returns ``scores`` ``{metric: (value, decoder)}``, the decoded label matrices
    ``{decoder: Y}`` and ``{decoder: info}`` of :meth:`kclf.corrlog.CorrLog.decode_labels`
    (the rows decoded by belief propagation and how many of them did not converge). For
    CorrLog (and ILR) each measure of :data:`DECODERS` is scored with its decoder, the
    measures of :data:`ALSO_MAP` also with the joint MAP (metric ``<measure>_map``) and
    those of :data:`ALSO_MARGINAL` with the thresholded marginals (``<measure>_marginal``);
    any other estimator's ``predict`` is scored once (decoder ``"predict"``, no info).
    """
    if not isinstance(est, CorrLog):
        Y = np.asarray(est.predict(Xt)).astype(int)
        scores = {k: (v, "predict") for k, v in multilabel_scores(Yt, Y).items()}
        return scores, {"predict": Y}, {}
    decoded, infos = {}, {}
    for decoder in ("map", "marginal", "f1"):
        decoded[decoder], infos[decoder] = est.decode_labels(Xt, decoder, return_info=True)
    by_decoder = {dec: multilabel_scores(Yt, Y) for dec, Y in decoded.items()}
    scores = {metric: (by_decoder[dec][metric], dec) for metric, dec in DECODERS.items()}
    for metric in ALSO_MAP:
        scores[metric + MAP_SUFFIX] = (by_decoder["map"][metric], "map")
    for metric in ALSO_MARGINAL:
        scores[metric + MARGINAL_SUFFIX] = (by_decoder["marginal"][metric], "marginal")
    return scores, decoded, infos


def fit_method(data, dataset, method, cfg, seed, n_bins=10):
    """Fit ``method`` on every trial; return (records, predictions of every trial).

    Records: the label-set measures (task ``"all"``) and the calibration records of the
    per-label probabilities (one task per label); ``fit_seconds`` is the wall-clock time of
    the fit with its CV (and, for ``mo_svc``, the Platt refit).
    """
    rows, preds = [], {}
    trials = trial_indices(data)
    progress = Progress(logger, f"{method} trials", len(trials), every=0.0)
    for t in trials:
        X, Y, Xt, Yt = (data[f"{k}_{t}"] for k in ("X", "Y", "Xt", "Yt"))
        est = make_estimator(method, cfg, seed_for(seed, "multilabel", dataset, "cv", t))
        start = time.perf_counter()
        est.fit(X, Y)
        prob_model = probability_model(
            method, est, X, Y, seed_for(seed, "multilabel", dataset, "platt", t)
        )
        seconds = time.perf_counter() - start
        params = spec("multilabel", method).chosen(est)
        scores, decoded, infos = decoded_scores(est, Xt, Yt)
        preds[f"Yp_{t}"] = decoded["map" if "map" in decoded else "predict"]
        if "marginal" in decoded:
            preds[f"Ypm_{t}"] = decoded["marginal"]
            preds[f"Ypf_{t}"] = decoded["f1"]
        for decoder, info in infos.items():
            if decoder == "f1":
                continue  # enumeration or Gibbs sampling: no belief propagation
            extra = {**params, "decoder": decoder, "bp_rows": info["bp_rows"]}
            n_bad = info["bp_nonconverged"]
            rows.append(record(dataset, "all", method, t, "bp_nonconverged", n_bad, seconds, extra))
        for metric, (value, decoder) in scores.items():
            extra = {**params, "decoder": decoder}
            rows.append(record(dataset, "all", method, t, metric, value, seconds, extra))
        P, source = predict_marginals(prob_model, Xt)
        rows += calibration_records(
            np.asarray(Yt).astype(int),
            np.clip(P, 0.0, 1.0),
            dataset=dataset,
            task=label_names(data, Yt.shape[1]),
            method=method,
            trial=t,
            n_bins=n_bins,
            fit_seconds=seconds,
            params={**params, "marginals": source},
        )
        progress.step(f"trial {t}: {X.shape[0]} train, {Xt.shape[0]} test, fit {seconds:.1f} s")
    return rows, preds
