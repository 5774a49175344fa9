"""Invariants every public estimator keeps, property-based (hypothesis).

Each test draws small data sets (rows, features, class balance, separation, and extreme
but valid forms: a constant feature, duplicated rows, features scaled by 1e6 or 1e-6, a
class of two rows) and checks one invariant on every estimator of :data:`CASES`, the
public estimators at representative parameter settings:

* probabilities are finite, in [0, 1], rows summing to one (multilabel: marginals in
  [0, 1]);
* ``decision_function`` is finite (scikit-learn's scorers, e.g. ``roc_auc``, call it
  before ``predict_proba`` and refuse infinity);
* a fit on the rows permuted predicts what the fit on the rows in order does, up to a
  tolerance from the solver (:func:`permutation_atol`);
* a DataFrame with its columns permuted is refused;
* ``clone`` and refit with the same ``random_state`` is bit-identical;
* the CV searches with ``random_state=None`` (unshuffled folds) repeat bit for bit;
* extreme inputs give finite outputs or one clear error;
* features scaled by ``c`` from 1e-300 to 1e300 give the probabilities of the unscaled
  features to round-off (every model whose default width is a multiple of the median
  distance, or whose features are standardised, is the same model at any scale in exact
  arithmetic), or one clear error; never NaN.

The examples are derandomized (the "kclf" profile of tests/conftest.py) and bounded
(:data:`EXAMPLES` per estimator and invariant).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import StratifiedKFold

import kclf

EXAMPLES = 12  # per estimator, for the probabilities and the row permutation
FEW = 3  # per estimator (and extreme form), for the costlier or all-or-nothing checks
U = np.finfo(float).eps


@dataclass
class Case:
    """An estimator at one setting and what its outputs promise."""

    estimator: object
    kind: str = "binary"  # "binary", "multiclass" or "multilabel"
    #: whether predict_proba stays in [0, 1] (LSPC' of Eq. (5) does not, by design)
    proba_in_unit: bool = True
    #: folds given as index arrays (a search: the permuted fit gets the same folds)
    folds: bool = False
    #: False where the fit depends on the row order by design (seeded random folds or
    #: centres drawn by position): no permutation check
    permutation: bool = True
    #: the solver's stopping tolerance on the outputs compared (0: a direct solve)
    solver_tol: float = 0.0
    #: whether the model is the same for X and c X in exact arithmetic (a default width
    #: relative to the median distance, or standardised features); False for a fixed
    #: width or a penalty on the raw coefficients (the scale check then asks only for
    #: finite outputs or one clear error)
    scale_invariant: bool = True
    extra: dict = field(default_factory=dict)


GRID = dict(sigmas=None, lams=[0.01, 0.1, 1.0])
CASES = {
    "LSPC": Case(kclf.LSPC()),
    "LSPC-parameters": Case(kclf.LSPC(rounding="parameters")),
    "LSPC-none": Case(kclf.LSPC(rounding="none"), proba_in_unit=False),
    "LSPC-classwise-balanced": Case(kclf.LSPC(basis="classwise", class_weight="balanced")),
    "LSPC-lowrank": Case(kclf.LSPC(n_basis=6, random_state=0), permutation=False),
    "LSPC-3": Case(kclf.LSPC(), kind="multiclass"),
    "LSPCCV": Case(kclf.LSPCCV(**GRID, random_state=0), folds=True),
    "LSPCCV-logloss-3": Case(
        kclf.LSPCCV(**GRID, scoring="log_loss", random_state=0), kind="multiclass", folds=True
    ),
    "LSPCCV-tasks": Case(kclf.LSPCCV(**GRID, random_state=0), kind="multilabel", folds=True),
    "KLR": Case(kclf.KernelLogisticRegression(tol=1e-10), solver_tol=1e-10),
    "KLR-nystroem": Case(
        kclf.KernelLogisticRegression(n_components=6, random_state=0), permutation=False
    ),
    "KLR-ovr-3": Case(
        kclf.KernelLogisticRegression(multi_class="ovr", tol=1e-10),
        kind="multiclass",
        solver_tol=1e-10,
    ),
    "KLRCV": Case(
        kclf.KernelLogisticRegressionCV(**GRID, tol=1e-10, random_state=0),
        folds=True,
        solver_tol=1e-10,
    ),
    "KLRCV-3": Case(
        kclf.KernelLogisticRegressionCV(**GRID, tol=1e-10, random_state=0),
        kind="multiclass",
        folds=True,
        solver_tol=1e-10,
    ),
    "MAPLP": Case(kclf.MAPLP(), solver_tol=1e-7),
    "MAPLP-3": Case(kclf.MAPLP(), kind="multiclass", solver_tol=1e-7),
    "ManifoldGPC": Case(
        kclf.ManifoldGPC(n_centers=4, length_scale=1.0, amplitude=[1.0, 4.0], random_state=0),
        permutation=False,
        scale_invariant=False,
    ),
    "ManifoldGPC-ep-identity": Case(
        kclf.ManifoldGPC(n_centers=None, inference="ep", length_scale=[0.5, 2.0], amplitude=4.0),
        solver_tol=1e-8,
        scale_invariant=False,
    ),
    "WeightedRidgeLogistic": Case(
        kclf.WeightedRidgeLogistic(tol=1e-12), solver_tol=1e-12, scale_invariant=False
    ),
    "PairwiseCoupling-3": Case(
        kclf.PairwiseCoupling(kclf.KernelLogisticRegression(tol=1e-10)),
        kind="multiclass",
        solver_tol=1e-10,
    ),
    "CorrLog": Case(
        kclf.CorrLog(rho1=1e-3, rho2=1e-2, tol=1e-10), kind="multilabel", solver_tol=1e-10
    ),
    "PlattScaled-LSPC": Case(
        kclf.PlattScaled(kclf.LSPC(), cv=3, random_state=0), permutation=False
    ),
    # the defaults, seeded (their folds and k-means starts are drawn by row position)
    "LSPCCV-defaults": Case(kclf.LSPCCV(random_state=0), permutation=False),
    "KLRCV-defaults": Case(kclf.KernelLogisticRegressionCV(random_state=0), permutation=False),
    "ManifoldGPC-defaults": Case(kclf.ManifoldGPC(random_state=0), permutation=False),
    "ManifoldGPC-ep-defaults": Case(
        kclf.ManifoldGPC(inference="ep", random_state=0), permutation=False
    ),
    "CorrLog-defaults": Case(kclf.CorrLog(random_state=0), kind="multilabel", permutation=False),
}
KINDS = {"binary": 2, "multiclass": 3, "multilabel": 0}
EXTREMES = (
    "constant feature",
    "duplicated rows",
    "scaled 1e6",
    "scaled 1e-6",
    "class of 2",  # of the classes; for multilabel data, a label of one value:
    "constant label",
)


@st.composite
def datasets(draw, kind="binary", extreme=None):
    """``(X, y)``: 12-24 rows of 1-3 features, classes in turn (every class present),
    class means apart by a drawn separation; ``extreme``: one of :data:`EXTREMES` ("class
    of 2" for classes, "constant label" for labels; the other kind's data as drawn)."""
    n = draw(st.integers(12, 24))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**16 - 1))
    separation = draw(st.floats(0.0, 3.0))
    rng = np.random.default_rng(seed)
    c = KINDS[kind]
    if c:
        y = np.arange(n) % c
        rng.shuffle(y)
        X = rng.normal(size=(n, d)) + separation * y[:, None]
    else:  # two labels: the signs of two noisy directions, both values present in each
        X = rng.normal(size=(n, d))
        y = np.c_[X[:, 0] > 0, X.sum(axis=1) + 0.5 * rng.normal(size=n) > 0].astype(int)
        y[:2] = [[0, 1], [1, 0]]
        X += separation * y[:, :1]
    if extreme == "constant feature":
        X = np.c_[X, np.full(n, 3.0)]
    elif extreme == "duplicated rows":
        k = draw(st.integers(1, n))
        X, y = np.r_[X, X[:k]], np.r_[y, y[:k]]
    elif extreme == "scaled 1e6":
        X = X * 1e6
    elif extreme == "scaled 1e-6":
        X = X * 1e-6
    elif extreme == "class of 2" and c:
        keep = np.flatnonzero(y != 1)
        X, y = np.r_[X[keep], X[y == 1][:2]], np.r_[y[keep], y[y == 1][:2]]
    elif extreme == "constant label" and not c:
        y[:, 1] = 0
    return X, y


def folds_of(y):
    """Two folds as index arrays: seeded, stratified by the (first) label."""
    labels = y if y.ndim == 1 else y[:, 0]
    return list(StratifiedKFold(2, shuffle=True, random_state=0).split(labels, labels))


def estimator(case, y, perm=None):
    """A fresh copy of the case's estimator; a search gets :func:`folds_of` ``y`` (mapped
    through ``perm``, the new position of every row, when given)."""
    est = clone(case.estimator)
    if case.folds:
        folds = folds_of(y)
        if perm is not None:
            folds = [(np.sort(perm[tr]), np.sort(perm[va])) for tr, va in folds]
        est.set_params(cv=folds)
    return est


def fitted(est, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)  # one-class task, few rows per fold
        return est.fit(X, y)


def check_outputs(case, est, X):
    """Probabilities that are distributions (marginals in [0, 1] for labels; LSPC'
    outside [0, 1] by design) and a finite ``decision_function``."""
    P = est.predict_proba(X)
    assert P.shape[0] == len(X)
    assert np.isfinite(P).all()
    if case.proba_in_unit:
        assert (P >= 0).all() and (P <= 1).all()
    if case.kind != "multilabel":
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=16 * U * P.shape[1])
    if hasattr(est, "decision_function"):
        assert np.isfinite(est.decision_function(X)).all()


def permutation_atol(case, P):
    """How far the permuted fit's probabilities may be from the fit's.

    The permuted fit runs the same arithmetic on the rows in another order (every
    estimator here starts from the same point and is equivariant to the row order), so
    the two differ by the round-off of sums taken in another order -- a few ulps per
    operation, amplified by the condition of the system solved, at most ``n / lam`` for a
    kernel matrix of entries in [0, 1] and a ridge ``lam >= 0.01`` of the settings here --
    unless that round-off moves a stopping test by one step.  The solvers stop within
    ``solver_tol`` (relative) of their objective's optimum or on a step of that size;
    strong convexity turns an objective gap ``delta`` into an iterate gap of order
    ``sqrt(delta)``, and a probability moves by at most a quarter of its log-odds (the
    logistic's slope): ``10 sqrt(solver_tol)`` leaves a factor of room on both counts."""
    n = P.shape[0]
    return n * (n / 0.01) * U + 10 * case.solver_tol**0.5


def frame_of(X):
    return pd.DataFrame(X, columns=[f"f{j}" for j in range(X.shape[1])])


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_probabilities_are_distributions(name, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    check_outputs(case, fitted(estimator(case, y), X, y), X)


@pytest.mark.parametrize("name", [n for n, c in CASES.items() if c.permutation])
@settings(max_examples=EXAMPLES)
@given(data=st.data())
def test_a_row_permutation_changes_nothing(name, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    order = data.draw(st.permutations(range(len(X))))
    order = np.asarray(order)
    perm = np.empty_like(order)
    perm[order] = np.arange(order.size)  # perm[i]: the new row of row i
    P = fitted(estimator(case, y), X, y).predict_proba(X)
    Q = fitted(estimator(case, y, perm), X[order], y[order]).predict_proba(X)
    np.testing.assert_allclose(Q, P, rtol=0, atol=permutation_atol(case, P))


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=FEW)
@given(data=st.data())
def test_a_frame_with_permuted_columns_is_refused(name, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    X = np.c_[X, X[:, :1] ** 2]  # two columns at least
    frame = frame_of(X)
    est = fitted(estimator(case, y), frame, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the same frame: no warning
        est.predict_proba(frame)
    with pytest.raises(ValueError, match="feature names should match"):
        est.predict_proba(frame[frame.columns[::-1]])


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=FEW)
@given(data=st.data())
def test_clone_and_refit_is_bit_identical(name, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    first = fitted(estimator(case, y), X, y)
    again = fitted(clone(first), X, y)
    np.testing.assert_array_equal(again.predict_proba(X), first.predict_proba(X))


@pytest.mark.parametrize("extreme", EXTREMES)
@pytest.mark.parametrize("name", CASES)
@settings(max_examples=FEW)
@given(data=st.data())
def test_extreme_inputs_give_finite_outputs_or_one_clear_error(name, extreme, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind, extreme))
    est = estimator(case, y)
    try:
        fitted(est, X, y)
    except ValueError as err:
        message = str(err)
        assert message and "\n" not in message.strip(), message
        return
    check_outputs(case, est, X)


#: the searches and the calibration whose only randomness is the folds (and the defaults'
#: k-means-free paths)
SEARCHES = [n for n, c in CASES.items() if n.startswith(("LSPCCV", "KLRCV", "PlattScaled"))]


@pytest.mark.parametrize("name", SEARCHES)
@settings(max_examples=FEW)
@given(data=st.data())
def test_a_search_with_random_state_none_repeats_bit_for_bit(name, data):
    """``random_state=None`` leaves an integer ``cv``'s folds unshuffled (as
    scikit-learn's searches): two fits of the same data agree bit for bit."""
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    est = clone(case.estimator).set_params(random_state=None, cv=2)
    first = fitted(est, X, y).predict_proba(X)
    again = fitted(clone(est), X, y).predict_proba(X)
    np.testing.assert_array_equal(again, first)


#: 1e-300 and 1e300 and two factors between; c X rounds each feature by eps / 2
SCALES = (1e-300, 1e-150, 1e150, 1e300)


def scale_atol(case, P):
    """How far the fit on ``c X`` may be from the fit on ``X``: the scaling rounds every
    feature by ``eps / 2``, so every squared distance relative to the width by a few
    eps (a kernel value by about ``eps d^2 / sigma^2 < 100 eps`` on these data), which
    the solve amplifies as a reordered sum's round-off (:func:`permutation_atol`), times
    100 for the kernel's own change."""
    return 100 * permutation_atol(case, P)


@pytest.mark.parametrize("name", CASES)
@settings(max_examples=FEW)
@given(data=st.data())
def test_scaled_features_give_the_same_probabilities_or_one_clear_error(name, data):
    case = CASES[name]
    X, y = data.draw(datasets(case.kind))
    c = data.draw(st.sampled_from(SCALES))
    est = estimator(case, y)
    P = fitted(est, X, y).predict_proba(X)
    scaled = estimator(case, y)
    try:
        with np.errstate(all="ignore"):  # a refusal may come from numpy's overflow
            fitted(scaled, X * c, y)
            Q = scaled.predict_proba(X * c)
    except ValueError as err:
        message = str(err)
        assert message and "\n" not in message.strip(), message
        return
    assert not np.isnan(Q).any(), f"NaN probabilities at scale {c:g}"
    check_outputs(case, scaled, X * c)
    if case.scale_invariant:
        np.testing.assert_allclose(Q, P, rtol=0, atol=scale_atol(case, P))
