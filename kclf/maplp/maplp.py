"""MAP kernel classifier trained by linear programming (MAPLP).

Nopriadi and Yamashita, "Maximum a Posteriori Based Kernel Classifier Trained by
Linear Programming" (``../shared/papers/maplp_*``), section 4.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._base import KernelMixin
from .._decision import ranked_log_odds
from .._distinct import distinct_rows
from .._validation import (
    KERNEL,
    POSITIVE,
    check_precomputed,
    class_labels,
    reject_with_precomputed,
    validate_data,
)
from ..kernels import gram, median_sigma
from ._solver import equal_inputs_solution, maplp_criterion, solve_lp

HIGHS_METHODS = ("highs", "highs-ds", "highs-ipm")
#: the default width, this multiple of the median pairwise distance: chosen on a seeded half
#: of the 43 KEEL sets (benchmarks/bench_defaults.py; the median itself erred 46 % there)
DEFAULT_SIGMA_FACTOR = 0.125


class MAPLP(KernelMixin, ClassifierMixin, BaseEstimator):
    r"""Maximum a posteriori kernel classifier trained by linear programming.

    A surrogate ``w(x, y) = sum_j alpha_{y,j} k(x, x_j)`` with ``alpha >= 0`` is
    fitted so that ``argmax_y w(x, y)`` is the MAP decision (paper, section 4).

    **Derivation of the LP.**  The population criterion of section 4 is

    .. math:: \max_w \sum_y E_x P(y|x) \min(w(x,y), 1)
              \ \text{s.t.}\ \sum_y E_x w(x,y) = 1,\ w \ge 0 .

    Replacing ``E_x P(y|x) f(x, y)`` by the sample mean ``(1/N) sum_i f(x_i, y_i)``
    and ``E_x g(x)`` by ``(1/N) sum_i g(x_i)`` gives, with
    ``w_i(y) = sum_j alpha_{y,j} K_ij``:

    * objective ``(1/N) sum_i min(w_i(y_i), 1)`` -- the inner sum runs over ``j``
      inside ``w`` (the paper prints ``min(alpha_{y_i,j} K_ij, 1)`` without it);
    * one normalisation ``sum_i sum_y w_i(y) = N`` -- a single equality summed over
      the samples (the paper prints it per ``i``, which would force
      ``sum_y w(x_i, y) = 1`` at every sample, a different problem);
    * ``w >= 0``, replaced as in the paper by ``alpha >= 0`` (sufficient because
      ``k > 0``).

    The cap is linearised with slacks ``xi_i = max(0, w_i(y_i) - 1)``:
    ``min(w_i(y_i), 1) = w_i(y_i) - xi_i`` at the optimum of
    ``max sum_i (w_i(y_i) - xi_i)`` subject to ``w_i(y_i) - xi_i <= 1``,
    ``xi_i >= 0``.  Exchanging the sums,
    ``sum_i w_i(y_i) = sum_y sum_j (sum_i delta(y, y_i) K_ij) alpha_{y,j}`` (the
    paper's objective with ``alpha_{y,j}``, not ``alpha_{y_i,j}``).  The LP in
    ``(C + 1) N`` variables (``3N`` for two classes) is therefore

    .. math::
        \max_{\alpha \ge 0, \xi \ge 0}\ &\sum_y \sum_j \Big(\sum_i \delta_{y,y_i} K_{ij}\Big)
            \alpha_{y,j} - \sum_i \xi_i \\
        \text{s.t.}\ &\sum_y \sum_j \alpha_{y,j} \sum_i K_{ij} = N, \\
        &\sum_j \alpha_{y_i,j} K_{ij} - \xi_i \le 1 \quad (i = 1..N).

    Its optimum is bounded (the objective is at most ``N``) and feasible whenever some
    column sum ``sum_i K_ij`` is positive (always for the Gaussian kernel), so
    infeasible/unbounded statuses only arise with user kernels and are reported
    with HiGHS's message.

    **Sample weights.**  A weight ``s_i >= 0`` per training row (``fit``'s
    ``sample_weight``) makes the sample means weighted means: ``E_x P(y|x) f(x, y)`` becomes
    ``sum_i s_i f(x_i, y_i) / S`` and ``E_x g(x)`` becomes ``sum_i s_i g(x_i) / S``, with
    ``S = sum_i s_i``.  The derivation above then gives the objective
    ``sum_i s_i (w_i(y_i) - xi_i)``, i.e. the coefficient ``sum_i s_i delta(y, y_i) K_ij``
    of ``alpha_{y,j}`` and ``s_i`` of ``xi_i``; the normalisation
    ``sum_y sum_j alpha_{y,j} sum_i s_i K_ij = S``; the cap rows unchanged (one per row,
    its slack ``xi_i`` costing ``s_i``):

    .. math::
        \max_{\alpha \ge 0, \xi \ge 0}\ &\sum_y \sum_j \Big(\sum_i s_i \delta_{y,y_i}
            K_{ij}\Big) \alpha_{y,j} - \sum_i s_i \xi_i \\
        \text{s.t.}\ &\sum_y \sum_j \alpha_{y,j} \sum_i s_i K_{ij} = \sum_i s_i, \\
        &\sum_j \alpha_{y_i,j} K_{ij} - \xi_i \le 1 \quad (i = 1..N).

    Multiplying every ``s_i`` by a constant leaves ``alpha`` unchanged (the programme is
    solved with the weights scaled to mean one).  ``r`` copies of a row give ``r``
    identical cap rows, whose slacks are all ``max(0, w_i(y_i) - 1)`` at the optimum, and
    ``r`` identical basis columns, of which only the sum of the coefficients matters: the
    same surrogates as one row of weight ``r``.  A row of weight 0 adds nothing to the
    objective and the normalisation; dropping its basis function too, the fit is that
    without the row.  The fit therefore runs on the distinct ``(x_i, y_i)`` of positive
    weight, each weighing its copies' sum, in an order of their values
    (the library's distinct-rows helper): integer weights and repeated rows, or any order
    of the rows, give the same programme, hence the same solution even where the optimum
    is not unique.  The default width is the median of the distances among the rows with
    each row counted as many times as its weight (:func:`kclf.kernels.median_sigma`): the
    one place where the weights' scale, not only their ratios, matters; ``classes_`` are
    the classes of the rows of positive weight.

    **Several classes.**  The same LP with one ``w(., y)`` per class ``y`` in
    ``classes_`` (``C`` blocks of ``alpha``); two classes give the paper's LP.

    **A constant basis function (``bias=True``; not in the paper).**  ``w(x, y)`` of the
    paper is a non-negative sum of Gaussian bumps centred at training points.  When one
    class surrounds the other (Breiman's ringnorm: class +1 ~ N(0, 4 I) around class -1
    ~ N(mu, I) in 20 dimensions) such a sum for the outer class is largest where its
    bumps overlap most, at the centre, where the inner class lives: no ``alpha >= 0``
    lets ``argmax_y w(x, y)`` follow the ring.  ``bias=True`` adds the constant ``1`` to
    every class's basis,

    .. math:: w(x, y) = b_y + \sum_j \alpha_{y,j} k(x, x_j), \qquad b_y \ge 0,

    entering the LP like any other basis function (its column of ``K`` is all ones): the
    objective gains ``n_y b_y``, the normalisation ``N b_y``, cap row ``i`` the term
    ``b_{y_i}``.  A constant floor for the outer class and bumps for the inner one can
    express a ring.  ``bias=False`` (the default) is the paper's LP as printed, with the
    same solutions as before this option existed.

    **At any size (``n_basis``).**  With ``b`` centres the programme has ``C b + N``
    variables (``C b`` coefficients, ``N`` slacks), ``N`` cap rows and one equality, and
    ``N b + N + C b`` non-zeros (each cap row holds the ``b`` kernel values of its row in
    its class's block); the kernel is an ``N x b`` matrix.  Without it ``b = N``: ``N^2``
    non-zeros and an ``N x N`` kernel, so the LP's size grows linearly in ``N`` for a
    fixed ``b`` instead of quadratically.  HiGHS solves the programme's dual (``N + 1``
    variables, ``C b`` rows, ``N b + C b`` non-zeros) by the dual simplex and ``alpha`` is
    read from its multipliers: the same optimum, as fast as the primal by the interior
    point at 500 rows and 1.3-5 times faster from 1,000 rows on the sizes below.
    Measured on this project's 2-core machine (``benchmarks/bench_maplp.py --scale``:
    ringnorm, the paper's width, each fit in its own process, the benchmark suite's two
    jobs running beside it; the primal by the interior point in the same process in
    brackets): the full model takes 0.61 s (0.64)
    / 53 MB at 500 rows, 1.7 s (3.4) / 179 MB at 1,000 and 7.7 s (23.3) / 678 MB at 2,000;
    with 500 centres 1.0 s (1.6) / 95 MB at 1,000 rows, 2.0 s (4.9) / 177 MB at 2,000 and
    4.3 s (21.4) / 425 MB at 5,000 (peak memory above the process's start).  At 5,000
    rows (``bias=True``) the time and memory grow about linearly in ``b``, as the
    non-zeros: 2.3 s (6.5) / 215 MB at ``b = 250``, 4.3 s (18.9) / 416 MB at 500, 8.4 s
    (44.9) / 816 MB at 1,000, 19.3 s (74.7) / 1.6 GB at 2,000.  ``bias=True``'s test
    error: 3.05 % fitted on 500 rows in full, 1.55 % on 5,000 rows with 500 centres.

    **All training inputs equal.**  When the Gram matrix is constant (every ``x_i`` the
    same point ``x_0`` as far as the kernel can tell) the LP reads
    ``max sum_y n_y a_y`` subject to ``sum_y a_y = 1``, ``a >= 0``, with
    ``a_y = w(x_0, y)``: its optimum puts all mass on the majority class, and on an
    arbitrary vertex of a whole segment of optima when the classes tie, so the
    normalised surrogate would claim certainty ``[1, 0]`` whatever the class
    proportions.  The data determine only ``P(y | x_0) = n_y / N``, and
    ``w(x_0, y) = n_y / N`` keeps the surrogate's defining property
    ``argmax_y w = argmax_y P(y | x)``; so no LP is solved and ``w(x, y) = (n_y / N)
    k(x, x_0) / k(x_0, x_0)`` (the class frequencies at ``x_0``, ``n_iter_ = 0``).

    Parameters
    ----------
    sigma : float or None, default=None
        Gaussian width, ``k(x, z) = exp(-||x - z||^2 / (2 sigma^2))``; the paper's
        ``gamma`` is ``1 / (2 sigma^2)``.  ``None``: an eighth of the median pairwise
        distance of the training inputs (:func:`kclf.kernels.median_sigma`), the best of
        1/16 ... 2 times it on a seeded half of the KEEL suite (mean test error 17.8 %
        against the median's 46.3 %; benchmarks/bench_defaults.py).  The paper chooses the
        width by cross-validation (``GridSearchCV`` over ``sigma``).
    kernel : {"rbf", "linear", "precomputed"} or callable, default="rbf"
        With ``"precomputed"``, ``fit`` takes the training Gram matrix and
        ``predict*`` the ``(n_test, n_train)`` cross-kernel.  The training kernel must be
        non-negative (see Notes).
    solver_options : dict or None, default=None
        Options of ``scipy.optimize.linprog``'s HiGHS solver.  The key ``"method"``
        picks the HiGHS algorithm applied to the programme's dual (see "At any size"):
        ``"highs-ds"`` (dual simplex, the default), ``"highs-ipm"`` (interior point with
        crossover to a vertex) or ``"highs"`` (HiGHS chooses).  The default is the fastest
        of the three on banana (n = 400: 0.26 s against 0.52 s and 0.33 s) and on 4,000
        rows of KEEL letter with 500 centres (26 classes: 5.5 s against 47 s by the
        interior point on the dual, 33 s on the primal).  Every other key is passed as
        ``options`` (e.g. ``{"time_limit": 600}``).
    bias : bool, default=False
        Add a non-negative constant ``b_y`` to every class's surrogate (see above; not in
        the paper, an ablation).
    n_basis : int or None, default=None
        ``None``: the paper's kernel expansion, one basis function ``k(., x_j)`` per
        (distinct) training row.  An int ``b``: the expansion restricted to ``b`` centres
        drawn uniformly without replacement from the distinct training rows (seeded by
        ``random_state``; every row when ``b`` is at least their number, the paper's
        model), ``w(x, y) = b_y + sum_j alpha_{y,j} k(x, c_j)``: the same LP with the
        ``N x b`` kernel between the rows and the centres (see "At any size").  Not with
        ``kernel="precomputed"``.
    random_state : int, RandomState instance or None, default=None
        Seeds the centres of ``n_basis`` (``check_random_state``), the only random step.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    alpha_ : ndarray of shape (n_classes, n_support)
        Coefficients ``alpha_{y, j}`` of the support samples (columns with a
        non-zero coefficient in some class).
    support_ : ndarray of shape (n_support,)
        Indices of the support samples in the training set (of a row's first copy).
    support_vectors_ : ndarray of shape (n_support, n_features)
        The support samples (absent for ``kernel="precomputed"``).
    sigma_ : float or None
        Gaussian width used (``None`` for non-rbf kernels).
    intercept_ : ndarray of shape (n_classes,)
        The constants ``b_y`` (zero unless ``bias=True``).
    objective_ : float
        Criterion ``(1/N) sum_i min(w(x_i, y_i), 1)`` at the solution (the weighted mean
        with ``sample_weight``).
    n_iter_ : int
        HiGHS iterations.

    Notes
    -----
    ``predict_proba`` returns ``w(x, y) / sum_y' w(x, y')``: a *surrogate* whose
    argmax is the MAP decision, not a calibrated posterior (the ideal ``w`` is 0/1,
    section 4).  Where every ``w(x, y)`` is 0 (far from all support samples) the
    surrogate is uniform and ``predict`` returns ``classes_[0]``.

    ``decision_function`` returns the log-odds of ``predict_proba`` (for two classes of its
    positive column), so it ranks the rows as the probabilities do: scikit-learn's
    ``roc_auc`` scorer and ``CalibratedClassifierCV`` call it first.  The paper's margin
    ``w(x, +1) - w(x, -1)`` ranks them otherwise wherever ``w(x, +1) + w(x, -1)`` varies
    (test AUC 0.895 against the probabilities' 0.941 with ``make_classification(600,
    random_state=0)``, 400 training rows, the default width); it
    only breaks the ties of probabilities exactly 0 or 1 (a vanishing ``w``).

    The kernel must be non-negative (``Negative values in data`` otherwise): ``alpha >= 0``
    keeps ``w >= 0`` only then, and with negative entries the normalisation can be
    impossible (a linear kernel of centred data has column sums 0).  For the linear and
    precomputed kernels this is scikit-learn's ``positive_only`` input tag (non-negative
    inputs give a non-negative linear kernel, and the estimator checks then pass one).
    Sparse ``X`` (CSR, CSC) is taken for the rbf and linear kernels, with the dense
    array's probabilities to round-off; the rbf kernel and its default width are the same
    for ``X`` and ``c * X`` at any scale ``c`` (:mod:`kclf.kernels`).

    **scikit-learn's estimator checks.**  ``MAPLP()`` and ``MAPLP(bias=True)`` pass them all.
    ``kernel="precomputed"`` (tag ``pairwise``: the checks give the linear kernel of
    their data) cannot pass three, for reasons no tag expresses:
    ``check_decision_proba_consistency`` fits the raw non-square ``X`` (scikit-learn's
    ``SVC(kernel="precomputed", probability=True)`` fails it alike), which every
    precomputed-kernel estimator must refuse (``check_nonsquare_error``);
    ``check_fit2d_1feature`` takes ``y`` from the first column of a kernel of inputs
    shifted to be non-negative, here all one class, which MAPLP refuses as every
    estimator of kclf does; ``check_classifiers_train`` asks for accuracy above 0.83 on
    blobs, where MAPLP with the checks' linear kernel reaches 0.63 (0.95 with the rbf
    kernel): a non-negative sum of linear functions of non-negative inputs is a poor
    surrogate.

    References
    ----------
    Nopriadi, Y. Yamashita. Maximum a posteriori based kernel classifier trained by
    linear programming. Section 4 (criterion, kernel model, LP).

    Examples
    --------
    >>> import numpy as np
    >>> from kclf.maplp import MAPLP
    >>> X = np.array([[0.0], [0.2], [2.0], [2.2]]); y = np.array([-1, -1, 1, 1])
    >>> MAPLP(sigma=0.5).fit(X, y).predict([[0.1], [2.1]])
    array([-1,  1])
    """

    _parameter_constraints = {
        "sigma": [POSITIVE, None],
        "kernel": KERNEL,
        "solver_options": [dict, None],
        "bias": ["boolean"],
        "n_basis": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        sigma=None,
        *,
        kernel="rbf",
        solver_options=None,
        bias=False,
        n_basis=None,
        random_state=None,
    ):
        self.sigma = sigma
        self.kernel = kernel
        self.solver_options = solver_options
        self.bias = bias
        self.n_basis = n_basis
        self.random_state = random_state

    def _kernel_kind(self):
        return self.kernel if isinstance(self.kernel, str) else "callable"

    def _validate(self, X, *y, reset=True):
        """``validate_data`` with sparse input where the kernel is computed from ``X``."""
        sparse = ("csr", "csc") if self._kernel_kind() in ("rbf", "linear") else False
        return validate_data(self, X, *y, reset=reset, accept_sparse=sparse)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Solve the MAPLP linear programme (class docstring; the criterion of section 4)
        on ``(X, y)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs (CSR / CSC for the rbf and linear kernels), or their Gram
            matrix with ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (at least two classes among the rows of positive weight).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows (None: all one): the criterion's and the
            normalisation's means are weighted (class docstring, "Sample weights").  An
            integer weight fits as that many copies of the row, a zero weight as no row.

        Returns
        -------
        self : MAPLP
            The fitted estimator (``alpha_`` on the ``support_`` samples).

        Raises
        ------
        ValueError
            Fewer than two classes; negative kernel values; a degenerate kernel (the Gram
            matrix is numerically the identity, e.g. ``sigma`` -> 0); an LP status other
            than optimal (the message includes HiGHS's).
        """
        options = dict(self.solver_options or {})
        method = options.pop("method", "highs-ds")
        if method not in HIGHS_METHODS:
            raise ValueError(
                f"solver_options['method'] must be one of {HIGHS_METHODS}, got {method!r}"
            )
        reject_with_precomputed(self, "n_basis", "a basis of centres among the inputs")
        X, y = self._validate(X, y)
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        check_classification_targets(y)
        self.classes_, y_kept = class_labels(y[sw > 0], "MAPLP")
        y_index = np.zeros(len(y), dtype=int)
        y_index[sw > 0] = y_kept
        precomputed = self.kernel == "precomputed"
        if precomputed:
            X = check_precomputed(X)
        # the distinct (x, y) pairs of positive weight, each weighing its copies' sum
        rows, _, weight = distinct_rows(X, y_index, sw)
        y_index = y_index[rows]
        n = rows.size
        # the basis: every distinct row (the paper), or n_basis of them drawn at random
        if self.n_basis is None or self.n_basis >= n:
            centres = np.arange(n)
        else:
            rng = check_random_state(self.random_state)
            centres = np.sort(rng.choice(n, self.n_basis, replace=False))
        self.sigma_ = None
        if precomputed:
            K = X[np.ix_(rows, rows)]
        else:
            Xd = X[rows]
            if self.kernel == "rbf":
                self.sigma_ = (
                    DEFAULT_SIGMA_FACTOR * median_sigma(Xd, sample_weight=weight)
                    if self.sigma is None
                    else float(self.sigma)
                )
            K = gram(self.kernel, Xd, Xd[centres], self.sigma_)
            if not np.all(np.isfinite(K)):
                raise ValueError("the kernel matrix contains NaN or infinity")
        _check_non_negative_kernel(K, "the training kernel matrix")
        # the largest k(x_i, c_j) but those of a centre with itself (K >= 0; no copy of K)
        own = (centres, np.arange(centres.size))
        diag = K[own]
        K[own] = 0.0
        off_max = K.max() if K.size else 0.0
        K[own] = diag
        # (a pair of weight above one is two copies of a row: their kernel is not 0)
        if n > 1 and weight.max() <= 1 and off_max < np.finfo(float).eps * max(diag.max(), 1e-300):
            raise ValueError(
                "degenerate kernel: the Gram matrix is numerically the identity "
                f"(sigma={self.sigma_!r} is too small for these data), so w(x, y) would "
                "vanish away from the training points; use a larger sigma"
            )
        C = len(self.classes_)
        if n > 1 and K[0, 0] > 0 and np.ptp(K) <= np.finfo(float).eps * K[0, 0]:
            # all inputs equal in kernel space: w(x_0, y) = n_y / N (class docstring)
            local = np.array([0])
            self.alpha_ = equal_inputs_solution(K, y_index, C, weight)
            self.intercept_ = np.zeros(C)
            self.n_iter_ = 0
        else:
            alpha, self.intercept_, self.n_iter_ = solve_lp(
                K, y_index, C, bool(self.bias), method, options, weight
            )
            local = np.flatnonzero(alpha.max(axis=0) > 0)
            self.alpha_ = alpha[:, local]
        self.support_ = rows[centres[local]]
        if not precomputed:
            self.support_vectors_ = X[self.support_]
        self.objective_ = maplp_criterion(
            K[:, local], y_index, self.alpha_, self.intercept_ if self.bias else None, weight
        )
        return self

    def surrogate(self, X):
        """The surrogate ``w(x, y) = b_y + sum_j alpha_{y,j} k(x, x_j)`` of section 4.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel to the training inputs with
            ``kernel="precomputed"``.

        Returns
        -------
        w : ndarray of shape (n_samples, n_classes)
            One column per class in ``classes_``.
        """
        check_is_fitted(self)
        X = self._validate(X, reset=False)
        if self.kernel == "precomputed":
            K = check_precomputed(X, n_train=self.n_features_in_)[:, self.support_]
        else:
            K = gram(self.kernel, X, self.support_vectors_, self.sigma_)
        w = K @ self.alpha_.T
        if self.bias:
            w += self.intercept_
        return w

    def _proba(self, w):
        """The normalised surrogate of :meth:`predict_proba` from ``w``."""
        w = np.maximum(w, 0.0)
        s = w.sum(axis=1, keepdims=True)
        p = np.full_like(w, 1.0 / w.shape[1])
        pos = s[:, 0] > 0
        p[pos] = w[pos] / s[pos]
        if w.shape[1] == 2:  # p0 = 1 - p1: predict (p1 > p0) and the log-odds' sign agree
            p[:, 0] = 1.0 - p[:, 1]
        return p

    def decision_function(self, X):
        """The log-odds of :meth:`predict_proba`, its ties at 0 and 1 broken by the margin.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`surrogate`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: ``log(p / (1 - p))`` of the positive column ``p`` of
            :meth:`predict_proba` (positive means ``classes_[1]``), a strictly increasing
            function of it; where ``p`` is exactly 0 or 1 (a clipped or vanishing
            surrogate), ``-+746 + m / (1 + |m|)`` with the margin
            ``m = w(x, classes_[1]) - w(x, classes_[0])``, beyond every other score and
            ordered by ``m`` (the library's ranked log-odds).  More classes: one
            column per class, the same of that class's probability against the rest, with
            ``m = w(x, y) - max_{y' != y} w(x, y')``; the largest is :meth:`predict`'s.
        """
        w = self.surrogate(X)
        p = self._proba(w)
        if w.shape[1] == 2:
            return ranked_log_odds(p[:, 1], w[:, 1] - w[:, 0])
        top2 = np.sort(w, axis=1)[:, -2:]
        rival = np.where(w == top2[:, 1:], top2[:, :1], top2[:, 1:])
        return ranked_log_odds(p, w - rival)

    def predict(self, X):
        """The MAP decision ``argmax_y w(x, y)`` (section 4).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`surrogate`.

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_``: the largest column of :meth:`predict_proba` (the
            first of tied ones; ``classes_[0]`` where every ``w(x, y)`` is 0).
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def predict_proba(self, X):
        """The normalised surrogate ``w(x, y) / sum_y' w(x, y')``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`surrogate`.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order, rows summing to one: not a calibrated
            posterior (the ideal ``w`` is 0/1, section 4); uniform where every
            ``w(x, y)`` is 0 (negative values of a test cross-kernel's ``w`` count as 0).
        """
        return self._proba(self.surrogate(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        kind = self._kernel_kind()
        tags.input_tags.sparse = kind in ("rbf", "linear")
        # the Gram matrix must be non-negative: for these kernels X >= 0 makes it so
        tags.input_tags.positive_only = kind in ("linear", "precomputed")
        return tags


def _check_non_negative_kernel(K, what):
    """``ValueError`` (scikit-learn's "Negative values in data" wording) if ``K`` has a
    negative entry: ``alpha >= 0`` gives ``w >= 0`` only for a non-negative kernel."""
    if K.size and K.min() < 0:
        raise ValueError(
            f"Negative values in data passed to MAPLP: {what} has entries down to "
            f"{K.min():.3g}; w(x, y) = sum_j alpha_(y,j) k(x, x_j) with alpha >= 0 needs a "
            "non-negative kernel"
        )
