"""The estimators on scikit-learn's array API (issue "On the hardware users have").

Under ``sklearn.config_context(array_api_dispatch=True)`` an estimator that declares
``array_api_support`` computes in its inputs' namespace: fitted on ``array-api-strict``
arrays (the standard's reference namespace, which refuses anything outside the standard)
or PyTorch CPU tensors, it keeps its fitted arrays there and returns its probabilities and
scores there, equal to the NumPy path's within the solver's round-off.  PyTorch's tests
skip, saying so, where it is not installed (CI does not install its wheels).

Tolerances: float64 computes the same formulas in another order, so the probabilities
agree to a few thousand ulps of the conditioning of Eq. (3)'s system; float32 to its
machine epsilon times that conditioning, ``1 + ||H|| / lambda`` with ``||H|| <= b`` (the
kernel's entries are at most 1).
"""

import warnings

import numpy as np
import pytest
import sklearn
from sklearn.datasets import make_classification, make_multilabel_classification

from kclf import (
    LSPC,
    LSPCCV,
    MAPLP,
    KernelLogisticRegression,
    KernelLogisticRegressionCV,
    ManifoldGPC,
    PairwiseCoupling,
    PlattScaled,
    WeightedRidgeLogistic,
)
from kclf._array_api import to_numpy

array_api_strict = pytest.importorskip("array_api_strict")
array_api_compat = pytest.importorskip("array_api_compat")

NAMESPACES = [
    ("array_api_strict", "float64"),
    ("array_api_strict", "float32"),
    ("torch", "float64"),
    ("torch", "float32"),
]


def namespace(name):
    """``(xp, to)``: the namespace and a converter from NumPy."""
    if name == "torch":
        torch = pytest.importorskip(
            "torch", reason="PyTorch is not installed here: its CPU tensors are not tested"
        )
        return array_api_compat.array_namespace(torch.zeros(1)), torch.asarray
    return array_api_strict, array_api_strict.asarray


def data(kind, n=160):
    if kind == "multi-task":
        X, Y = make_multilabel_classification(n, 6, n_classes=3, random_state=0)
        return X, Y
    classes = {"multi-class": 3, "four-class": 4}.get(kind, 2)
    return make_classification(n, 6, n_informative=4, n_classes=classes, random_state=0)


def tolerance(dtype, est, n):
    """The agreement of the namespace's probabilities with NumPy's (module docstring)."""
    lam = getattr(est, "lam", None) or min(est.lams or [1e-3])
    b = getattr(est, "n_basis", None) or n
    if dtype == "float64":
        return 1e-9
    return float(np.finfo(np.float32).eps) * (1.0 + b / lam)


CASES = [
    ("binary", LSPC()),
    ("multi-class", LSPC()),
    ("multi-class", LSPC(n_basis=40, random_state=0)),
    ("binary", LSPC(rounding="parameters", lam=0.01)),
    ("binary", LSPC(rounding="none")),
    ("multi-class", LSPC(kernel="linear")),
    ("binary", LSPC(class_weight="balanced")),
    ("binary", LSPCCV(lams=[1e-2, 1.0], sigma_factors=[0.5, 1.0])),
    ("multi-class", LSPCCV(lams=[1e-2, 1.0], sigma_factors=[0.5, 1.0], scoring="log_loss")),
    ("multi-class", LSPCCV(lams=[1e-2, 1.0], sigma_factors=[0.5, 1.0], n_basis=50, random_state=0)),
    (
        "binary",
        LSPCCV(
            lams=[1e-2, 1.0], sigma_factors=[0.5, 1.0], scoring="auc", n_basis=50, random_state=0
        ),
    ),
    ("multi-task", LSPCCV(lams=[1e-2, 1.0], sigma_factors=[0.5, 1.0])),
    (
        "multi-task",
        LSPCCV(
            lams=[1e-2, 1.0],
            sigma_factors=[0.5, 1.0],
            n_basis=50,
            random_state=0,
            rounding="parameters",
        ),
    ),
]


def ids(case):
    kind, est = case
    return f"{kind}-{est!r}".replace(" ", "")


def over_namespaces(cases):
    """A test run for every ``(kind, est)`` of ``cases``, namespace and dtype, with and
    without sample weights."""

    def parametrize(test):
        test = pytest.mark.parametrize("kind,est", cases, ids=[ids(c) for c in cases])(test)
        test = pytest.mark.parametrize("name,dtype", NAMESPACES, ids=lambda v: str(v))(test)
        return pytest.mark.parametrize("weighted", [False, True], ids=["unweighted", "weighted"])(
            test
        )

    return parametrize


@over_namespaces(CASES)
def test_namespace_fit_equals_numpy(kind, est, name, dtype, weighted):
    xp, to = namespace(name)
    X, y = data(kind)
    w = np.random.default_rng(1).integers(0, 3, X.shape[0]).astype(float) if weighted else None
    ref = sklearn.clone(est).fit(X, y, sample_weight=w)
    Xa = to(X.astype(dtype))
    with sklearn.config_context(array_api_dispatch=True):
        fitted = sklearn.clone(est).fit(Xa, to(y), sample_weight=None if w is None else to(w))
        P = fitted.predict_proba(Xa)
        scores = fitted.decision_function(Xa)
        labels = fitted.predict(Xa)
    for out in (P, scores, labels):
        assert array_api_compat.array_namespace(out).__name__ == xp.__name__
    assert str(P.dtype).endswith(dtype)
    inner = getattr(fitted, "best_estimator_", fitted)
    for attr in ("alpha_", "X_fit_", "classes_"):
        value = getattr(inner, attr)
        assert array_api_compat.array_namespace(value).__name__ == xp.__name__, attr
    tol = tolerance(dtype, est, X.shape[0])
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=tol)
    if dtype == "float64":
        np.testing.assert_array_equal(to_numpy(labels), ref.predict(X))
        np.testing.assert_allclose(to_numpy(scores), ref.decision_function(X), rtol=0, atol=1e-8)
    if hasattr(ref, "cv_results_"):
        np.testing.assert_allclose(
            np.asarray(fitted.cv_results_["mean_test_score"]),
            ref.cv_results_["mean_test_score"],
            rtol=1e-5 if dtype == "float64" else 0.05,
        )


@pytest.mark.parametrize(
    "est,what",
    [
        (LSPC(basis="classwise"), "basis='classwise'"),
        (LSPC(n_basis=10, centers="kmeans"), "centers='kmeans'"),
        (LSPCCV(class_weight="balanced", lams=[1.0]), "class_weight"),
    ],
)
def test_unsupported_parameter_says_so_in_one_line(est, what):
    X, y = data("binary", 60)
    Y = np.c_[y, np.roll(y, 1)] if isinstance(est, LSPCCV) else y
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="array API") as info:
            est.fit(array_api_strict.asarray(X), array_api_strict.asarray(Y))
    message = str(info.value)
    assert what in message and "\n" not in message


def test_predicting_in_another_namespace_is_refused():
    X, y = data("binary", 60)
    est = LSPC().fit(X, y)
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match=r"LSPC.predict_proba\(\) must use the same namespace"):
            est.predict_proba(array_api_strict.asarray(X))
        fitted = LSPC().fit(array_api_strict.asarray(X), array_api_strict.asarray(y))
    with pytest.raises(ValueError, match="fitted on array_api_strict arrays"):
        fitted.predict_proba(X)


@pytest.mark.parametrize("est", [LSPC(), LSPCCV(), LSPC(n_basis=5), LSPCCV(n_basis=5)])
def test_tags_declare_array_api_support(est):
    assert est.__sklearn_tags__().array_api_support


@pytest.mark.parametrize(
    "est", [LSPC(basis="classwise"), LSPC(n_basis=5, centers="kmeans"), LSPCCV(basis="classwise")]
)
def test_tags_deny_array_api_support_where_a_parameter_is_not_implemented(est):
    assert not est.__sklearn_tags__().array_api_support


NUMPY_ONLY = [
    PairwiseCoupling(KernelLogisticRegression(kernel=lambda A, B: A @ B.T)),
    KernelLogisticRegression(kernel=lambda A, B: A @ B.T),
    MAPLP(),
    ManifoldGPC(),
    WeightedRidgeLogistic(),
    PlattScaled(LSPC()),
]


@pytest.mark.parametrize("est", NUMPY_ONLY, ids=lambda e: type(e).__name__)
def test_a_numpy_only_estimator_warns_and_computes_on_numpy_copies(est):
    """No array API support: the inputs are copied to NumPy with a warning naming the
    estimator, and the results are the NumPy path's, as NumPy arrays."""
    assert not est.__sklearn_tags__().array_api_support
    X, y = data("binary", 60)
    expected = sklearn.clone(est).fit(X, y).predict_proba(X)
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.warns(UserWarning, match=f"{type(est).__name__} computes with NumPy only"):
            fitted = sklearn.clone(est).fit(
                array_api_strict.asarray(X), array_api_strict.asarray(y)
            )
        with pytest.warns(UserWarning, match="copied to NumPy"):
            P = fitted.predict_proba(array_api_strict.asarray(X))
    assert isinstance(P, np.ndarray)
    np.testing.assert_array_equal(P, expected)


# Kernel logistic regression: IRLS stops at a relative change of Phi of tol = 1e-6; the
# NumPy and the namespace's fits take the same steps (CG or direct solves) in another
# order of operations, so their probabilities agree far below the distance to the optimum
# (1e-9 measured; 1e-7 asked).  The Nystroem path's NumPy steps are inexact Newton steps
# (eta = 0.1, kclf.klr._solver.PrimalProblem), within 1e-4 of the optimum's
# probabilities, the namespace's exact ones: 1e-4.  Float32 inputs are fitted in float64
# (the module docstring of kclf.klr._array_api_paths): compared with NumPy's fit of the
# same float32 values, plus float32's rounding of the probabilities.
GRID = {"lams": [1e-2, 1.0], "sigma_factors": [0.5, 1.0]}
KLR_CASES = [
    ("binary", KernelLogisticRegression()),
    ("binary", KernelLogisticRegression(solver="direct", lam=0.01)),
    ("binary", KernelLogisticRegression(kernel="linear", fit_intercept=False)),
    ("binary", KernelLogisticRegression(n_components=40, random_state=0)),
    ("multi-class", KernelLogisticRegression(multi_class="ovr")),
    ("binary", KernelLogisticRegressionCV(**GRID)),
    ("binary", KernelLogisticRegressionCV(**GRID, n_components=40, random_state=0, scoring="auc")),
    ("multi-class", KernelLogisticRegressionCV(**GRID, multi_class="ovr", scoring="log_loss")),
    ("multi-task", KernelLogisticRegressionCV(**GRID)),
]


def fit_in_namespace(est, kind, name, dtype, weighted, n=160):
    """``(xp, X, ref, fitted, (P, scores, labels), caught)``: ``est`` fitted on NumPy in
    float64 (the reference) and on the namespace's ``dtype`` arrays of the same values
    (``n`` rows) under dispatch, its outputs there and the fit's warnings; checks that the
    outputs are of the namespace and that float32, only, was upcast with a warning."""
    xp, to = namespace(name)
    X, y = data(kind, n)
    X = X.astype(dtype)
    w = np.random.default_rng(1).integers(0, 3, X.shape[0]).astype(float) if weighted else None
    ref = sklearn.clone(est).fit(X.astype(float), y, sample_weight=w)
    Xa = to(X)
    with sklearn.config_context(array_api_dispatch=True):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fitted = sklearn.clone(est).fit(Xa, to(y), sample_weight=None if w is None else to(w))
        outputs = fitted.predict_proba(Xa), fitted.decision_function(Xa), fitted.predict(Xa)
    upcast = [c for c in caught if "fitted in float64" in str(c.message)]
    assert bool(upcast) == (dtype == "float32")
    for out in outputs:
        assert array_api_compat.array_namespace(out).__name__ == xp.__name__
    assert str(outputs[0].dtype).endswith(dtype)
    return xp, X, ref, fitted, outputs, caught


def assert_klr_arrays_in(xp, models):
    """The fitted coefficients, classes and iteration counts of KLR ``models`` in ``xp``."""
    for inner in models:
        coef = "coef_" if inner.n_components is not None else "dual_coef_"
        for attr in (coef, "classes_", "n_iter_"):
            value = getattr(inner, attr)
            assert array_api_compat.array_namespace(value).__name__ == xp.__name__, attr


@over_namespaces(KLR_CASES)
def test_klr_namespace_fit_equals_numpy(kind, est, name, dtype, weighted):
    xp, X, ref, fitted, (P, _, _), _ = fit_in_namespace(est, kind, name, dtype, weighted)
    models = getattr(fitted, "estimators_", None) or [getattr(fitted, "best_estimator_", fitted)]
    assert_klr_arrays_in(xp, models)
    tol = 1e-4 if est.n_components is not None else 1e-7
    if dtype == "float32":
        tol += float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=tol)
    if hasattr(ref, "cv_results_"):
        np.testing.assert_allclose(
            np.asarray(fitted.cv_results_["mean_test_score"]),
            ref.cv_results_["mean_test_score"],
            rtol=1e-3 if est.n_components is not None else 1e-6,
        )


# KernelLogisticRegressionCV's pairwise multi-class search (Roth 2001, Section 3) in the
# namespace: every pair's lambda path on the exact kernel or the shared Nystroem design,
# the validation rows' r_ij coupled by Eq. (10) per lambda there.  The search's fits and
# the refit (PairwiseCoupling) stop where NumPy's do (tol=1e-6 on the relative change of
# Phi); tolerances as KLR_CASES': exact kernel 1e-7, Nystroem 1e-4 (the NumPy path's
# inexact Newton steps), float32 plus its epsilon; the mean scores as KLR_CASES'.
PAIRWISE_CV_CASES = [
    ("multi-class", KernelLogisticRegressionCV(**GRID, scoring="log_loss")),
    ("four-class", KernelLogisticRegressionCV(**GRID)),
    (
        "four-class",
        KernelLogisticRegressionCV(**GRID, n_components=30, random_state=0, scoring="log_loss"),
    ),
]


@over_namespaces(PAIRWISE_CV_CASES)
def test_klr_cv_pairwise_search_in_namespace_equals_numpy(kind, est, name, dtype, weighted):
    xp, X, ref, fitted, (P, _, _), caught = fit_in_namespace(
        est, kind, name, dtype, weighted, n=100
    )
    assert not [c for c in caught if "computes with NumPy only" in str(c.message)]
    # the same setting: float32 widths are medians of distances rounded in float32 (a sum
    # of 6 squares and a root: a few ulps)
    rel = 1e-12 if dtype == "float64" else 8 * float(np.finfo(np.float32).eps)
    assert fitted.lam_ == ref.lam_
    assert fitted.sigma_ == pytest.approx(ref.sigma_, rel=rel)
    coupling = fitted.best_estimator_.coupling_
    for attr in ("classes_", "pair_counts_", "n_iter_"):
        value = getattr(coupling, attr)
        assert array_api_compat.array_namespace(value).__name__ == xp.__name__, attr
    assert_klr_arrays_in(xp, coupling.estimators_)
    nystroem = est.n_components is not None
    tol = 1e-4 if nystroem else 1e-7
    if dtype == "float32":
        tol += float(np.finfo(np.float32).eps)
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=tol)
    np.testing.assert_allclose(
        np.asarray(fitted.cv_results_["mean_test_score"]),
        ref.cv_results_["mean_test_score"],
        rtol=1e-3 if nystroem else 1e-6,
    )


@pytest.mark.parametrize("n_components", [None, 20])
def test_klr_cv_pairwise_search_computes_in_the_namespace(monkeypatch, n_components):
    """The pairwise search's kernel (or design) and coupled posteriors are arrays of the
    input's namespace: the search does not fall back to NumPy copies."""
    from kclf.klr import _array_api_search

    seen = []
    path = _array_api_search.pairwise_path

    def spy(paths, xp, K, *args, **kwargs):
        P = path(paths, xp, K, *args, **kwargs)
        seen.append((array_api_compat.array_namespace(K).__name__, xp.__name__))
        seen.append((array_api_compat.array_namespace(P).__name__, xp.__name__))
        return P

    monkeypatch.setattr(_array_api_search, "pairwise_path", spy)
    X, y = data("multi-class", 60)
    est = KernelLogisticRegressionCV(lams=[1.0], sigma_factors=[1.0], n_components=n_components)
    with sklearn.config_context(array_api_dispatch=True):
        est.fit(array_api_strict.asarray(X), array_api_strict.asarray(y))
    assert len(seen) == 4  # two folds
    assert all(got == "array_api_strict" == want for got, want in seen)


@pytest.mark.parametrize(
    "est,what",
    [
        (KernelLogisticRegressionCV(kernel=lambda A, B: A @ B.T), "a callable kernel"),
        (KernelLogisticRegressionCV(multi_class="multinomial", n_components=10), "multinomial"),
    ],
    ids=["callable-kernel", "multinomial"],
)
def test_klr_cv_unsupported_parameter_under_dispatch_says_so_in_one_line(est, what):
    X, y = data("multi-class", 60)
    est.set_params(lams=[1.0], sigma_factors=[1.0])
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="not supported for array API") as info:
            est.fit(array_api_strict.asarray(X), array_api_strict.asarray(y))
    message = str(info.value)
    assert what in message and "\n" not in message


def test_klr_cv_pairwise_fold_without_a_class_under_dispatch_says_so_in_one_line():
    X, y = data("multi-class", 60)
    folds = [(np.flatnonzero(y != 2), np.flatnonzero(y == 2))]
    est = KernelLogisticRegressionCV(lams=[1.0], sigma_factors=[1.0], cv=folds)
    with sklearn.config_context(array_api_dispatch=True):
        with pytest.raises(ValueError, match="holds no example of class 2") as info:
            est.fit(array_api_strict.asarray(X), array_api_strict.asarray(y))
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    "est",
    [
        KernelLogisticRegression(),
        KernelLogisticRegression(n_components=5),
        KernelLogisticRegressionCV(),
        KernelLogisticRegressionCV(n_components=5),
        PairwiseCoupling(KernelLogisticRegression()),
        PairwiseCoupling(KernelLogisticRegression(n_components=5)),
    ],
)
def test_klr_tags_declare_array_api_support(est):
    assert est.__sklearn_tags__().array_api_support


def test_klr_predicting_in_another_namespace_is_refused():
    X, y = data("binary", 60)
    with sklearn.config_context(array_api_dispatch=True):
        fitted = KernelLogisticRegression().fit(
            array_api_strict.asarray(X), array_api_strict.asarray(y)
        )
    with pytest.raises(ValueError, match="fitted on array_api_strict arrays"):
        fitted.predict_proba(X)


# Pairwise coupling (Roth 2001, Section 3) on the array API: the pairs fitted in the
# namespace (the exact kernel by each pair's own fit; Nystroem pairs of one width in one
# Newton loop on the shared design) and coupled there by the one Newton loop
# (kclf._newton).  The pairs agree with NumPy's as KLR's fits do (1e-7); the Nystroem
# cases stop at tol=1e-12, where the NumPy path's inexact steps (within 1e-4 of the
# optimum's probabilities at the default tol) have reached it too.  The coupling's
# Jacobian in r_ij is bounded by a few units on these data (4x asked), and its tolerance
# is 1e-10.
PAIR_CASES = [
    ("multi-class", PairwiseCoupling(KernelLogisticRegression())),
    ("multi-class", PairwiseCoupling(KernelLogisticRegression(solver="direct", lam=0.01))),
    (
        "multi-class",
        PairwiseCoupling(KernelLogisticRegression(n_components=40, random_state=0, tol=1e-12)),
    ),
    (
        "multi-class",
        PairwiseCoupling(
            KernelLogisticRegression(sigma=2.0, n_components=40, random_state=1, tol=1e-12)
        ),
    ),
    ("binary", PairwiseCoupling(KernelLogisticRegression())),
    ("multi-class", KernelLogisticRegression(lam=0.05)),
    ("multi-class", KernelLogisticRegression(n_components=30, random_state=0, tol=1e-12)),
]


@over_namespaces(PAIR_CASES)
def test_pairwise_coupling_namespace_fit_equals_numpy(kind, est, name, dtype, weighted):
    xp, X, ref, fitted, (P, scores, labels), caught = fit_in_namespace(
        est, kind, name, dtype, weighted
    )
    assert len([c for c in caught if "fitted in float64" in str(c.message)]) <= 1
    assert not [c for c in caught if "computes with NumPy only" in str(c.message)]
    coupling = getattr(fitted, "coupling_", fitted)
    with sklearn.config_context(array_api_dispatch=True):
        R = coupling.pairwise_proba(namespace(name)[1](X))
    assert array_api_compat.array_namespace(R).__name__ == xp.__name__
    assert str(R.dtype).endswith(dtype) and str(scores.dtype).endswith(dtype)
    for attr in ("classes_", "pair_counts_", "pairs_", "n_iter_"):
        value = getattr(coupling, attr)
        assert array_api_compat.array_namespace(value).__name__ == xp.__name__, attr
    assert_klr_arrays_in(xp, coupling.estimators_)
    nystroem = getattr(est, "estimator", est).n_components is not None
    tol = 1e-7
    if dtype == "float32":
        tol += float(np.finfo(np.float32).eps)
    ref_coupling = getattr(ref, "coupling_", ref)
    np.testing.assert_allclose(to_numpy(R), ref_coupling.pairwise_proba(X), rtol=0, atol=tol)
    np.testing.assert_allclose(to_numpy(P), ref.predict_proba(X), rtol=0, atol=4 * tol)
    if dtype == "float64" and not nystroem:
        np.testing.assert_array_equal(to_numpy(labels), ref.predict(X))
        np.testing.assert_allclose(to_numpy(scores), ref.decision_function(X), rtol=0, atol=1e-5)


def test_coupling_in_a_namespace_equals_numpy():
    """:func:`kclf.couple` on array-api-strict arrays: the same Newton steps as on NumPy."""
    from kclf import couple

    rng = np.random.default_rng(0)
    c = 5
    P = rng.dirichlet(np.ones(c), size=50)
    R = np.clip(
        P[:, :, None] / (P[:, :, None] + P[:, None, :]) + 0.05 * rng.normal(size=(50, c, c)),
        0.01,
        0.99,
    )
    N = rng.integers(10, 40, size=(c, c)).astype(float)
    N = N + N.T
    expected, it = couple(R, N, return_n_iter=True)
    with sklearn.config_context(array_api_dispatch=True):
        got, it_xp = couple(
            array_api_strict.asarray(R), array_api_strict.asarray(N), return_n_iter=True
        )
        with pytest.raises(ValueError, match="method='iteration' is NumPy only"):
            couple(array_api_strict.asarray(R), method="iteration")
    assert array_api_compat.array_namespace(got).__name__ == "array_api_strict"
    assert it_xp == it
    np.testing.assert_allclose(to_numpy(got), expected, rtol=0, atol=1e-15)
