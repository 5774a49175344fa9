"""Low-rank LSPC: the model of Eq. (2)-(3) of the LSPC-new paper with ``b << n`` kernels.

The basis ``phi(x) = (k(x, c_1), ..., k(x, c_b))`` has its centres at ``b`` points
(a seeded random subset of the training inputs, or k-means centres) instead of at all
``n`` of them (Sugiyama's "LSPC" with a reduced basis; the LSPC-new paper's footnote 1).
With the (n, b) design matrix ``K``, Eq. (3) still reads

    alpha~ = (H + lam I_b)^{-1} h,   H = K^T K / n,   h = K^T Y / n,

so a fit costs O(n b^2 + b^3) time and O(n b) memory: no n x n matrix is ever formed.
"""

from __future__ import annotations

import contextlib

import numpy as np
import scipy.linalg
from sklearn.utils import check_random_state
from threadpoolctl import ThreadpoolController

_CONTROLLER = []
# rows of the design matrix per block of a Gram pass over a non-contiguous row set
ROW_BLOCK = 8192
# rows per block of the per-width exp of the design matrix (about 2 MB at b = 1000)
EXP_BLOCK = 256


def serial_blas(serial=True):
    """Context: one BLAS thread if ``serial``, else unchanged.  ``threadpool_limits``
    inspects the loaded libraries on every call (about 10 ms here, as much as an eigh of
    a few hundred rows); one cached ``ThreadpoolController`` switches in microseconds."""
    if not serial:
        return contextlib.nullcontext()
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0].limit(limits=1, user_api="blas")


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


def choose_centers(X, n_basis, centers, random_state):
    """``(index, C)``: the ``b = min(n_basis, n)`` kernel centres.

    ``"random"``: the rows ``index`` (sorted) of a uniform sample without replacement,
    drawn with ``random_state``; ``b = n`` gives every row in its own order, i.e. the
    exact model's basis.  ``"kmeans"``: the cluster centres of scikit-learn's
    ``KMeans`` (one seeded k-means++ start), ``index`` None.
    """
    n = X.shape[0]
    b = min(int(n_basis), n)
    if centers == "random":
        rng = check_random_state(random_state)
        index = np.sort(rng.choice(n, b, replace=False)) if b < n else np.arange(n)
        return index, X[index]
    from sklearn.cluster import KMeans

    km = KMeans(n_clusters=b, n_init=1, random_state=random_state).fit(X)
    return None, np.asarray(km.cluster_centers_, dtype=float)


def gram_upper(K):
    """``K^T K`` (upper triangle valid) by one symmetric rank-k update."""
    # K.T of a C-ordered K is Fortran-ordered: no copy for dsyrk
    return scipy.linalg.blas.dsyrk(1.0, K.T, trans=0)


def symmetrize_upper(H):
    """Fill the strict lower triangle from the upper one, in place."""
    il = np.tril_indices_from(H, k=-1)
    H[il] = H.T[il]
    return H


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


def exp_design(D, K, scale, S, bounds, block=EXP_BLOCK):
    """``K = exp(scale * D)`` in place, row block by row block, and per row group ``a``
    (``bounds``) ``K_a^T S_a`` from each block while it is in cache (a separate thin
    product would read all of ``K`` again, memory-bound).  Returns the groups' (b, p)
    products."""
    KS = []
    for a in range(bounds.size - 1):
        acc = np.zeros((K.shape[1], S.shape[1]))
        for lo in range(bounds[a], bounds[a + 1], block):
            hi = min(lo + block, bounds[a + 1])
            Kb = K[lo:hi]
            np.multiply(D[lo:hi], scale, out=Kb)
            np.exp(Kb, out=Kb)
            acc += Kb.T @ S[lo:hi]
        KS.append(acc)
    return KS


def design_distances(X, order, C, block=ROW_BLOCK):
    """Squared distances ``||x - c||^2`` of the rows ``X[order]`` to the centres ``C``,
    (n, b), computed in row blocks so the temporaries stay O(block b).  Each block equals
    :func:`kclf.kernels.squared_distances` of its rows bit for bit (both translate by
    the centres' median)."""
    from .kernels import squared_distances

    D = np.empty((order.size, C.shape[0]))
    for lo in range(0, order.size, block):
        D[lo : lo + block] = squared_distances(X[order[lo : lo + block]], C)
    return D
