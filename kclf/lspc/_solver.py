"""The numerics of LSPC and its search (private): Eq. (2)-(3) of the LSPC-new paper.

Yamada, Sugiyama, Wichern & Simm, "Improving the accuracy of least-squares
probabilistic classifiers", IEICE Trans. Inf. & Syst. (2011); Sugiyama, "Superfast-trainable
multi-class probabilistic classifier by least-squares posterior fitting" (2010).  Equation
numbers refer to the first.

* Eq. (3) on one design matrix ``K``: ``alpha~ = (H + lam I)^{-1} h`` with
  ``H = K^T K / n`` and ``h = K^T Y / n`` (:func:`solve_basis`), weighted by class
  (:func:`sample_weights`) or block by block for the class-wise basis (:func:`fit_alpha`),
  every lambda at once from one eigendecomposition (:func:`alpha_path`); the posteriors of
  the outputs (:func:`round_outputs`, Eq. 4-6).
* The low-rank basis: ``b << n`` centres (:func:`choose_centers`; the LSPC-new paper's
  footnote 1), the folds' ``b x b`` Gram matrices from one pass over the rows
  (:class:`FoldSystems`) and the eigen path of each (:func:`eigen_path`): a fit costs
  O(n b^2 + b^3) time and O(n b) memory, no n x n matrix is formed.
* :class:`GridPaths`: :class:`kclf.LSPCCV`'s sigma x lambda search (exact, low-rank,
  block-wise) and its refit of many tasks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state

from .._parallel import serial_blas
from .._scoring import BinaryFoldScores, binary_fold_scores, fold_scores
from ..kernels import gaussian, gram, scaled_squared_distances, unit_of

# rows of the design matrix per block of a Gram pass over a non-contiguous row set
ROW_BLOCK = 8192
# rows per block of the per-width exp of the design matrix (about 2 MB at b = 1000)
EXP_BLOCK = 256
# Up to this many training rows per fold the eigendecomposition runs on one BLAS thread:
# its tridiagonal reduction is memory-bound there, and between the search's matrix
# products a multi-threaded eigh measured 2x slower (benchmarks/bench_lspc.py, 2 cores).
SERIAL_EIGH_MAX = 1024
# validation rows per block of the low-rank search's output product and scoring: the
# block's outputs (rows x n_lams x solved columns) stay in cache and are never stored
SCORE_BLOCK = 2048


def normal_equations(K, Y):
    """``(H, h)`` of Eq. (3): ``H = K^T K / n`` (upper triangle only) and ``h = K^T Y / n``.

    ``K`` is the (n_samples, n_basis) design matrix ``[phi(x_i)^T]_i`` and ``Y`` the
    (n_samples, n_columns) 0/1 class indicators.
    """
    n = K.shape[0]
    H = scipy.linalg.blas.dsyrk(1.0 / n, np.asfortranarray(K), trans=1)
    return H, K.T @ Y / n


def solve_normal(H, h, lam, overwrite_h=False):
    """``alpha = (H + lam I)^{-1} h`` for every column of ``h`` with one Cholesky
    factorisation (``H`` from :func:`normal_equations`; changed only if ``overwrite_h``)."""
    if not overwrite_h:
        H = H.copy()
    H[np.diag_indices_from(H)] += lam
    try:
        return scipy.linalg.cho_solve(scipy.linalg.cho_factor(H, lower=False), h)
    except np.linalg.LinAlgError:
        H = np.triu(H) + np.triu(H, 1).T
        return scipy.linalg.solve(H, h, assume_a="sym")


def solve_lspc(K, Y, lam):
    """Solve Eq. (3) for every column of ``Y`` with one Cholesky factorisation:
    ``alpha = (H + lam I)^{-1} h`` with ``H = K^T K / n`` and ``h = K^T Y / n``."""
    return solve_normal(*normal_equations(K, Y), lam, overwrite_h=True)


def balanced_weights(yi, n_classes, sample_weight=None):
    """Per-sample weights of ``class_weight="balanced"`` (scikit-learn's spelling):
    ``w_i = n / (c' n_{y_i})`` with ``c'`` the number of classes present, so the weights
    sum to ``n`` and every present class carries the same total weight.  With
    ``sample_weight`` the counts are the classes' weights (``W / (c' W_{y_i})``), as the
    repeated rows would give; a class of weight 0 gets 0."""
    if sample_weight is None:
        counts = np.bincount(yi, minlength=n_classes)
        return yi.size / (np.count_nonzero(counts) * counts[yi].astype(float))
    totals = np.bincount(yi, weights=sample_weight, minlength=n_classes)
    present = np.count_nonzero(totals)
    mine = totals[yi]
    return np.divide(sample_weight.sum(), present * mine, out=np.zeros_like(mine), where=mine > 0)


def sample_weights(yi, n_classes, class_weight, classes=None, sample_weight=None):
    """The weights of the squared loss: None (all one), :func:`balanced_weights`, or
    a dict ``{label: weight}`` over ``classes`` (default ``0 .. n_classes - 1``; labels
    not in it weigh 1); times ``sample_weight`` where given."""
    if class_weight is None:
        return sample_weight
    if isinstance(class_weight, dict):
        classes = range(n_classes) if classes is None else classes
        cw = np.array([float(class_weight.get(c, 1.0)) for c in classes])[yi]
    else:
        cw = balanced_weights(yi, n_classes, sample_weight)
    return cw if sample_weight is None else cw * sample_weight


def block_columns(yi, n_classes, basis_class):
    """``[(cols, classes), ...]``: the blocks of Eq. (3) to solve.  ``basis_class`` None
    (the full basis): one block, every basis function, every class.  Otherwise
    (class-wise basis) one block per class ``c`` that owns a basis function: the basis
    functions of class ``c`` (``basis_class == c``) and that class only."""
    if basis_class is None:
        return [(slice(None), np.arange(n_classes))]
    return [
        (np.flatnonzero(basis_class == c), np.array([c]))
        for c in range(n_classes)
        if np.any(basis_class == c)
    ]


def weighted_system(K, Y, weights, basis=None, total=None):
    """``(K'^T W K' / N, K'^T W Y / N)`` as ``(H, h)`` of Eq. (3) with the weighted squared
    loss ``(1/2N) sum_i w_i (beta^T phi'(x_i) - y_i)^2`` (``weights`` None: ``W = I``);
    ``H`` full (both triangles).  ``K' = K diag(basis)`` (None: ``K``) and ``N = total``
    (None: the rows): the sample weights' form (:func:`weighting`)."""
    n = K.shape[0] if total is None else total
    if basis is not None:
        K = K * basis
    KW = K if weights is None else K * weights[:, None]
    return KW.T @ K / n, KW.T @ Y / n


def weighting(sample_weight, rows, basis_rows):
    """The sample weights' form of Eq. (3) on the training ``rows`` with basis functions
    at the training rows ``basis_rows`` (None: other centres): ``(basis, total)``.

    A row of weight ``w`` stands for ``w`` copies: its squared error counts ``w`` times
    (the loss weights, :func:`sample_weights`), the mean is over ``N = sum w`` rows, and a
    basis function at a row of weight ``w`` is ``w`` copies of one function, whose
    coefficients, ridge-penalised, share its total ``a`` equally: penalty ``a^2 / w``.
    With ``beta = a / sqrt(w)`` that is Eq. (3) in ``beta`` on the design columns scaled
    by ``sqrt(w)`` (``basis``), and ``alpha = sqrt(w) beta``.  Integer weights then give
    the fit of the repeated rows and a zero weight that of the row dropped (its column
    scaled to 0, its coefficient 0); centres that are not training rows (k-means,
    a random subset) are each one function.  ``sample_weight`` None: ``(None, None)``,
    the unweighted form."""
    if sample_weight is None:
        return None, None
    basis = None if basis_rows is None else np.sqrt(sample_weight[basis_rows])
    return basis, float(sample_weight[rows].sum())


def fit_alpha(K, yi, n_classes, lam, basis_class=None, weights=None, basis=None, total=None):
    """The solution alpha~ (b, n_classes) of Eq. (3) on the design matrix ``K`` (n, b):
    per block of :func:`block_columns` ``(H_B + lam I)^{-1} h_B`` with the (weighted)
    :func:`weighted_system` of its columns; zero outside a class's block.  ``basis``,
    ``total``: the sample weights' form (:func:`weighting`; alpha~ is ``basis * beta``)."""
    Y = np.eye(n_classes)[yi]
    alpha = np.zeros((K.shape[1], n_classes))
    for cols, cls in block_columns(yi, n_classes, basis_class):
        scale = None if basis is None else basis[cols]
        H, h = weighted_system(K[:, cols], Y[:, cls], weights, scale, total)
        H[np.diag_indices_from(H)] += lam
        a = scipy.linalg.solve(H, h, assume_a="pos")
        alpha[np.ix_(np.arange(K.shape[1])[cols], cls)] = a if scale is None else a * scale[:, None]
    return alpha


def solve_basis(K, yi, n_classes, lam, basis_class=None, weights=None, basis=None, total=None):
    """Eq. (3) on the design matrix ``K`` (n, b) for the class indices ``yi``: the
    unweighted full basis by one Cholesky factorisation (:func:`solve_lspc`), a class-wise
    basis (``basis_class``, the class of each basis function) or weights per
    block (:func:`fit_alpha`)."""
    if basis_class is None and weights is None and basis is None and total is None:
        return solve_lspc(K, np.eye(n_classes)[yi], lam)
    return fit_alpha(K, yi, n_classes, lam, basis_class, weights, basis, total)


def alpha_path(K, yi, n_classes, lams, basis_class=None, weights=None, basis=None, total=None):
    """:func:`fit_alpha` for every lambda of ``lams`` at once, (b, n_lams, n_classes):
    per block one eigendecomposition ``H_B = V diag(e) V^T``, then
    ``alpha~(lam) = V diag(1 / (e + lam)) V^T h_B``."""
    Y = np.eye(n_classes)[yi]
    lams = np.asarray(lams, dtype=float)
    alpha = np.zeros((K.shape[1], lams.size, n_classes))
    for cols, cls in block_columns(yi, n_classes, basis_class):
        scale = None if basis is None else basis[cols]
        H, h = weighted_system(K[:, cols], Y[:, cls], weights, scale, total)
        e, V = symmetric_eigh(H)
        R = V.T @ h  # (b_B, |cls|)
        GR = R[:, None, :] / (e[:, None, None] + lams[None, :, None])
        A = (V @ GR.reshape(V.shape[0], -1)).reshape(GR.shape)
        if scale is not None:
            A *= scale[:, None, None]
        if isinstance(cols, slice):
            alpha[:, :, cls] = A
        else:
            alpha[np.ix_(cols, np.arange(lams.size), cls)] = A
    return alpha


def round_outputs(F, rounding):
    """Class-posterior estimates from raw outputs ``F = phi(x)^T alpha`` (..., n, c).

    ``"outputs"`` and ``"parameters"`` (whose ``F`` was computed from the rounded
    parameters): ``max(0, F)`` normalised, uniform ``1/c`` where the sum is 0 (Eq. 6,
    Eq. 4).  ``"none"``: ``F`` normalised as is (Eq. 5), which may be negative or
    exceed one; uniform where the sum is 0.
    """
    c = F.shape[-1]
    P = F if rounding == "none" else np.maximum(F, 0.0)
    Z = P.sum(axis=-1, keepdims=True)
    ok = Z != 0 if rounding == "none" else Z > 0
    out = np.full_like(P, 1.0 / c)
    np.divide(P, Z, out=out, where=ok)
    return out


def decision_scores(R, U, rounding):
    """LSPC's ``decision_function`` from its outputs: ``R`` (n, c) those its posteriors
    are made of (:func:`round_outputs`), ``U`` (n, c) the unrounded outputs
    ``phi(x)^T alpha~`` of Eq. (2) (``R`` itself but for ``rounding="parameters"``).

    Two classes, (n,): ``2 p - 1`` of the posterior ``p`` of the second class, but where
    the rounding of Eq. (6) (or Eq. 4) made ``p`` exactly 1, ``1 - 2 min(u_0, 0) >= 1``,
    and where it made ``p`` exactly 0, ``-1 + 2 min(u_1, 0) <= -1``: the rounded-away
    outputs say by how much the other class was ruled out, on the posteriors' scale.
    More classes, (n, c): the posteriors, a posterior of exactly 0 replaced by
    ``min(u_k, 0) <= 0`` and one of exactly 1 by ``1 - max_{j != k} min(u_j, 0) >= 1``.
    Either way the scores are ranked as the posteriors where these differ (ties of
    posteriors closer than the float spacing near -1 or 0 apart) and break the ties of
    0 and 1; positive (two classes) exactly where the second class is predicted.
    ``rounding="none"``: ``2 p - 1`` (two classes) or the posteriors, which never tie at
    0 or 1 by rounding.
    """
    P = round_outputs(R, rounding)
    if P.shape[1] == 2:
        s = 2.0 * P[:, 1] - 1.0
        if rounding != "none":
            below = np.minimum(U, 0.0)
            s = np.where(P[:, 1] == 1.0, 1.0 - 2.0 * below[:, 0], s)
            s = np.where(P[:, 1] == 0.0, -1.0 + 2.0 * below[:, 1], s)
        return s
    if rounding == "none":
        return P
    below = np.minimum(U, 0.0)
    T = np.where(P == 0.0, below, P)
    one = P == 1.0
    if one.any():
        others = np.where(one, -np.inf, below).max(axis=1, keepdims=True)
        T = np.where(one, 1.0 - others, T)
    return T


def effective_alpha(alpha, rounding):
    """The parameters used for prediction: ``max(0, alpha)`` for the original LSPC."""
    return np.maximum(alpha, 0.0) if rounding == "parameters" else alpha


def symmetric_eigh(A, lower=True):
    """Eigenvalues and eigenvectors of the symmetric ``A`` (its ``lower`` or upper triangle),
    by LAPACK's divide and conquer (``driver="evd"``, in place).  Where that fails to
    converge (seen on a Gram matrix with duplicate rows and entries down to 1e-300, at a
    small width) the relatively robust representations (``"evr"``) solve a copy kept for
    that case."""
    copy = A.copy()
    try:
        return scipy.linalg.eigh(A, lower=lower, driver="evd", overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        return scipy.linalg.eigh(
            copy, lower=lower, driver="evr", overwrite_a=True, check_finite=False
        )


def center_index(n, n_basis, random_state, sample_weight=None):
    """The rows (sorted) of ``b = min(n_basis, n')`` random centres: a uniform sample
    without replacement of the ``n'`` rows of positive weight (all ``n`` rows without
    ``sample_weight``), drawn with ``random_state``; ``b = n'`` gives every such row in its
    own order, i.e. the exact model's basis."""
    rows = np.arange(n) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    b = min(int(n_basis), rows.size)
    if b == rows.size:
        return rows
    rng = check_random_state(random_state)
    return rows[np.sort(rng.choice(rows.size, b, replace=False))]


def choose_centers(X, n_basis, centers, random_state, sample_weight=None):
    """``(index, C)``: the ``b = min(n_basis, n)`` kernel centres.

    ``"random"``: the rows ``index`` of :func:`center_index`.  ``"kmeans"``: the cluster
    centres of scikit-learn's ``KMeans`` (one seeded k-means++ start), ``index`` None.
    ``sample_weight``: among the rows of positive weight only (``n`` their number), as if
    the others were dropped; k-means weighted by them.
    """
    if centers == "random":
        index = center_index(X.shape[0], n_basis, random_state, sample_weight)
        return index, X[index]
    from sklearn.cluster import KMeans

    rows = np.arange(X.shape[0]) if sample_weight is None else np.flatnonzero(sample_weight > 0)
    km = KMeans(n_clusters=min(int(n_basis), rows.size), n_init=1, random_state=random_state)
    km.fit(X[rows], sample_weight=None if sample_weight is None else sample_weight[rows])
    return None, np.asarray(km.cluster_centers_, dtype=float)


def center_rows(index, sample_weight):
    """The training rows the centres ``index`` stand for as basis functions of the exact
    model (:func:`weighting`): every row of positive weight (``n_basis >= n``), else
    None (a subset, or k-means centres: one function each)."""
    if sample_weight is None or index is None:
        return None
    return index if index.size == np.count_nonzero(sample_weight > 0) else None


def gram_upper(K):
    """``K^T K`` (upper triangle valid) by one symmetric rank-k update."""
    # K.T of a C-ordered K is Fortran-ordered: no copy for dsyrk
    return scipy.linalg.blas.dsyrk(1.0, K.T, trans=0)


def row_atoms(n, folds):
    """Group the rows by the set of folds whose training part holds them.

    Returns ``(order, bounds, masks)``: ``order`` a permutation of ``range(n)`` in which
    the rows of each group are contiguous, ``bounds[a]:bounds[a + 1]`` the positions of
    group ``a`` in it, and ``masks`` (n_groups, n_folds) booleans, group ``a`` in fold
    ``k``'s training part.  A fold's training Gram matrix is then the sum of its groups'
    Gram matrices, and the full one the sum of all (K-fold: the groups are the
    validation parts).
    """
    member = np.zeros((n, len(folds)), dtype=bool)
    for k, (tr, _) in enumerate(folds):
        member[tr, k] = True
    if len(folds) <= 63:
        # each row's membership as one integer, fold 0 its highest bit: the integers sort
        # as numpy.unique(member, axis=0) sorts the rows (lexicographically), at the cost
        # of sorting n scalars instead of n rows (0.3 s instead of 8.7 s at 4,000,000)
        weights = np.left_shift(np.uint64(1), np.arange(len(folds) - 1, -1, -1, dtype=np.uint64))
        codes, inverse = np.unique(member.astype(np.uint64) @ weights, return_inverse=True)
        bits = np.right_shift(codes[:, None], np.arange(len(folds) - 1, -1, -1, dtype=np.uint64))
        masks = (bits & np.uint64(1)).astype(bool)
    else:
        masks, inverse = np.unique(member, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    bounds = np.r_[0, np.cumsum(np.bincount(inverse, minlength=masks.shape[0]))]
    return order, bounds, masks


def rows_of(K, positions):
    """``K[positions]``: a view when the (sorted) positions are one contiguous run."""
    positions = np.sort(positions)
    if positions.size and positions[-1] - positions[0] + 1 == positions.size:
        return K[positions[0] : positions[-1] + 1], positions
    return K[positions], positions


class FoldSystems:
    """The Gram sums ``K^T K`` and ``K^T Y`` of one width, per row group (:func:`row_atoms`).

    One pass over the rows of the (n, b) design matrix ``K`` (rows in ``order``) gives
    each group's ``b x b`` Gram matrix; with each group's ``K_a^T Y_a`` (``KY``, computed
    by the caller while it writes ``K``), the training part of fold ``k`` and the full
    set then cost only sums of ``b x b`` matrices.
    """

    def __init__(self, K, KY, bounds, masks):
        self.G = [gram_upper(K[bounds[a] : bounds[a + 1]]) for a in range(masks.shape[0])]
        self.KY = list(KY)
        self.masks = masks

    def training(self, k):
        """``(K_tr^T K_tr, K_tr^T Y_tr)`` of fold ``k`` (upper triangle valid)."""
        atoms = np.flatnonzero(self.masks[:, k])
        return sum(self.G[a] for a in atoms), sum(self.KY[a] for a in atoms)

    def full(self):
        """``(K^T K, K^T Y)`` over all rows (upper triangle valid)."""
        return sum(self.G), sum(self.KY)


def eigen_path(H, h, m, lams, serial):
    """``alpha(lam) = (H / m + lam I)^{-1} h / m`` for every lambda from one eigh.

    ``H`` (b, b) with its upper triangle valid, ``h`` (b, p).  With
    ``H / m = V diag(s) V^T``, ``alpha(lam) = V diag(1 / (s + lam)) V^T h / m``.
    Returns (b, n_lams, p).
    """
    with serial_blas(serial):
        s, V = symmetric_eigh(H / m, lower=False)
    R = V.T @ (h / m)
    G = 1.0 / (s[None, :] + np.asarray(lams)[:, None])  # (L, b)
    GR = (G[:, :, None] * R[None]).transpose(1, 0, 2)  # (b, L, p)
    return (V @ GR.reshape(V.shape[0], -1)).reshape(GR.shape)


def exp_design(D, K, sigma, unit, S, bounds, block=EXP_BLOCK):
    """``K = gaussian(D, sigma, unit)`` in place, row block by row block, and per row
    group ``a`` (``bounds``) ``K_a^T S_a`` from each block while it is in cache (a separate
    thin product would read all of ``K`` again, memory-bound).  Returns the groups' (b, p)
    products."""
    KS = []
    for a in range(bounds.size - 1):
        acc = np.zeros((K.shape[1], S.shape[1]))
        for lo in range(bounds[a], bounds[a + 1], block):
            hi = min(lo + block, bounds[a + 1])
            Kb = gaussian(D[lo:hi], sigma, unit, out=K[lo:hi])
            acc += Kb.T @ S[lo:hi]
        KS.append(acc)
    return KS


def design_distances(X, order, C, block=ROW_BLOCK):
    """``(D, u)``: the squared distances ``||x - c||^2 / u^2`` of the rows ``X[order]`` to
    the centres ``C``, (n, b), in the units ``u`` of all of them
    (:func:`kclf.kernels.unit_of`), computed in row blocks so the temporaries stay
    O(block b).  Each block equals :func:`kclf.kernels.scaled_squared_distances` of its
    rows in those units bit for bit (both translate by the centres' median)."""
    u = unit_of(X, C)
    D = np.empty((order.size, C.shape[0]))
    for lo in range(0, order.size, block):
        D[lo : lo + block] = scaled_squared_distances(X[order[lo : lo + block]], C, unit=u)[0]
    return D, u


def class_columns(n_tasks, n_cls):
    """The map of :func:`solved_columns` for outputs already per (task, class) column."""

    def to_classes(F):
        return F.reshape(F.shape[:-1] + (n_tasks, n_cls))

    to_classes.ones = False
    to_classes.n_cls = n_cls
    return to_classes


def solved_columns(ind, n_tasks, rounding):
    """``(S, to_classes)``: the right-hand sides to solve Eq. (3) for, and the map from
    their outputs (..., p) to the indicator columns' (..., n_tasks, n_cls)
    (``to_classes.ones``: whether ``S`` is ``[ones, positives]``).

    Eq. (3) is linear in the indicator columns: with two classes per task only the
    positive columns and one column of ones are solved, negative = ones - positive
    (not for ``rounding="parameters"``, whose ``max(0, alpha)`` is not linear).
    """
    n_cls = ind.shape[1] // max(n_tasks, 1)
    if n_cls != 2 or rounding == "parameters":
        return ind, class_columns(n_tasks, n_cls)

    def to_classes(F):
        pos = F[..., 1:]
        return np.stack([F[..., :1] - pos, pos], axis=-1)

    to_classes.ones = True
    to_classes.n_cls = 2
    return np.c_[np.ones(ind.shape[0]), ind[:, 1::2]], to_classes


@dataclass(frozen=True)
class GridPaths:
    """:class:`kclf.LSPCCV`'s search over a sigma x lambda grid and its refit of many
    tasks, for the LSPC model of these settings (the search's parameters; ``classes`` the
    labels of ``y``, ``multitask`` whether ``y`` was a 0/1 task matrix).

    The search decomposes each (sigma, fold) Gram matrix once and solves every lambda and
    task on top (:meth:`search_exact`), or, with ``n_basis``, each fold's ``b x b`` Gram
    matrix (:meth:`search_lowrank`), or each class block (:meth:`search_blocks`).
    ``sample_weight`` (n,) or None: every fold's fit weighted as :func:`weighting` says,
    its validation rows scored with their weights.
    """

    kernel: object
    rounding: str
    scoring: str
    basis: str
    class_weight: object
    classes: np.ndarray
    multitask: bool
    n_basis: int | None = None
    centers: str = "random"
    random_state: object = None
    sample_weight: object = None

    def weights_of(self, rows):
        """The sample weights of ``rows`` (None unweighted)."""
        return None if self.sample_weight is None else self.sample_weight[rows]

    def centers_of(self, X):
        """The low-rank centres ``(index, C)`` (:func:`choose_centers`, among the rows of
        positive weight) and the scale of their basis functions (:func:`weighting`)."""
        index, C = choose_centers(
            X, self.n_basis, self.centers, self.random_state, self.sample_weight
        )
        rows = center_rows(index, self.sample_weight)
        return (index, C), None if rows is None else np.sqrt(self.sample_weight[rows])

    def blockwise(self):
        """Whether the classes (or tasks) have no common system: a class-wise basis, or
        per-task class weights."""
        return self.basis == "classwise" or self.class_weight is not None

    def kernel_matrix(self, X, Y, sigma):
        """The kernel between ``X`` and ``Y`` at the width ``sigma`` (NaN: none)."""
        return gram(self.kernel, X, Y, None if np.isnan(sigma) else sigma)

    def score_outputs(self, to_classes, F, labels, w=None):
        """(n_lams, n_tasks) scores of the validation outputs ``F`` (n_va, n_lams, p) of
        the solved columns (:func:`solved_columns`), weighted by ``w`` (n_va,) if given."""
        n_tasks = labels.shape[1]
        if to_classes.ones:  # [ones, positives]: negative = ones - positive
            F1 = F[:, :, 1:]
            F0 = F[:, :, :1] - F1
        elif F.shape[2] == 2 * n_tasks:  # [negative, positive] per task
            F0, F1 = F[:, :, 0::2], F[:, :, 1::2]
        else:
            P = round_outputs(to_classes(F.transpose(1, 0, 2)), self.rounding)
            return fold_scores(P, labels, self.scoring, w)
        return binary_fold_scores(F0, F1, labels, self.rounding, self.scoring, w)

    def block_scores(self, to_classes, F, labels, w=None):
        """:meth:`score_outputs` of the class-wise or class-weighted search: with class
        weights every validation row is scored with the loss's weight (its class's
        weight, ``"balanced"`` from the validation rows' own classes, times its sample
        weight), per task, so the search picks the setting of least cost-weighted error
        (balanced error for ``"balanced"``) -- the costs ``class_weight`` states."""
        if self.class_weight is None:
            return self.score_outputs(to_classes, F, labels, w)
        c, n_tasks = to_classes.n_cls, labels.shape[1]
        F = F.reshape(F.shape[0], F.shape[1], n_tasks, c)
        out = np.empty((F.shape[1], n_tasks))
        for t in range(n_tasks):
            wt = sample_weights(labels[:, t], c, self.class_weight, self.classes, w)
            one = class_columns(1, c)
            out[:, t] = self.score_outputs(one, F[:, :, t, :], labels[:, t : t + 1], wt)[:, 0]
        return out

    def score_product(self, to_classes, Kva, A, labels, w=None):
        """:meth:`score_outputs` of the validation outputs ``Kva @ A`` (``A`` (b, n_lams x
        p), lambda-major), two classes per task computed and scored in row blocks of
        :data:`SCORE_BLOCK` (:class:`kclf._search.BinaryFoldScores`)."""
        n_va, n_tasks = labels.shape
        if to_classes.n_cls != 2:  # more classes: the whole product at once
            F = (Kva @ A).reshape(n_va, A.shape[1] // (to_classes.n_cls * n_tasks), -1)
            return self.score_outputs(to_classes, F, labels, w)
        p = n_tasks + 1 if to_classes.ones else 2 * n_tasks
        n_lams = A.shape[1] // p
        acc = BinaryFoldScores(n_va, n_lams, n_tasks, self.rounding, self.scoring, w)
        for lo in range(0, n_va, SCORE_BLOCK):
            F = (Kva[lo : lo + SCORE_BLOCK] @ A).reshape(-1, n_lams, p)
            if to_classes.ones:  # [ones, positives]: negative = ones - positive
                F1 = F[:, :, 1:]
                acc.add(F[:, :, :1] - F1, F1, labels[lo : lo + SCORE_BLOCK])
            else:  # [negative, positive] per task
                acc.add(F[:, :, 0::2], F[:, :, 1::2], labels[lo : lo + SCORE_BLOCK])
        return acc.scores()

    def search_exact(self, X, folds, ind, labels, table):
        """Add every (task, sigma, lambda)'s fold scores to ``table`` (one width per
        :meth:`kclf._search.ScoreTable.run` item); returns the scaled squared distances
        ``(D, u)`` of ``X`` (rbf; None otherwise) for the final fit."""
        sigmas, lams = table.sigmas, table.lams
        n_tasks = labels.shape[1]
        S, to_classes = solved_columns(ind, n_tasks, self.rounding)
        D = scaled_squared_distances(X) if self.kernel == "rbf" and n_tasks else None
        K_fixed = gram(self.kernel, X) if D is None and n_tasks else None

        def width(si):
            # the same values as kernels.grams (and rbf_kernel) bit for bit
            K = K_fixed if D is None else gaussian(D[0], sigmas[si], D[1])
            # the identity below needs K^T K = V diag(s^2) V^T: an eigendecomposition for a
            # symmetric K (indefinite too), a singular value decomposition otherwise (only
            # a precomputed or callable kernel can be non-symmetric)
            symmetric = self.kernel in ("rbf", "linear") or np.allclose(
                K, K.T, rtol=0.0, atol=1e-13 * np.abs(K).max()
            )
            scores = []
            for tr, va in folds:
                m = norm = tr.size
                Ktr = K[np.ix_(tr, tr)]
                Kva = K[np.ix_(va, tr)]
                S_tr = S[tr]
                if self.sample_weight is not None:
                    # Eq. (3) weighted (:func:`weighting`): rows and basis columns both
                    # scaled by sqrt(w), so the training Gram matrix stays symmetric,
                    # D K D, and its decomposition solves every lambda as unweighted
                    d = np.sqrt(self.sample_weight[tr])
                    norm = float(self.sample_weight[tr].sum())
                    Ktr = Ktr * d[:, None] * d[None, :]
                    Kva = Kva * d[None, :]
                    S_tr = S_tr * d[:, None]
                if symmetric:
                    with serial_blas(m <= SERIAL_EIGH_MAX):
                        s, V = symmetric_eigh(Ktr)
                    U = V
                else:
                    U, s, Vt = scipy.linalg.svd(Ktr, overwrite_a=True, check_finite=False)
                    V = Vt.T
                B = U.T @ S_tr
                # (H + lam I)^{-1} h = V G U^T Y_tr with G = (s/N) / (s^2/N + lam), all lams
                # (N the rows m, or their weight)
                G = (s / norm) / (s * s / norm + lams[:, None])
                # columns (lam, solved column): every setting in one matrix product
                GB = (G.T[:, :, None] * B[:, None, :]).reshape(m, -1)
                if self.rounding == "parameters":
                    F = Kva @ np.maximum(V @ GB, 0.0)
                elif GB.shape[1] < va.size:
                    F = Kva @ (V @ GB)
                else:
                    F = (Kva @ V) @ GB
                F = F.reshape(va.size, lams.size, -1)
                scores.append(self.score_outputs(to_classes, F, labels[va], self.weights_of(va)))
            return scores, None

        table.run(width, range(sigmas.size if n_tasks else 0))
        return D

    def search_lowrank(self, X, folds, ind, labels, table):
        """:meth:`search_exact` for the low-rank model (``n_basis``; see
        :class:`kclf.LSPCCV`).  Returns the centres ``(index, C)`` and, per width, the full
        ``(K^T K, K^T ind)`` for the final fit."""
        sigmas, lams = table.sigmas, table.lams
        n, n_tasks = X.shape[0], labels.shape[1]
        (index, C), col_scale = self.centers_of(X)
        b = C.shape[0]
        order, bounds, masks = row_atoms(n, folds)
        pos = np.empty(n, dtype=int)
        pos[order] = np.arange(n)
        S, to_classes = solved_columns(ind, n_tasks, self.rounding)
        labels_o = labels[order]

        rbf = self.kernel == "rbf"
        S_o = S[order]
        w_o = self.weights_of(order)
        if w_o is not None:  # K^T W S from the pass over the rows (:func:`weighting`)
            S_o = S_o * w_o[:, None]
        if rbf:
            D, unit = design_distances(X, order, C)
        else:
            K_fixed = np.asarray(gram(self.kernel, X[order], C), dtype=float)
            KS_fixed = [K_fixed[lo:hi].T @ S_o[lo:hi] for lo, hi in zip(bounds[:-1], bounds[1:])]

        def width(si):
            if rbf:  # a design matrix of this width's own (widths may run side by side)
                K = np.empty_like(D)
                KS = exp_design(D, K, sigmas[si], unit, S_o, bounds)
            else:
                K, KS = K_fixed.copy(), KS_fixed
            KG = K
            if w_o is not None:
                if col_scale is not None:  # the centres are the training rows
                    K *= col_scale
                    KS = [col_scale[:, None] * a for a in KS]
                KG = K * np.sqrt(w_o)[:, None]  # rows weighted in the Gram matrices
            fs = FoldSystems(KG, KS, bounds, masks)
            scores = []
            for k, (tr, va) in enumerate(folds):
                H, h = fs.training(k)
                m = tr.size if w_o is None else float(self.sample_weight[tr].sum())
                A = eigen_path(H, h, m, lams, serial=b <= SERIAL_EIGH_MAX)
                if self.rounding == "parameters":
                    np.maximum(A, 0.0, out=A)
                Kva, va_pos = rows_of(K, pos[va])
                w_va = None if w_o is None else w_o[va_pos]
                scores.append(
                    self.score_product(to_classes, Kva, A.reshape(b, -1), labels_o[va_pos], w_va)
                )
            G, KSf = fs.full()
            return scores, (G, to_classes(KSf).reshape(b, -1))

        systems = table.run(width, range(sigmas.size if n_tasks else 0))
        return (index, C), systems, col_scale

    def search_blocks(self, X, folds, labels, table):
        """:meth:`search_exact` (or, with ``n_basis``, the low-rank search) for a
        class-wise basis or class weights: per (sigma, fold, task) :func:`alpha_path`
        on the fold's design rows, one eigendecomposition per block.  Returns the
        centres ``(index, C)`` (None for the exact model)."""
        sigmas, lams = table.sigmas, table.lams
        n_tasks = labels.shape[1]
        c = 2 if self.multitask else self.classes.size
        if self.n_basis is None:
            index, C = None, None
        else:
            if self.basis == "classwise" and self.centers != "random":
                raise ValueError("basis='classwise' needs centers='random' (labelled centres)")
            index, C = choose_centers(
                X, self.n_basis, self.centers, self.random_state, self.sample_weight
            )
        all_rows = center_rows(index, self.sample_weight)
        D = None
        if self.kernel == "rbf" and n_tasks:
            D = scaled_squared_distances(X, C)
        to_classes = class_columns(n_tasks, c)

        def width(si):
            if D is None:
                K = self.kernel_matrix(X, C, sigmas[si])
            else:
                K = gaussian(D[0], sigmas[si], D[1])
            scores = []
            for tr, va in folds:
                if index is None:  # the basis: the fold's training samples
                    Ktr, Kva = K[np.ix_(tr, tr)], K[np.ix_(va, tr)]
                else:  # the shared centres
                    Ktr, Kva = K[tr], K[va]
                F = np.empty((va.size, lams.size, n_tasks, c))
                w_tr = self.weights_of(tr)
                basis, total = weighting(self.sample_weight, tr, tr if index is None else all_rows)
                for t in range(n_tasks):
                    yt = labels[tr, t]
                    basis_class = None
                    if self.basis == "classwise":
                        basis_class = yt if index is None else labels[index, t]
                    weights = sample_weights(yt, c, self.class_weight, self.classes, w_tr)
                    A = alpha_path(Ktr, yt, c, lams, basis_class, weights, basis, total)
                    A = effective_alpha(A, self.rounding).reshape(A.shape[0], -1)
                    F[:, :, t, :] = (Kva @ A).reshape(va.size, lams.size, c)
                F = F.reshape(va.size, lams.size, -1)
                scores.append(self.block_scores(to_classes, F, labels[va], self.weights_of(va)))
            return scores, None

        table.run(width, range(sigmas.size if n_tasks else 0))
        return None if index is None else (index, C)

    def search(self, X, y, labels, folds, table):
        """Every (task, sigma, lambda)'s fold scores (exact or low-rank path); returns what
        the refit reuses: the class indicator columns ``ind``, the grid's widths, and the
        scaled squared distances ``D`` (exact, :func:`kclf.kernels.scaled_squared_distances`)
        or the ``centers`` and full ``systems`` per width
        (low rank)."""
        if not self.multitask:
            ind = np.eye(self.classes.size)[labels[:, 0]]
        else:  # columns per searched task: [negative, positive]
            ind = np.stack([1 - labels, labels], axis=2).reshape(y.shape[0], -1).astype(float)
        reuse = {"ind": ind, "sigmas": table.sigmas, "D": None, "centers": None}
        if self.blockwise():
            reuse["centers"] = self.search_blocks(X, folds, labels, table)
        elif self.n_basis is None:
            reuse["D"] = self.search_exact(X, folds, ind, labels, table)
        else:
            found = self.search_lowrank(X, folds, ind, labels, table)
            reuse["centers"], reuse["systems"], reuse["basis"] = found
        return reuse

    def refit_tasks(self, X, Y, fit_tasks, sig_t, lam_t, reuse, n_tasks):
        """``alpha`` (n_basis, n_tasks, 2) of every searched task at its chosen (sigma,
        lambda) (``sig_t``, ``lam_t``; zero for the tasks not searched): one Cholesky
        factorisation per distinct (sigma, lambda) chosen, with what :meth:`search`
        returned (``reuse``)."""
        sigmas, D = reuse["sigmas"], reuse["D"]
        n_basis = X.shape[0] if self.n_basis is None else reuse["centers"][1].shape[0]
        alpha_t = np.zeros((n_basis, n_tasks, 2))
        if self.blockwise():
            self.refit_blocks(alpha_t, X, Y, fit_tasks, sig_t, lam_t, reuse["centers"])
            return alpha_t
        sw = self.sample_weight
        # the sample weights' form (:func:`weighting`): the mean over N = sum w rows, the
        # basis functions at the training rows scaled by sqrt(w) (alpha = scale * beta)
        n = X.shape[0] if sw is None else float(sw.sum())
        scale = np.sqrt(sw) if sw is not None and self.n_basis is None else reuse.get("basis")
        # the final systems have n (or b) unknowns; up to SERIAL_EIGH_MAX their Gram
        # matrix and Cholesky factorisation run on one BLAS thread, as the search's eigh
        with serial_blas(n_basis <= SERIAL_EIGH_MAX):
            for sigma in np.unique(sig_t):
                same_s = np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma
                if self.n_basis is not None:
                    si = int(np.flatnonzero(np.isnan(sigmas) | (sigmas == sigma))[0])
                    G, KY = reuse["systems"][si]
                    H, h = G / n, KY / n
                else:
                    K = gaussian(D[0], sigma, D[1]) if D is not None else None
                    K = self.kernel_matrix(X, None, sigma) if K is None else K
                    if sw is None:
                        H, h = normal_equations(K, reuse["ind"])
                    else:  # rows and columns by sqrt(w): D K D, symmetric
                        H, h = normal_equations(
                            scale[:, None] * K * scale, scale[:, None] * reuse["ind"]
                        )
                        H, h = H * (X.shape[0] / n), h * (X.shape[0] / n)
                for lam in np.unique(lam_t[same_s]):
                    tasks = np.flatnonzero(same_s & (lam_t == lam))
                    cols = (2 * tasks[:, None] + np.arange(2)).ravel()
                    alpha = solve_normal(H, h[:, cols], lam)
                    if scale is not None:
                        alpha *= scale[:, None]
                    alpha_t[:, fit_tasks[tasks], :] = alpha.reshape(-1, tasks.size, 2)
        return alpha_t

    def refit_blocks(self, alpha_t, X, Y, fit_tasks, sig_t, lam_t, centers):
        """:meth:`refit_tasks` for a class-wise basis or class weights, into ``alpha_t``:
        per task :func:`fit_alpha` at its (sigma, lambda), one kernel per distinct sigma."""
        index, C = (None, None) if centers is None else centers
        sw = self.sample_weight
        basis_rows = np.arange(X.shape[0]) if index is None else center_rows(index, sw)
        basis, total = weighting(sw, slice(None), basis_rows)
        for sigma in np.unique(sig_t):
            same_s = np.flatnonzero(np.isnan(sig_t) if np.isnan(sigma) else sig_t == sigma)
            K = self.kernel_matrix(X, C, sigma)
            for k in same_s:
                t = fit_tasks[k]
                yt = np.asarray(Y)[:, t].astype(int)
                basis_class = None
                if self.basis == "classwise":
                    basis_class = yt if index is None else yt[index]
                weights = sample_weights(yt, 2, self.class_weight, self.classes, sw)
                alpha_t[:, t, :] = fit_alpha(K, yt, 2, lam_t[k], basis_class, weights, basis, total)
