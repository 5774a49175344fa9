"""Manifold Gaussian process classifier (MGPC) with Laplace (MLA) and EP (MEP) inference.

Fradi, Samir & Yao, "A Bayesian inference for a manifold Gaussian process classifier".
The inputs are first mapped to ``psi(x) = (K(x, c_1), ..., K(x, c_m))`` with centres
``c_j`` from k-means (Sec. 3.2, Eq. (1)-(2)) or, where the marginal likelihood prefers
it (by default it chooses between the two), left as they are; a zero-mean GP with
covariance ``c(z, z') = amplitude * exp(-||z - z'||^2 / (2 length_scale^2))`` acts on
``z = psi(x)``.
The posterior of the latent values is approximated by Laplace's method with the logistic
likelihood (Sec. 3.3, Eq. (3)-(6)) or by expectation propagation with the probit
likelihood (Sec. 3.4, Eq. (7)-(8)), in the numerically stable forms of Rasmussen &
Williams, *Gaussian Processes for Machine Learning* (2006), Algorithms 3.1-3.2 and 3.5-3.6.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
from scipy.linalg import solve_triangular
from scipy.special import ndtr
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .._decision import ranked_log_odds
from .._distinct import distinct_rows
from .._progress import SearchProgress
from .._validation import POSITIVE, class_labels, positive_grid, validate_data
from ..kernels import median_sigma, rbf_kernel, unit_of
from ._evidence_walk import EvidenceWalk
from ._solver import covariance, logistic_gaussian_integral

#: the feature maps searched by default: the paper's 20 k-means centres and the identity
DEFAULT_N_CENTERS = (20, None)
DEFAULT_LENGTH_SCALE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
#: ``2 ** k``, k = 0 .. 12, walked at every other value and then refined (ManifoldGPC.fit)
DEFAULT_AMPLITUDES = tuple(2.0**k for k in range(13))
#: the feature map's default width: this multiple of the median pairwise distance of X
DEFAULT_SIGMA_FACTOR = 0.5
INFERENCES = ("laplace", "ep")


def _is_sequence(value):
    return value is not None and not isinstance(value, Integral | str) and np.ndim(value) > 0


def _grid(value, name):
    return None if value is None else positive_grid(value, name)


class ManifoldGPC(ClassifierMixin, BaseEstimator):
    """Manifold Gaussian process classifier, MLA or MEP inference.

    The paper's model is binary; with more classes one model per class against the rest
    is fitted (each with its own feature map and hyper-parameters, as
    ``OneVsRestClassifier(ManifoldGPC(...))`` would) and the probabilities are normalised
    to sum to one, as scikit-learn's ``GaussianProcessClassifier`` does.

    Parameters
    ----------
    n_centers : int, None or sequence of int and None, default=(20, None)
        Number ``m`` of k-means centres ``c_j`` of the feature map
        ``psi(x) = (K(x, c_1), ..., K(x, c_m))`` (Sec. 3.2, Eq. (2)).  ``None`` uses the
        identity map ``psi(x) = x`` (a plain GP classifier).  A sequence is a set of
        feature maps searched, jointly with the covariance's hyper-parameters, by the
        approximate log marginal likelihood: the default lets the evidence decide between
        the paper's 20-centre map and the identity (see Notes); ``20`` is the paper's
        model alone.  ``m`` is capped at the number of distinct training rows, the most
        centres k-means can place: there the centres are the training points themselves,
        the representer theorem's own expansion that Eq. (1) restricts to ``m`` centres,
        so the default fits any training set of two or more rows (``n_centers_`` says
        which ``m`` was used).
    sigma : float, sequence of float or None, default=None
        Width of the Gaussian kernel ``K`` of the feature map; ``None`` is half the median
        pairwise distance of the training inputs (the evidence's choice among 0.5, 1, 2
        and 4 times the median on the digits and IDA german sets; the median itself left
        the features so smooth that 3 vs 8 lost 0.7 points); a sequence is a grid
        searched (jointly with the covariance's hyper-parameters) by the approximate log
        marginal likelihood.  Unused by the identity map (``n_centers=None``).
    inference : {"laplace", "ep"}, default="laplace"
        ``"laplace"``: MLA, logistic likelihood, Newton's method for the mode (Eq. (3)),
        predictive mean and variance Eq. (5)-(6), predictive probability
        ``int sigma(f) N(f|mu, s2) df`` by Williams & Barber's erf-mixture form of the
        sigmoid (closed form Gaussian integrals).  ``"ep"``: MEP, probit likelihood,
        sequential EP site updates (Eq. (7)), predictive probability Eq. (8) (exact for
        the probit).
    length_scale : float, sequence of float or None, default=None
        Length scale of the GP covariance on the feature space.  A sequence is a grid
        searched by the approximate log marginal likelihood; ``None`` is the grid
        ``median distance of psi(X) * length_scale_factors``.
    amplitude : float, sequence of float or None, default=None
        Signal variance of the GP covariance; a sequence is searched like
        ``length_scale``, every value a candidate and none added; ``None`` is the grid
        ``1, 2, 4, ..., 4096`` (powers of 2), walked at every other value and then
        bisected around the choice (see Notes).  Its top: with ``(1, 4, 16, 64)`` the
        largest value was chosen on every digits split, the evidence still rising; its
        step: walked by powers of 4 alone, MEP lost to GPy's EP in log loss on 11 of 12
        splits of IDA german, the optimum lying between two of them.
    length_scale_factors : sequence of float, default=(0.25, 0.5, 1, 2, 4)
        Multiples of the median pairwise distance of ``psi(X)`` searched when
        ``length_scale=None``.
    max_iter : int, default=200
        Newton iterations (Laplace) or EP sweeps (every site updated at once, one
        factorisation per sweep, Anderson-accelerated and damped where the residual grows;
        at most 95 were needed from a cold start on 1000 random problems with amplitudes
        up to 1e5).
    tol : float, default=1e-8
        Convergence tolerance: objective change for Newton; for EP the largest change of a
        site parameter (relative to the largest site parameter) that the fixed-point
        equations of Eq. (7) still ask for.
    search_tol : float, default=1e-3
        EP only: the tolerance of the grid points' EP runs; the chosen point's sites are
        then refined to ``tol``.  EP's log marginal likelihood is stationary in the site
        parameters at the fixed point, so a grid point's score is off by about the square
        of the sites' error: up to 4e-3 nats at the default on the digits tasks (at
        amplitude 4096), 5e-5 on IDA banana and german (1e-4: 6e-5 and 1e-6), a Bayes
        factor of 1.004 at most.  A value at or below ``tol`` runs every grid point to
        ``tol``.
    n_init : int, default=4
        Number of k-means runs (different k-means++ seedings) for the centres; the best
        inertia wins.
    n_inducing : int or None, default=None
        ``None``: the full model, ``O(n^3)`` time and ``O(n^2)`` memory per Newton step or
        EP sweep.  An int ``m``: the sparse path (see "At any size" in the Notes): the
        latent GP's prior over the ``n`` training rows is the FITC approximation with
        ``m`` inducing inputs, drawn uniformly without replacement from the distinct
        training inputs (seeded by ``random_state``) and mapped by each feature map;
        Laplace, EP, the evidence of the grid walk and the predictions run on it in
        ``O(n m^2)`` time and ``O(n m)`` memory.  At least the number of distinct inputs:
        every one is inducing, the full model (to round-off; ``n_inducing_`` says how many
        were used).
    random_state : int, RandomState instance or None, default=None
        Seeds the k-means++ initialisation of the centres and the draw of the inducing
        inputs (``n_inducing``), the only random steps.  ``None`` uses the fixed seed 0,
        so that fitting the same data twice gives the same model
        (``KMeans(random_state=None)`` draws from NumPy's global generator: the centres,
        hence the probabilities, changed from one fit of the same data to the next).
    verbose : int, default=0
        0: silent.  1 or more: one line to stderr per length-scale row the walk visits
        (its best evidence) and one for the choice, each with the seconds elapsed.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        For two classes ``classes_[1]`` is the positive class ``y = +1``.
    estimators_ : list of ManifoldGPC
        More than two classes only: the model of each class of ``classes_`` against the
        rest (a 0/1 target); the attributes below are then theirs, except
        ``log_marginal_likelihood_`` and ``n_iter_``, arrays over the classes here.
    n_centers_ : int or None
        Number of centres of the feature map used (``None``: the identity), the evidence's
        choice when ``n_centers`` is a sequence.
    centers_ : ndarray of shape (m, n_features) or None
    sigma_ : float or None
        Feature-map kernel width used.
    length_scale_, amplitude_ : float
        Covariance hyper-parameters chosen by the approximate marginal likelihood.
    log_marginal_likelihood_ : float
        Laplace (R&W Eq. (3.32)) or EP (R&W Eq. (3.65)) approximation at the chosen values.
    hyperparameter_scores_ : ndarray of shape (n_maps, n_length_scales, n_amplitudes)
        Approximate log marginal likelihood over the searched grid; one entry of the first
        axis per feature map searched: per ``n_centers`` value, in its order, one per
        feature-map width (one for the identity); EP's with sites to ``search_tol``;
        ``-inf`` at the grid points the walk did not visit (see Notes; with the default
        amplitudes, 13 columns: the walk visits even ones, the bisection one or two odd
        ones beside the choice).
    n_iter_ : int
        Newton iterations or EP sweeps of the final fit.
    train_rows_ : ndarray of int
        The training rows the latent values (``sqrt_w_``; on the full path ``alpha_`` and
        ``Z_train_`` too) belong to, in their order: the first copy of each distinct
        ``(x, y)`` of positive weight (see "Sample weights").
    alpha_ : ndarray
        The predictive mean is ``k(Z_train_, psi(x))' alpha_``: per training row (Eq. (5):
        Laplace's ``grad log p(y | M)`` at the mode), on the sparse path per inducing
        input.
    Z_train_ : ndarray or sparse matrix
        The feature-map images of the training rows, on the sparse path of the inducing
        inputs.
    n_inducing_ : int or None
        Number of inducing inputs used (``None``: the full model).
    inducing_rows_ : ndarray of int or None
        The training rows (positions in ``X``) whose inputs are the inducing inputs.

    Notes
    -----
    Hyper-parameters are chosen by maximising the approximate log marginal likelihood of
    the chosen inference over a grid rather than by cross-validation: it is the Bayesian
    criterion the paper's model comes with, uses all training points, costs one fit per
    grid point instead of one per fold (3-fold CV of the log loss chose the same values
    on the digits tasks), and a grid needs no gradient and no step size: it steps by
    factors of 2 in length scale and in amplitude.

    Along the amplitudes of one length scale (and feature-map width) the evidence rises
    to one maximum or plateau and falls, and so does the best value of a row across the
    length scales, so the grid is walked rather than filled: from the middle length
    scale (for a later feature map, the best grid point so far) the rows are visited up
    and then down, each way until a row's best evidence first falls, and each row's
    amplitudes from the best amplitude of its neighbour towards the start, up and then
    down, each way until the evidence first falls (``-inf`` in ``hyperparameter_scores_``
    where the walk did not go); where the first step up rises, the maximum is above the
    start and the way down is skipped (rows and amplitudes alike); every EP run starts
    from the sites of its neighbour on the grid.  On the ten IDA sets of the data mirror
    (realisation 1, both inferences, both default maps alone) and the six digits splits
    of ``benchmarks/bench_mgpc.py`` the walk found each map's full-grid maximum
    (amplitudes by powers of 4; 64 of 64 cases, ``bench_mgpc.py --walk-check``),
    visiting 8-16 of the 35 points.

    The default amplitudes are walked at every other value (``1, 4, ..., 4096``) and the
    chosen one is then bisected: the evidence is unimodal along its row, so the best
    power of 2 there is the choice or a neighbour; the neighbour above is tried from the
    chosen point's sites, the one below only if that did not improve (one or two EP runs
    of a fit's 16-29 on the benchmark's tasks).  MEP's test log loss, walk by 4 alone ->
    bisected (``benchmarks/bench_mgpc.py --resplits 12 --ida-sets``; GPy's EP beside
    it): IDA german, the original split and 11 seeded resplits, mean 0.4840 -> 0.4810
    (GPy 0.4801; splits won against GPy 1 -> 6 of 12); banana's 12, 0.2404 -> 0.2419
    (GPy 0.2574, all 12 won either way); the ten IDA sets, mean 0.3219 -> 0.3224 (GPy
    0.3576).

    The evidence also compares feature maps (``n_centers`` a sequence).  By default it
    chooses between the paper's 20-centre map and the identity: it keeps the map on the
    digits tasks (by 5-7 nats; the same model as ``n_centers=20``) and on IDA thyroid,
    twonorm and waveform, and takes the identity on the other seven IDA sets of the data
    mirror (realisation 1: the original split where the mirror has it, else the
    workflow's seeded split; ``bench_mgpc.py --ida-sets``).  Over those ten sets MEP's
    mean test log loss is 0.322 (accuracy 84.6 %) against the map's 0.336 (83.8 %) and
    the identity's 0.319 (84.8 %): german 0.469 -> 0.442, splice 0.329 -> 0.292, image
    0.140 -> 0.087; worse than the map on titanic (0.510 -> 0.519), and than the
    identity on thyroid, where the evidence kept the map (0.158 against 0.089, 75 test
    rows).  Searching both maps cost 1.2-1.9 times the map's search alone on these tasks.

    **Scores.**  ``decision_function`` is the log-odds of ``predict_proba``, a strictly
    increasing function of it, so scikit-learn's ``roc_auc`` scorer (which calls it first)
    ranks as the probabilities do; the latent mean (Eq. (5), :meth:`predict_latent`) alone
    ranks otherwise, the probability depending on the variance too.

    **Sample weights.**  A weight ``s_i`` multiplies row ``i``'s log-likelihood term,
    ``p(y | M) = prod_i p(y_i | M_i)^{s_i}``.  Copies of an input share one latent value
    (their rows of the covariance coincide), so ``r`` copies of a row are one row of weight
    ``r``.  MLA: the Newton step, the mode and the Laplace evidence with ``W = diag(s pi (1
    - pi))`` and the gradient ``s (t - pi)`` are those of the copies
    (the Laplace mode's Newton loop).  MEP: a row of weight ``s_i`` holds ``s_i``
    copies of its site (the posterior's precision ``s_i tau_i``), and each cavity removes
    one copy, as EP on the copies does (power EP with power ``1 / s_i``); the evidence's
    per-site terms count ``s_i`` times (the EP sweeps).  Below one the
    cavity would remove more of a site than the posterior holds, and parallel EP meets
    cavities of negative precision: MEP refuses positive weights below one (scale them
    up; MLA takes any).  The default widths count a row of weight ``s_i`` as ``s_i``
    copies in the median distance, and k-means weighs the rows by ``s_i``.  The fit runs on
    the distinct ``(x, y)`` of positive weight, each weighing its copies' sum, in an order
    of their values (``train_rows_``): integer
    weights and repeated rows, and any order of the rows, give the same model, bit for
    bit (k-means++'s draws depend on the rows' order).

    **At any size (``n_inducing``).**  With inducing inputs ``u_1, ..., u_m`` (the feature
    map's images of ``m`` training inputs) the prior covariance ``K`` of the training
    rows' latent values becomes the fully independent training conditional (FITC;
    Snelson & Ghahramani 2006; Quiñonero-Candela & Rasmussen 2005)
    ``K~ = Q + diag(K - Q)``, ``Q = K_nm K_mm^+ K_mn`` (the Nyström approximation;
    ``K_mm``'s pseudo-inverse drops eigenvalues below ``m eps`` of the largest), with
    ``Q = V V'``, ``V`` of shape ``(n, m)``.  Laplace's ``B = I + W^1/2 K~ W^1/2`` and
    EP's ``I + S^1/2 K~ S^1/2`` are then diagonal plus rank ``m``: Woodbury's identity
    and Sylvester's determinant identity give the Newton step, EP's posterior marginals
    and both evidences (R&W Eq. (3.32), (3.65)) through one ``m x m`` Cholesky factor,
    ``O(n m^2)`` per step or sweep (the FITC module); ``V`` is formed once per
    length scale and shared by its amplitudes.  The grid is walked by the FITC model's
    evidence as the full model's by its own, and a new input's latent has the FITC
    posterior mean and variance (``k(x, x) - q(x, x)`` added to the Nyström part's).

    FITC rather than the subset of regressors (SoR) or DTC (GPy's
    ``SparseGPClassification``): its evidence is the marginal likelihood (to Laplace's or
    EP's approximation) of a proper GP, the covariance function
    ``q(x, x') + [x = x'] (k(x, x) - q(x, x'))``, the same model that makes the
    predictions, so comparing grid points by it is model comparison between valid models;
    and every row keeps its prior variance ``k(x, x)``.  SoR's prior ``Q`` has the
    variance ``q(x, x) <= k(x, x)``, which vanishes between the inducing inputs at short
    length scales: the rows there are predicted at probability 1/2 by the prior itself,
    and the evidence compares such degenerate models; DTC trains on that prior and
    predicts with ``k(x, x)``, so its evidence is not its predictions' model's.  The
    variational bound of GPflow's ``SVGP`` (Titsias 2009; Hensman et al. 2015) is the
    sound criterion where the inducing inputs are fitted too, but it is a different
    inference (not Laplace's or EP's); with the inducing inputs drawn, not fitted,
    FITC's known failure (its evidence rewarding inducing inputs moved to explain
    noise, Bauer et al. 2016) has nothing to act on.

    The inducing inputs are training inputs drawn at random rather than k-means centres:
    one draw serves every feature map and width (each maps the same rows), every distinct
    input is drawn at ``m`` at least their number (the full model, exactly), and the
    draw costs nothing beside k-means' ``O(n m d)`` per iteration and start; MAPLP's and
    LSPC's ``n_basis`` draw their centres the same way.  (k-means centres of the images,
    as Zhang, Tsang & Kwok's Nyström, were not measured here.)

    **Sparse input and any scale.**  ``X`` may be CSR or CSC: the feature map and the
    identity map's covariance are Gaussian kernels of ``X`` (:mod:`kclf.kernels`), the
    k-means centres dense.  With the default widths (multiples of median distances) the
    model of ``c * X`` is that of ``X`` at any ``c`` from 1e-300 to 1e300 (the kernels and
    k-means work in units of a power of two of ``X``'s magnitude).

    References
    ----------
    A. Fradi, C. Samir, A.-F. Yao. A Bayesian inference for a manifold Gaussian process
    classifier: applications to images classification.
    C. E. Rasmussen, C. K. I. Williams. Gaussian Processes for Machine Learning, 2006.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> from kclf.mgpc import ManifoldGPC
    >>> X, y = make_moons(100, noise=0.1, random_state=0)
    >>> clf = ManifoldGPC(n_centers=10, inference="ep", random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints = {
        "n_centers": [Interval(Integral, 1, None, closed="left"), None, "array-like"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "sigma": [POSITIVE, "array-like", None],
        "inference": [StrOptions(set(INFERENCES))],
        "length_scale": [POSITIVE, "array-like", None],
        "amplitude": [POSITIVE, "array-like", None],
        "length_scale_factors": [POSITIVE, "array-like", None],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [POSITIVE],
        "search_tol": [POSITIVE],
        "n_inducing": [Interval(Integral, 1, None, closed="left"), None],
        "random_state": ["random_state"],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        n_centers=DEFAULT_N_CENTERS,
        *,
        sigma=None,
        inference="laplace",
        length_scale=None,
        amplitude=None,
        length_scale_factors=DEFAULT_LENGTH_SCALE_FACTORS,
        max_iter=200,
        tol=1e-8,
        search_tol=1e-3,
        n_init=4,
        n_inducing=None,
        random_state=None,
        verbose=0,
    ):
        self.n_centers = n_centers
        self.sigma = sigma
        self.inference = inference
        self.length_scale = length_scale
        self.amplitude = amplitude
        self.length_scale_factors = length_scale_factors
        self.max_iter = max_iter
        self.tol = tol
        self.search_tol = search_tol
        self.n_init = n_init
        self.n_inducing = n_inducing
        self.random_state = random_state
        self.verbose = verbose

    def _feature_maps(self, n_distinct):
        """The ``n_centers`` values searched (``_parameter_constraints`` checked the
        parameter's type; here the entries of a sequence), each capped at the
        ``n_distinct`` distinct training rows (repeats after the cap searched once)."""
        maps = list(self.n_centers) if _is_sequence(self.n_centers) else [self.n_centers]
        if not maps:
            raise ValueError("n_centers must not be an empty sequence")
        for m in maps:
            if m is None:
                continue
            if not isinstance(m, Integral) or isinstance(m, bool) or m < 1:
                raise ValueError(f"n_centers entries must be ints >= 1 or None, got {m!r}")
        if len(set(maps)) < len(maps):
            raise ValueError(f"n_centers has repeated entries: {list(maps)}")
        return list(dict.fromkeys(m if m is None else min(int(m), n_distinct) for m in maps))

    def _map(self, X):
        if self.centers_ is None:
            return X
        return rbf_kernel(X, self.centers_, self.sigma_)

    def _candidate_maps(self, X, maps, sample_weight):
        """``(n_centers, centres, sigma)`` of every feature map searched: per ``n_centers``
        value of ``maps`` (None: the identity, ``(None, None, None)``) its k-means centres
        (the rows weighted by ``sample_weight``) once, with every feature-map width."""
        sigmas = _grid(self.sigma, "sigma")
        if sigmas is None and any(m is not None for m in maps):
            sigmas = [DEFAULT_SIGMA_FACTOR * median_sigma(X, sample_weight=sample_weight)]
        # k-means on X / u, u a power of two (exact): any scale of X gives the same centres
        # relative to it, where the squared distances of X itself would under- or overflow
        u = unit_of(X)
        Xu = X * (1.0 / u)
        candidates = []
        for m in maps:
            if m is None:
                candidates.append((None, None, None))
                continue
            km = KMeans(
                n_clusters=m,
                n_init=self.n_init,
                random_state=check_random_state(
                    0 if self.random_state is None else self.random_state
                ),
            ).fit(Xu, sample_weight=sample_weight)
            candidates += [(m, km.cluster_centers_ * u, sig) for sig in sigmas]
        return candidates

    def _inducing_rows(self, distinct_inputs):
        """The inducing inputs' positions among the fit's rows (None: the full model): the
        first copies ``distinct_inputs`` of the distinct inputs, all of them when
        ``n_inducing`` is at least their number, else ``n_inducing`` drawn uniformly
        without replacement (seeded by ``random_state``, None as 0), in the rows' order."""
        if self.n_inducing is None:
            return None
        if self.n_inducing >= distinct_inputs.size:
            return distinct_inputs
        rng = check_random_state(0 if self.random_state is None else self.random_state)
        return np.sort(rng.choice(distinct_inputs, self.n_inducing, replace=False))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the feature map (Eq. (1)-(2)), choose the covariance hyper-parameters by the
        approximate log marginal likelihood, infer the posterior (Laplace, Eq. (3), or
        EP, Eq. (7)); with more than two classes one such model per class against the rest.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Dense, CSR or CSC.
        y : array-like of shape (n_samples,)
            Two or more classes (among the rows of positive weight).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the rows' likelihood terms (None: all one; see
            Notes): an integer weight fits as that many copies of the row, a zero weight
            as no row.

        Returns
        -------
        self : ManifoldGPC
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, dtype=float, accept_sparse=("csr", "csc"))
        sw = _check_sample_weight(sample_weight, X, ensure_non_negative=True)
        if self.inference == "ep" and np.any((sw > 0) & (sw < 1)):
            raise ValueError(
                "inference='ep' needs every positive sample_weight >= 1 (a row of weight w "
                "holds w copies of its site, each cavity removing one); got "
                f"{sw[sw > 0].min():.3g}: scale the weights up or use inference='laplace'"
            )
        check_classification_targets(y)
        self.classes_, y_kept = class_labels(y[sw > 0], "ManifoldGPC")
        if self.classes_.size > 2:  # one against the rest, as GaussianProcessClassifier
            self.estimators_ = [
                clone(self).fit(X, (y == c).astype(int), sample_weight=sw) for c in self.classes_
            ]
            self.log_marginal_likelihood_ = np.array(
                [e.log_marginal_likelihood_ for e in self.estimators_]
            )
            self.n_iter_ = np.array([e.n_iter_ for e in self.estimators_])
            return self
        y_idx = np.zeros(len(y), dtype=int)
        y_idx[sw > 0] = y_kept
        # the distinct (x, y) pairs of positive weight, each weighing its copies' sum
        rows, _, weight = distinct_rows(X, y_idx, sw)
        X, y_idx = X[rows], y_idx[rows]
        distinct_inputs = distinct_rows(X, np.zeros(len(rows), dtype=int))[0]
        maps = self._feature_maps(distinct_inputs.size)
        ls_fixed = _grid(self.length_scale, "length_scale")
        amp_grid = _grid(self.amplitude, "amplitude")
        if amp_grid is None:
            amp_grid = np.asarray(DEFAULT_AMPLITUDES)
        factors = None
        if ls_fixed is None:
            factors = _grid(self.length_scale_factors, "length_scale_factors")
            if factors is None:
                raise ValueError("length_scale_factors must not be None")
        y_pm = 2.0 * y_idx - 1.0
        # unit weights are no weights: the same arithmetic as an unweighted fit
        weight = None if np.all(weight == 1) else weight

        candidates = self._candidate_maps(X, maps, weight)
        # drawn after k-means: a RandomState instance gives k-means the full model's state
        inducing = self._inducing_rows(distinct_inputs)
        # the default amplitudes are walked at every other value, then bisected
        stride = 2 if self.amplitude is None else 1
        progress = SearchProgress("ManifoldGPC", self.verbose)
        progress(
            f"{X.shape[0]} rows, {len(candidates)} feature map(s), {self.inference}"
            + ("" if inducing is None else f", {inducing.size} inducing inputs (FITC)")
        )
        walk = EvidenceWalk(
            self.inference,
            self.max_iter,
            self.tol,
            self.search_tol,
            progress,
            weight,
            inducing,
        )
        best, self.hyperparameter_scores_ = walk.run(
            X, candidates, ls_fixed, factors, amp_grid, stride, y_pm
        )
        progress(
            f"chose map {best.map_index + 1}, length scale {best.length_scale:.4g}, "
            f"amplitude {best.amplitude:.4g} (log evidence {best.score:.6g})"
        )
        r = best.result
        self.alpha_, self.sqrt_w_ = best.alpha, best.sqrt_w
        self.n_inducing_ = None if inducing is None else int(inducing.size)
        self.inducing_rows_ = None if inducing is None else rows[inducing]
        self.projection_ = None
        if inducing is not None:  # the predictive mean and variance through the m inducing inputs
            self.alpha_ = best.R.inducing_weights(best.alpha)
            self.projection_ = best.R.P / np.sqrt(best.amplitude)
        self.n_centers_, self.centers_, sig = candidates[best.map_index]
        self.sigma_ = None if sig is None else float(sig)
        self.length_scale_ = float(best.length_scale)
        self.amplitude_ = float(best.amplitude)
        self.L_ = r["L"]
        self.log_marginal_likelihood_ = r["log_marginal_likelihood"]
        self.n_iter_ = r["n_iter"]
        self.Z_train_ = best.Z
        self.train_rows_ = rows
        if not r["converged"]:
            warnings.warn(
                f"{self.inference} inference did not converge in max_iter={self.max_iter} "
                "iterations",
                ConvergenceWarning,
                stacklevel=2,
            )
        return self

    def predict_latent(self, X, return_var=False):
        """Predictive mean (Eq. (5) or Sec. 3.4) and variance (Eq. (6)) of the latent ``M(psi(x))``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
        return_var : bool, default=False

        Returns
        -------
        mean : ndarray of shape (n_samples,), or (n_samples, n_classes) for several
            classes (one model per class against the rest)
        var : ndarray of the same shape, only if ``return_var``
        """
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            out = [e.predict_latent(X, return_var) for e in self.estimators_]
            if not return_var:
                return np.column_stack(out)
            return np.column_stack([o[0] for o in out]), np.column_stack([o[1] for o in out])
        X = validate_data(self, X, dtype=float, reset=False, accept_sparse=("csr", "csc"))
        Ks = covariance(self.Z_train_, self._map(X), self.length_scale_, self.amplitude_)
        mean = Ks.T @ self.alpha_
        if not return_var:
            return mean
        if self.projection_ is None:
            v = solve_triangular(self.L_, self.sqrt_w_[:, None] * Ks, lower=True)
            var = self.amplitude_ - np.einsum("ij,ij->j", v, v)
        else:  # FITC: k_** - q_** + t' A^-1 t, t = P' k_u* / sqrt(amplitude)
            t = self.projection_.T @ Ks
            v = solve_triangular(self.L_, t, lower=True)
            var = self.amplitude_ - np.einsum("ij,ij->j", t, t) + np.einsum("ij,ij->j", v, v)
        return mean, np.maximum(var, 0.0)

    def _binary_proba(self, X):
        """``(p, z)``: the predictive probability of ``classes_[1]`` and the moderated mean
        ``z`` (probit scale) that breaks its ties at 0 and 1."""
        mean, var = self.predict_latent(X, return_var=True)
        if self.inference == "laplace":
            p = logistic_gaussian_integral(mean, var)
            z = mean / np.sqrt(1.0 + np.pi / 8.0 * var)  # MacKay's moderated logit
        else:
            z = mean / np.sqrt(1.0 + var)
            p = ndtr(z)
        return np.clip(p, 0.0, 1.0), z

    def _proba_and_margin(self, X):
        """``(P, margin)``: :meth:`predict_proba` and each column's tie-break."""
        check_is_fitted(self)
        if hasattr(self, "estimators_"):
            parts = [e._binary_proba(X) for e in self.estimators_]
            P = np.column_stack([p for p, _ in parts])
            total = P.sum(axis=1, keepdims=True)
            P = np.divide(P, total, out=np.full_like(P, 1.0 / P.shape[1]), where=total > 0)
            return P, np.column_stack([z for _, z in parts])
        p, z = self._binary_proba(X)
        return np.column_stack([1.0 - p, p]), z

    def decision_function(self, X):
        """The log-odds of :meth:`predict_proba`, its ties at 0 and 1 broken by the
        moderated latent mean.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: ``log(p / (1 - p))`` of the predictive probability ``p`` of
            ``classes_[1]`` (positive means ``classes_[1]``), a strictly increasing
            function of it; where ``p`` rounds to exactly 0 or 1, ``-+746 + z / (1 + |z|)``
            with the moderated latent mean ``z`` (``mu / sqrt(1 + s2)`` for MEP, the
            probability's own argument; ``mu / sqrt(1 + pi s2 / 8)`` for MLA), beyond
            every other score and ordered by ``z`` (the library's ranked log-odds).
            (The latent mean ``mu`` alone ranks rows otherwise: the probability also
            depends on the variance ``s2``; :meth:`predict_latent` returns both.)  More
            classes: per class, the same of its column of :meth:`predict_proba` (the
            normalised one-against-rest probabilities), ``z`` from its own model.
        """
        P, z = self._proba_and_margin(X)
        if P.shape[1] == 2 and not hasattr(self, "estimators_"):
            return ranked_log_odds(P[:, 1], z)
        return ranked_log_odds(P, z)

    def predict_proba(self, X):
        """Predictive class probabilities.

        MLA: ``int sigma(M) N(M | mu, s2) dM`` with the erf-mixture sigmoid (Sec. 3.3,
        mean and variance Eq. (5)-(6)); MEP: ``Phi(mu / sqrt(1 + s2))``, Eq. (8).  More
        than two classes: each class's probability against the rest, normalised to sum to
        one (scikit-learn's ``GaussianProcessClassifier`` and ``OneVsRestClassifier`` alike;
        uniform where every one is 0).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        return self._proba_and_margin(X)[0]

    def predict(self, X):
        """Class labels: the largest column of :meth:`predict_proba`.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,)
            Labels from ``classes_`` (for two classes ``classes_[1]`` where its probability
            exceeds 1/2; the first of tied ones).
        """
        check_is_fitted(self)
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
