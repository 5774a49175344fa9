"""Pairwise coupling of binary probabilistic classifiers (Hastie & Tibshirani, 1998).

Roth, "Probabilistic discriminative kernel classifiers for multi-class problems"
(DAGM 2001), Section 3, Eq. (10)-(11) and the iteration after them; equation numbers
below refer to that paper.
"""

from __future__ import annotations

from itertools import combinations
from numbers import Integral

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils import get_tags
from sklearn.utils._param_validation import HasMethods, Interval
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, has_fit_parameter

from ._array_api import (
    compute_dtype,
    device,
    from_numpy,
    get_namespace,
    input_namespace,
    same_namespace,
    to_numpy,
)
from ._base import CERTAIN_LOG_ODDS, ArgmaxPredictMixin, LogProbaMixin, log_odds
from ._newton import NewtonProblem, newton
from ._validation import POSITIVE, check_precomputed, class_labels, validate_data, warn_convergence

# r_ij is kept inside [R_EPS, 1 - R_EPS] so that mu_ij, p_i never hit 0/0.
R_EPS = 1e-15
#: the Newton steps' damping, relative to a class's largest curvature (CouplingProblem)
DAMPING = 1e-12


def _iterate(P, target, W, tol, max_iter):
    """The iteration after Eq. (11), cyclic over the classes, on rows not yet converged."""
    c = P.shape[1]
    active = np.arange(P.shape[0])
    n_iter = 0
    while active.size and n_iter < max_iter:
        n_iter += 1
        Pa, Ta = P[active], target[active]
        P_old = Pa.copy()
        for i in range(c):
            mu = Pa[:, [i]] / (Pa[:, [i]] + Pa)  # mu_ij for all j (j = i: weight 0)
            Pa[:, i] *= Ta[:, i] / (mu @ W[i])
            Pa /= Pa.sum(axis=1, keepdims=True)
        P[active] = Pa
        # rows whose probabilities all moved by at most tol are done
        active = active[np.max(np.abs(Pa - P_old), axis=1) > tol]
    return P, n_iter, active.size


def _pair_selectors(c):
    """``(first, second)``: the 0/1 matrices (n_pairs, c) selecting each pair's ``i`` and
    ``j`` (pairs ``i < j`` in ``np.triu_indices`` order), NumPy."""
    iu, ju = np.triu_indices(c, k=1)
    first, second = np.zeros((iu.size, c)), np.zeros((iu.size, c))
    first[np.arange(iu.size), iu] = 1.0
    second[np.arange(iu.size), ju] = 1.0
    return first, second


def _sigmoid(xp, D):
    """``1 / (1 + exp(-D))`` without overflow (NumPy: scipy's ``expit``; otherwise ``exp``
    of ``-|D|`` only)."""
    if xp is np:
        return expit(D)
    e = xp.exp(-xp.abs(D))
    return xp.where(D >= 0, 1.0 / (1.0 + e), e / (1.0 + e))


def _softplus(xp, D):
    """``log(1 + exp(D))`` without overflow."""
    return xp.log1p(xp.exp(-xp.abs(D))) + xp.clip(D, 0.0, None)


def _softmax(xp, Z):
    """Rows of ``exp(Z)`` normalised to sum to one."""
    E = xp.exp(Z - xp.max(Z, axis=1, keepdims=True))
    return E / xp.sum(E, axis=1, keepdims=True)


def _kl_terms(xp, D, rest, w):
    """Eq. (10) up to its constant, with ``mu_ij = sigmoid(z_i - z_j)``, per row.

    With ``d = z_i - z_j``, ``-log sigmoid(d) = softplus(-d)`` and ``-log sigmoid(-d) =
    softplus(-d) + d``, so the terms of ``(i, j)`` and ``(j, i)`` are equal and the sum
    runs over the pairs ``i < j`` only:
    ``sum_{i<j} n_ij softplus(-d_ij) + sum_{i<j} n_ij (1 - r_ij) d_ij``, ``D`` (n, n_pairs)
    the ``d_ij`` of those pairs, ``w`` (n_pairs,) their ``n_ij`` and ``rest`` their ``n_ij
    (1 - r_ij)``."""
    return _softplus(xp, -D) @ w + xp.sum(rest * D, axis=1)


class CouplingProblem(NewtonProblem):
    """Eq. (10) for :func:`kclf._newton.newton`, the library's one Newton loop: one row
    (test point) per column, its parameters ``z = log p`` (c of them, shape (c, n)).
    ``mu_ij = sigmoid(z_i - z_j)`` makes the divergence convex in ``z`` (a Bradley-Terry
    likelihood), with gradient ``g_i = sum_j n_ij (mu_ij - r_ij)`` (zero exactly when
    Eq. 11 holds) and a weighted graph-Laplacian Hessian; its null direction (adding a
    constant to ``z``) is fixed by adding ``1 1^T / c``, so a step keeps the mean of
    ``z``.  The objective is minus the divergence less ``OFFSET`` (Eq. 10 holds it up to a
    constant): the loop's ascent test, a relative 1e-12, then allows the absolute
    round-off of 1e-10 of the divergence's terms, which cancel where some ``r_ij`` is
    near 0 or 1.  A row is done when none of its probabilities moved by more than ``tol``
    in a full Newton step (:meth:`converged`).  The Hessian's diagonal is damped by
    ``DAMPING`` of each class's largest curvature and a step is capped at ``MAX_STEP`` in
    any ``z``: from a start where a class's probability is e^-300 of the others' (a
    neighbouring lambda's coupling) its curvature has all but vanished, and the undamped
    step was huge and of either sign.  Every array is of the namespace ``xp``.

    Only the pairs ``i < j`` are computed (``mu_ji = 1 - mu_ij``): the gradient is the
    pairs' terms ``a_p = n_ij (mu_ij - r_ij)`` added to ``g_i`` and taken from ``g_j``
    (a product with the pairs' incidence matrix), the Hessian the Laplacian of the
    weights ``h_p = n_ij mu_ij (1 - mu_ij)``.

    No exponential or logarithm per pair but one per row and class where it can be
    avoided: with ``q = exp(z - max z)`` (a row's largest is 1), ``mu_ij = q_i / (q_i +
    q_j)``, ``1 - mu_ij = q_j / (q_i + q_j)`` and the divergence's ``-log mu_ij = log(q_i
    + q_j) - log q_i``, so the objective takes one logarithm per pair and the step none
    (the pairs' sums ``q_i + q_j`` by one product with a 0/1 matrix: exact sums).  Rows
    where some ``q`` underflows (a class ``exp(-700)`` below the row's most probable)
    are computed from ``d_ij = z_i - z_j`` instead (:meth:`_by_differences`)."""

    #: the divergence's constant (see the class docstring)
    OFFSET = 100.0
    #: the largest change of any ``z = log p`` in one step (a factor of e^30 = 1e13)
    MAX_STEP = 30.0
    #: below this ``z - max z`` a row is computed from the differences (``exp`` of it is
    #: still a normal number, far from underflow to 0 or subnormals)
    FLOOR = -700.0

    def __init__(self, xp, r_u, w_u, c):
        self.xp, self.r_u, self.w_u, self.c = xp, r_u, w_u, c
        self.rest = (1.0 - r_u) * w_u
        iu, ju = np.triu_indices(c, k=1)
        n_pairs = iu.size
        dev = device(r_u)
        first, second = _pair_selectors(c)
        incidence = first - second
        self.incidence = from_numpy(incidence, xp, dev)
        # products with these 0/1 and +-1 matrices give the pairs' q_i, q_j, q_i + q_j and
        # z_i - z_j with the same floating-point values as the sums and differences
        # (every other term is an exact 0)
        self.first_t = from_numpy(np.ascontiguousarray(first.T), xp, dev)
        self.second_t = from_numpy(np.ascontiguousarray(second.T), xp, dev)
        self.pair_sum_t = from_numpy(np.ascontiguousarray((first + second).T), xp, dev)
        self.incidence_t = from_numpy(np.ascontiguousarray(incidence.T), xp, dev)
        self.abs_incidence = xp.abs(self.incidence)
        # sum_p w_p log q_i(p) = (z - max z) @ w_first; sum_p rest_p (z_i - z_j) = the
        # row's z . rest_by_class (the rows of rest_by_class sum to 0)
        self.w_first = w_u @ from_numpy(first, xp, dev)
        self.rest_by_class = self.rest @ self.incidence
        # Levenberg-Marquardt damping of the Hessian's diagonal, DAMPING of each class's
        # largest curvature sum_j n_ij / 4: below round-off where the curvature is not
        # small; where a class's has all but vanished (its probability e^-300 of the
        # others', say) the solve would return a step of either sign, and it is g_i over
        # the damping instead, an ascent
        self.damping = DAMPING / 4.0 * (w_u @ self.abs_incidence)
        # the (c, c) Laplacian of pair weights h (n, n_pairs): one gather from the table
        # [-h, degrees] (the array API has no scatter): off-diagonal (i, j) and (j, i)
        # read -h_p, the diagonal (i, i) the degree of i
        source = np.empty((c, c), dtype=np.int64)
        source[iu, ju] = source[ju, iu] = np.arange(n_pairs)
        source[np.arange(c), np.arange(c)] = n_pairs + np.arange(c)
        self.laplacian_source = from_numpy(source.reshape(-1), xp, dev)
        self.before = None

    def _rows(self, a, cols):
        """The rows ``cols`` of ``a`` (no copy where they are all of them)."""
        return a if cols.shape[0] == a.shape[0] else self.xp.take(a, cols, axis=0)

    def _scaled(self, x):
        """``(Zs, q, extreme)``: the rows' ``z - max z``, ``q = exp`` of it, and whether
        any row has a ``z - max z`` below ``FLOOR``."""
        xp = self.xp
        Z = x.T
        Zs = Z - xp.max(Z, axis=1, keepdims=True)
        return Zs, xp.exp(Zs), bool(xp.any(Zs < self.FLOOR))

    def objective(self, x, z, cols):
        xp = self.xp
        Zs, q, extreme = self._scaled(x)
        if extreme:
            return self._by_differences(x, cols)[0]
        kl = (
            xp.log(q @ self.pair_sum_t) @ self.w_u
            - Zs @ self.w_first
            + xp.sum(Zs * self._rows(self.rest_by_class, cols), axis=1)
        )
        return -kl - self.OFFSET

    def direction(self, x, z, cols):
        xp, c = self.xp, self.c
        Zs, q, extreme = self._scaled(x)
        if extreme:
            _, Mu, Mu_rest = self._by_differences(x, cols)
        else:
            q_i, q_j = q @ self.first_t, q @ self.second_t
            S = q_i + q_j
            Mu, Mu_rest = q_i / S, q_j / S
        G = (self.w_u * (Mu - self._rows(self.r_u, cols))) @ self.incidence
        h = self.w_u * (Mu * Mu_rest)
        degrees = h @ self.abs_incidence + self.damping
        table = xp.concat([-h, degrees], axis=1) + 1.0 / c
        H = xp.reshape(xp.take(table, self.laplacian_source, axis=1), (Zs.shape[0], c, c))
        step = xp.linalg.solve(H, G[:, :, None])[:, :, 0]
        # where some pairs' curvature mu (1 - mu) has all but vanished the step is huge
        # (its direction kept by the damping): at most MAX_STEP in any z
        size = xp.max(xp.abs(step), axis=1)
        self.capped = size > self.MAX_STEP
        step = step * xp.where(self.capped, self.MAX_STEP / xp.clip(size, 1.0, None), 1.0)[:, None]
        self.before = q / xp.sum(q, axis=1, keepdims=True)
        self.full = x - step.T
        return -step.T, -step.T

    def _by_differences(self, x, cols):
        """``(objective, mu, 1 - mu)`` from the pairs' ``d_ij = z_i - z_j`` (exact where
        some ``q`` would underflow, one ``exp`` and ``log1p`` per pair)."""
        xp = self.xp
        D = x.T @ self.incidence_t
        objective = -_kl_terms(xp, D, self._rows(self.rest, cols), self.w_u) - self.OFFSET
        return objective, _sigmoid(xp, D), _sigmoid(xp, -D)

    def converged(self, old, new, x, z, cols, tol):
        """A full Newton step (neither capped nor halved by the loop) that moved no
        probability by more than ``tol``: a shortened step can leave every probability
        in place while the row is far from the minimiser (a start where the classes
        that should share the mass have probabilities of 1e-200)."""
        xp = self.xp
        moved = xp.max(xp.abs(_softmax(xp, x.T) - self.before), axis=1)
        return (moved <= tol) & ~self.capped & xp.all(x == self.full, axis=0)


def _newton(P, r_u, w_u, tol, max_iter):
    """Newton's method on Eq. (10) in ``z = log p`` (:class:`CouplingProblem`) from ``P``
    (``r_u``: (n, n_pairs) the pairs' ``r_ij``, ``w_u``: their ``n_ij``, pairs ``i < j``
    in ``np.triu_indices`` order); ``(P, n_iter, n_left)``, the steps of the slowest row
    and the rows not converged.  The rows are independent problems: NumPy's are solved
    in blocks of :func:`block_rows` rows, whose (rows, n_pairs) temporaries stay in the
    CPU's cache and are reused by the allocator (all rows at once made every step's
    temporaries fresh pages of memory, 1.6x slower on letter's 8,000 rows and 26
    classes); other namespaces' (a GPU's) all at once."""
    xp, _ = get_namespace(P)
    n = P.shape[0]
    step = block_rows(r_u.shape[1]) if xp is np else n
    parts, n_iter, n_left = [], 0, 0
    for a in range(0, n, step):
        Z = xp.log(P[a : a + step, ...]).T
        problem = CouplingProblem(xp, r_u[a : a + step, ...], w_u, P.shape[1])
        r = newton(problem, Z, Z, tol=tol, max_iter=max_iter, max_halvings=40)
        parts.append(_softmax(xp, r.x.T))
        n_iter = max(n_iter, int(xp.max(r.n_iter)))
        n_left += int(xp.sum(xp.astype(~r.converged, xp.int64)))
    return (parts[0] if len(parts) == 1 else xp.concat(parts, axis=0)), n_iter, n_left


#: entries of a (rows, n_pairs) array of one block of :func:`_newton` (2 MiB of float64)
BLOCK_ENTRIES = 2**18


def block_rows(n_pairs):
    """The rows of one block of :func:`_newton` for ``n_pairs`` pairs."""
    return max(1, BLOCK_ENTRIES // n_pairs)


def _start(xp, r_u, w_u, c):
    """Hastie and Tibshirani's start, ``p_i`` proportional to ``sum_j n_ij r_ij``."""
    first, second = _pair_selectors(c)
    dev = device(r_u)
    target = (w_u * r_u) @ from_numpy(first, xp, dev) + (w_u * (1.0 - r_u)) @ from_numpy(
        second, xp, dev
    )
    return target / xp.sum(target, axis=1, keepdims=True)


def couple_pairs(r, N, tol=1e-10, max_iter=1000, start=None):
    """:func:`couple` by Newton's method from the pairs' probabilities ``r`` (n, n_pairs),
    the pairs ``i < j`` in ``np.triu_indices`` order, and the (c, c) pair weights ``N``
    (private: the searches' entry, with no (n, c, c) arrays and no checks).  ``start``:
    positive (n, c) probabilities to start from (a neighbouring lambda's coupling on a
    search's path; the minimiser is unique, so only the number of steps changes), None:
    Hastie and Tibshirani's start."""
    xp, _ = get_namespace(r)
    c = N.shape[0]
    iu, ju = np.triu_indices(c, k=1)
    w_u = from_numpy(np.asarray(N, dtype=float)[iu, ju], xp, device(r))
    r_u = xp.clip(r, R_EPS, 1.0 - R_EPS)
    return _couple(xp, r_u, w_u, c, tol, max_iter, "newton", start)[0]


def _couple(xp, r_u, w_u, c, tol, max_iter, method, start=None):
    """``(P, n_iter)`` of :func:`couple` from the clipped ``r_ij`` and the weights ``n_ij``
    of the pairs ``i < j`` (``start``: None, Hastie and Tibshirani's), with the warning on
    rows not converged."""
    P = _start(xp, r_u, w_u, c) if start is None else start
    if P.shape[0] == 0:
        return P, 0
    if method == "iteration":
        iu, ju = np.triu_indices(c, k=1)
        W = np.zeros((c, c))
        W[iu, ju] = W[ju, iu] = w_u
        full = antisymmetric(xp, r_u, c, 0.0)
        P, n_iter, n_left = _iterate(P, np.sum(W * full, axis=2), W, tol, max_iter)
    else:
        P, n_iter, n_left = _newton(P, r_u, w_u, tol, max_iter)
    if n_left:
        _warn_left(n_left, P.shape[0], tol, max_iter, method)
    return P, n_iter


def _warn_left(n_left, n, tol, max_iter, method):
    warn_convergence(
        f"couple: {n_left} of {n} rows still moved by more than tol={tol:g} "
        f"after max_iter={max_iter} sweeps ({method!r}); their probabilities are the "
        "last iterate"
    )


def antisymmetric(xp, r, c, diagonal):
    """The (n, c, c) array of the pairs' ``r_ij`` (``r``: (n, n_pairs), the pairs ``i <
    j`` in ``np.triu_indices`` order) above the diagonal, ``1 - r_ij`` below it and
    ``diagonal`` on it, by one gather (the array API has no fancy assignment)."""
    n, n_pairs = r.shape
    source = np.full((c, c), 2 * n_pairs)
    iu, ju = np.triu_indices(c, k=1)
    source[iu, ju] = np.arange(n_pairs)
    source[ju, iu] = n_pairs + np.arange(n_pairs)
    fill = xp.full((n, 1), diagonal, dtype=r.dtype, device=device(r))
    table = xp.concat([r, 1.0 - r, fill], axis=1)
    gathered = xp.take(table, from_numpy(source.reshape(-1), xp, device(r)), axis=1)
    return xp.reshape(gathered, (n, c, c))


def couple(R, N=None, tol=1e-10, max_iter=1000, method="newton", return_n_iter=False):
    """Couple pairwise probabilities ``r_ij = P(i | i or j)`` into class probabilities.

    Minimises the weighted Kullback-Leibler divergence of Eq. (10) over the simplex by the
    iteration after Eq. (11) (each update renormalised and ``mu`` recomputed), started
    from ``p_i`` proportional to ``sum_j n_ij r_ij``.
    The classes are updated one at a time (a cyclic sweep), the order for which the
    iteration is proven to converge (Hunter 2004; Wu, Lin & Weng 2004); at its fixed
    point the score equations (11) hold.

    Parameters
    ----------
    R : array-like of shape (c, c) or (n_samples, c, c)
        ``R[..., i, j] = r_ij`` for ``i != j``; only the upper triangle ``i < j`` is read,
        ``r_ji = 1 - r_ij`` is implied.  The diagonal is ignored.
    N : array-like of shape (c, c) or None
        Pair weights ``n_ij`` (training samples of the pair); ``None``: all equal, as in
        Eq. (10)-(11).  Symmetric, only ``i < j`` is read.
    tol : float
        A row is done when none of its probabilities changes by more than ``tol`` in a
        sweep (``"newton"``: in a full Newton step, not shortened by a step halving).
    max_iter : int
        Maximum number of sweeps.
    method : {"newton", "iteration"}, default="newton"
        ``"iteration"``: the paper's iteration above (linear convergence, slow where
        some ``p_i -> 0``).  ``"newton"``: Newton's method on the same divergence (see
        :func:`_newton`), quadratic convergence to the same minimiser.
    return_n_iter : bool
        Also return the number of sweeps done (of the slowest row).
        A ``ConvergenceWarning`` names the rows still moving after ``max_iter`` sweeps.

    Returns
    -------
    P : ndarray of shape (c,) or (n_samples, c)
        Non-negative rows summing to one.
    """
    xp, is_xp = get_namespace(R)
    R = xp.asarray(R, dtype=xp.float64) if is_xp else np.asarray(R, dtype=float)
    single = R.ndim == 2
    if single:
        R = R[None, ...]
    if R.ndim != 3 or R.shape[1] != R.shape[2] or R.shape[1] < 2:
        raise ValueError(f"R must have shape (c, c) or (n, c, c) with c >= 2, got {tuple(R.shape)}")
    c = R.shape[1]
    iu = np.triu_indices(c, k=1)
    dev = device(R)
    r = xp.take(xp.reshape(R, (R.shape[0], c * c)), from_numpy(iu[0] * c + iu[1], xp, dev), axis=1)
    if not bool(xp.all(xp.isfinite(r))) or bool(xp.any((r < 0) | (r > 1))):
        raise ValueError("R must hold probabilities in [0, 1] above the diagonal")
    r = xp.clip(r, R_EPS, 1.0 - R_EPS)
    if N is None:
        W = np.ones((c, c))
    else:
        N = to_numpy(N) if is_xp else np.asarray(N, dtype=float)
        if N.shape != (c, c):
            raise ValueError(f"N must have shape ({c}, {c}), got {N.shape}")
        if np.any(N[iu] <= 0) or not np.all(np.isfinite(N[iu])):
            raise ValueError("N must hold positive finite pair weights above the diagonal")
        W = np.zeros((c, c))
        W[iu] = N[iu]
        W = W + W.T
    np.fill_diagonal(W, 0.0)
    w_u = from_numpy(W[iu], xp, dev)
    if method not in ("newton", "iteration"):
        raise ValueError(f"method must be 'newton' or 'iteration', got {method!r}")
    if is_xp and method == "iteration":
        raise ValueError("couple: method='iteration' is NumPy only (array API inputs: 'newton')")
    P, n_iter = _couple(xp, r, w_u, c, tol, max_iter, method)
    if single:
        P = P[0, ...]
    return (P, n_iter) if return_n_iter else P


def _rows(xp, X, idx, pairwise):
    """The rows ``idx`` of ``X`` (and its columns ``idx`` for a precomputed kernel)."""
    if xp is np:
        return X[np.ix_(idx, idx)] if pairwise else X[idx]
    X = xp.take(X, idx, axis=0)
    return xp.take(X, idx, axis=1) if pairwise else X


def fit_each_pair(estimator, X, yi, pairs, pair_index, sample_weight=None):
    """One ``clone(estimator).fit`` per pair ``(i, j)`` of ``pairs`` on its rows
    ``pair_index`` (and their columns for a precomputed kernel), label 1 <=> class ``i``
    (so ``r_ij`` is the probability of label 1), with the rows' ``sample_weight``; the
    rows, labels and weights in ``X``'s namespace and on its device (``yi``, ``pairs``,
    ``pair_index`` and ``sample_weight`` are NumPy)."""
    xp, is_xp = get_namespace(X)
    move = (lambda a: from_numpy(a, xp, device(X))) if is_xp else (lambda a: a)
    pairwise = _pairwise_input(estimator)
    fitted = []
    for (i, _), idx in zip(pairs, pair_index):
        w = {} if sample_weight is None else {"sample_weight": move(sample_weight[idx])}
        y = move((yi[idx] == i).astype(int))
        fitted.append(clone(estimator).fit(_rows(xp, X, move(idx), pairwise), y, **w))
    return fitted


def _pairwise_input(estimator):
    return get_tags(estimator).input_tags.pairwise


def _sparse_input(estimator):
    """What ``validate_data`` accepts: CSR / CSC where the estimator's tags say sparse."""
    return ("csr", "csc") if get_tags(estimator).input_tags.sparse else False


class PairBatching:
    """The interface of a binary estimator that fits all pairs of :class:`PairwiseCoupling`
    at once (private; :class:`kclf.KernelLogisticRegression` implements it).

    :class:`PairwiseCoupling` fits one clone of its estimator per pair of classes.  If
    the estimator derives from this class, ``fit`` first calls ``_fit_pairs`` on a clone
    and predicts with ``_pairs_decision``; an implementation may decline either (return
    None), and the pair-by-pair loop runs instead.  The defaults decline both.
    """

    def _fit_pairs(self, X, yi, pairs, pair_index, sample_weight=None):
        """Fit every pair; called on a fresh clone of the coupling's estimator.

        Parameters
        ----------
        X : ndarray of shape (n_samples, n_features), or (n_samples, n_samples)
            All training inputs (the Gram matrix for a precomputed kernel).
        yi : ndarray of shape (n_samples,)
            Class indices into ``PairwiseCoupling.classes_``.
        pairs : ndarray of shape (n_pairs, 2)
            Class indices ``(i, j)``, ``i < j``.
        pair_index : list of ndarray
            Training rows of each pair.
        sample_weight : ndarray of shape (n_samples,) or None
            Row weights (each pair's fit takes its rows' weights).

        Returns
        -------
        estimators : list of fitted estimators or None
            One per pair, equal (up to round-off) to ``clone(self).fit`` on the pair's
            rows with label 1 <=> class ``i`` (and their weights), or, for a model of a
            shared basis (KLR's ``n_components``), that fit in the basis drawn from all
            rows; None: fit them one by one.
        """
        return None

    @classmethod
    def _pairs_decision(cls, estimators, X_train, X, pair_index):
        """The pairs' log-odds ``f_p(x)``, ``r_ij(x) = sigmoid(f_p(x))``, all at once.

        Parameters
        ----------
        estimators : list of fitted estimators
            ``PairwiseCoupling.estimators_`` (as ``_fit_pairs`` returned them).
        X_train : ndarray of shape (n_train, n_features)
            A copy of the training inputs (``PairwiseCoupling.X_fit_``).
        X : ndarray of shape (n_samples, n_features)
            Test inputs.
        pair_index : list of ndarray
            Training rows of each pair.

        Returns
        -------
        F : ndarray of shape (n_samples, n_pairs) or None
            None: each estimator's ``predict_proba`` is used.
        """
        return None


class PairwiseCoupling(ArgmaxPredictMixin, LogProbaMixin, ClassifierMixin, BaseEstimator):
    """Multi-class classifier from ``c (c - 1) / 2`` binary probabilistic classifiers.

    One clone of ``estimator`` is fitted for every pair of classes ``i < j`` on the
    samples of those two classes only; at prediction its ``r_ij(x) = P(i | x, i or j)``
    are coupled by :func:`couple` with the pair sizes ``n_ij`` as weights (Hastie &
    Tibshirani's weighted form of Eq. (10)), giving a distribution over all classes for
    every row.  With a precomputed-kernel estimator (``pairwise`` input tag), ``X`` is
    the (n, n) Gram matrix at fit and (n_test, n_train) at prediction; rows and columns
    are restricted to the pair's samples.  With
    ``KernelLogisticRegression(n_components=m)`` the pairs share one Nystroem basis of m
    landmarks drawn from all training rows (its ``random_state``) and one design matrix
    per width, so a pair costs ``n_pair m`` per pass rather than a basis of its own.

    Parameters
    ----------
    estimator : classifier with ``predict_proba``
        Binary probabilistic base classifier, cloned for every pair.
    tol : float, default=1e-10
        Convergence tolerance of the coupling iteration (see :func:`couple`).
    max_iter : int, default=1000
        Maximum number of coupling sweeps.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    estimators_ : list of fitted estimators, one per pair in ``pairs_`` order
    pairs_ : ndarray of shape (n_pairs, 2)
        Class indices ``(i, j)``, ``i < j``.
    pair_counts_ : ndarray of shape (n_classes, n_classes)
        ``n_ij``, training samples of classes ``i`` and ``j`` (the sum of their weights
        with ``sample_weight``).
    pair_index_ : list of ndarray
        Training rows of each pair.
    n_train_ : int
        Number of training samples.
    converged_ : bool
        Whether every pair's fit converged (its ``converged_``; an estimator without
        that attribute counts as converged).
    n_iter_ : ndarray of shape (n_pairs,)
        The iterations of each pair's fit (the largest entry of its estimator's
        ``n_iter_``; 1 for an estimator without one).  ``max_iter`` bounds the coupling
        iteration, which runs at prediction, row by row (:func:`couple`).
    X_fit_ : ndarray or None
        Only for an estimator that fits all pairs at once (:class:`PairBatching`, as
        :class:`kclf.KernelLogisticRegression` does by stacked IRLS): a copy of the
        training inputs, from which the pairs' cross-kernels are cut at prediction
        (None for a precomputed kernel).

    **Array API.**  Under ``sklearn.config_context(array_api_dispatch=True)``, with an
    ``estimator`` whose tags declare ``array_api_support`` (so do this class's tags), the
    inputs' namespace and device (PyTorch, CuPy, ``array-api-strict``) are kept: the pairs
    are fitted there, the coupling (:func:`couple`, the library's one Newton loop) runs
    there, the fitted arrays stay there and the probabilities and scores are returned
    there.  Float32 inputs are fitted and coupled in float64 with a ``UserWarning``
    (:class:`kclf.KernelLogisticRegression`, "Array API"), the results returned in
    float32.  Another ``estimator`` is NumPy only (a warning says so).

    References
    ----------
    T. Hastie and R. Tibshirani, "Classification by pairwise coupling", NIPS 10, 1998.
    V. Roth, "Probabilistic discriminative kernel classifiers for multi-class
    problems", DAGM 2001, Eq. (10)-(11).
    """

    _parameter_constraints = {
        "estimator": [HasMethods(["fit", "predict_proba"])],
        "tol": [POSITIVE],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, estimator, *, tol=1e-10, max_iter=1000):
        self.estimator = estimator
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = _pairwise_input(self.estimator)
        tags.input_tags.sparse = get_tags(self.estimator).input_tags.sparse
        tags.array_api_support = get_tags(self.estimator).array_api_support
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y, sample_weight=None):
        """Fit one clone of ``estimator`` per pair of classes on that pair's samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples)
            The training inputs, or their Gram matrix for an estimator with the
            ``pairwise`` input tag (a precomputed kernel).
        y : array-like of shape (n_samples,)
            Class labels (at least two classes).
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative row weights: each pair's fit gets its rows' weights (the
            estimator's ``fit`` must take ``sample_weight``), and the pair weights
            ``n_ij`` of the coupling become the sums of the two classes' weights.

        Returns
        -------
        self : PairwiseCoupling
            The fitted estimator: one fitted clone per pair in ``estimators_``.
        """
        xp, is_xp = get_namespace(X)
        is_xp = is_xp and self.__sklearn_tags__().array_api_support
        xp = xp if is_xp else np
        if is_xp:  # the input's namespace and device (float32 fitted in float64)
            X, y = validate_data(self, X, y, dtype=[xp.float64, xp.float32])
            if _pairwise_input(self.estimator):
                check_precomputed(X)
            X = compute_dtype(self, xp, X)
        else:
            X, y = validate_data(
                self, X, y, dtype=np.float64, accept_sparse=_sparse_input(self.estimator)
            )
            if _pairwise_input(self.estimator):
                check_precomputed(X)
        pairwise = _pairwise_input(self.estimator)
        if sample_weight is not None:
            if not has_fit_parameter(self.estimator, "sample_weight"):
                raise ValueError(
                    f"sample_weight: {type(self.estimator).__name__}.fit takes no "
                    "sample_weight, so PairwiseCoupling cannot pass the pairs' weights on"
                )
            sample_weight = _check_sample_weight(
                to_numpy(sample_weight) if is_xp else sample_weight,
                np.empty((X.shape[0], 0)),
                dtype=np.float64,
                ensure_non_negative=True,
            )
        classes, yi = class_labels(to_numpy(y) if is_xp else y, "PairwiseCoupling")
        self.n_train_ = X.shape[0]
        c = classes.size
        counts = np.bincount(yi, weights=sample_weight, minlength=c)
        pairs = np.array(list(combinations(range(c), 2)))
        pair_counts = counts[:, None] + counts[None, :]
        np.fill_diagonal(pair_counts, 0)
        pair_index = [np.flatnonzero((yi == i) | (yi == j)) for i, j in pairs]
        weighted = {} if sample_weight is None else {"sample_weight": sample_weight}
        fitted = None
        if isinstance(self.estimator, PairBatching):
            fitted = clone(self.estimator)._fit_pairs(X, yi, pairs, pair_index, **weighted)
        if fitted is not None:
            self.estimators_ = fitted
            self.X_fit_ = None if pairwise else (xp.asarray(X, copy=True) if is_xp else X.copy())
        else:
            self.estimators_ = fit_each_pair(
                self.estimator, X, yi, pairs, pair_index, sample_weight
            )
        self.converged_ = all(bool(getattr(e, "converged_", True)) for e in self.estimators_)
        n_iter = [int(np.max(to_numpy(getattr(e, "n_iter_", 1)))) for e in self.estimators_]
        self.n_iter_ = np.array(n_iter, dtype=int)
        self.classes_, self.pairs_, self.pair_counts_ = classes, pairs, pair_counts
        self.pair_index_ = pair_index
        if is_xp:  # the fitted arrays in the input's namespace, on its device
            for name in ("classes_", "pairs_", "pair_counts_", "n_iter_"):
                setattr(self, name, from_numpy(getattr(self, name), xp, device(X)))
            self.pair_index_ = [from_numpy(idx, xp, device(X)) for idx in pair_index]
        return self

    def _pair_outputs(self, X):
        """``(R, F, dtype)``: :meth:`pairwise_proba`'s ``R``, the pairs' log-odds ``F``
        (n_samples, n_pairs), ``r_ij = sigmoid(F)``, where the estimator computes them
        (:class:`PairBatching`), else None, and the dtype to return (``X``'s floating
        dtype in an array API namespace, float64 on NumPy)."""
        check_is_fitted(self)
        fitted_xp = self.__sklearn_tags__().array_api_support
        xp, is_xp = input_namespace(self, X, "pair_counts_") if fitted_xp else (np, False)
        if is_xp:
            X = validate_data(self, X, dtype=[xp.float64, xp.float32], reset=False)
        else:
            X = validate_data(
                self, X, dtype=np.float64, reset=False, accept_sparse=_sparse_input(self.estimator)
            )
        pairwise = _pairwise_input(self.estimator)
        if pairwise:
            check_precomputed(X, n_train=self.n_train_)
        dtype = X.dtype
        c = self.classes_.shape[0]
        pairs = to_numpy(self.pairs_)
        if is_xp:  # every pair's r_ij (or f_ij) in the namespace, from its own estimator
            X = xp.astype(X, xp.float64)
            batching = isinstance(self.estimators_[0], PairBatching)
            columns = []
            for est, idx in zip(self.estimators_, self.pair_index_):
                Xp = xp.take(X, idx, axis=1) if pairwise else X
                if batching:
                    columns.append(est.decision_function(Xp))
                else:
                    one = list(to_numpy(est.classes_)).index(1)
                    columns.append(est.predict_proba(Xp)[:, one])
            out = xp.stack(columns, axis=1)
            F = out if batching else None
            r = _sigmoid(xp, F) if batching else out
            return antisymmetric(xp, r, c, 0.5), F, dtype
        R = np.full((X.shape[0], c, c), 0.5)
        F = None
        first = self.estimators_[0]
        if isinstance(first, PairBatching) and getattr(self, "X_fit_", None) is not None:
            F = type(first)._pairs_decision(self.estimators_, self.X_fit_, X, self.pair_index_)
        for p, ((i, j), est, idx) in enumerate(zip(pairs, self.estimators_, self.pair_index_)):
            if F is not None:
                r = expit(F[:, p])
            else:
                proba = est.predict_proba(X[:, idx] if pairwise else X)
                r = proba[:, list(est.classes_).index(1)]
            R[:, i, j] = r
            R[:, j, i] = 1.0 - r
        return R, F, dtype

    @same_namespace
    def pairwise_proba(self, X):
        """The pairs' probabilities ``r_ij(x) = P(i | x, i or j)`` of Eq. (10).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel for a precomputed-kernel estimator.

        Returns
        -------
        R : ndarray of shape (n_samples, n_classes, n_classes)
            ``R[n, i, j] = r_ij(x_n)`` for ``i < j``, ``1 - r_ij`` below the diagonal,
            1/2 on it.
        """
        R, _, dtype = self._pair_outputs(X)
        xp, _ = get_namespace(R)
        return xp.astype(R, dtype) if xp is not np else R

    @same_namespace
    def predict_proba(self, X):
        """Class probabilities: the pairs' ``r_ij(x)`` coupled by :func:`couple`, the
        minimiser of the weighted divergence of Eq. (10) (score equations (11)).  With two
        classes the coupling is the identity and the one pair's probabilities are
        returned as they are (``sigmoid(-+F)`` where the pair's log-odds ``F`` is known).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            Test inputs, or their cross-kernel to the training inputs for a
            precomputed-kernel estimator.

        Returns
        -------
        P : ndarray of shape (n_samples, n_classes)
            Columns in ``classes_`` order; rows sum to one.
        """
        R, F, dtype = self._pair_outputs(X)  # (checks that it is fitted)
        xp, is_xp = get_namespace(R)
        if self.classes_.shape[0] == 2:
            if F is not None:  # the pair's label 1 is class 0
                P = xp.stack([_sigmoid(xp, F[:, 0]), _sigmoid(xp, -F[:, 0])], axis=1)
            else:
                P = xp.stack([R[:, 0, 1], R[:, 1, 0]], axis=1)
        else:
            P = couple(R, self.pair_counts_, tol=self.tol, max_iter=self.max_iter)
        return xp.astype(P, dtype) if is_xp else P

    @same_namespace
    def decision_function(self, X):
        """Scores ranked like :meth:`predict_proba`.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_train)
            As in :meth:`predict_proba`.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Two classes: the log-odds of ``classes_[1]``, a strictly increasing function
            of ``predict_proba(X)[:, 1]``: minus the pair's own log-odds where it is known
            (:class:`PairBatching`; it also orders the rows whose probability rounds to
            0 or 1), else ``log p - log(1 - p)`` of the probability (``-+745`` at exactly
            0 or 1).  More: the log-probabilities.
        """
        check_is_fitted(self)
        if self.classes_.shape[0] == 2:
            R, F, dtype = self._pair_outputs(X)
            xp, is_xp = get_namespace(R)
            if not is_xp:
                return -F[:, 0] if F is not None else log_odds(R[:, 1, 0])
            if F is None:  # the log-odds of the probability, -+CERTAIN_LOG_ODDS at 0 or 1
                p = R[:, 1, 0]
                bound = CERTAIN_LOG_ODDS
                F = xp.clip(xp.log(p) - xp.log1p(-p), -bound, bound)
                return xp.astype(F, dtype)
            return xp.astype(-F[:, 0], dtype)
        return self.predict_log_proba(X)
