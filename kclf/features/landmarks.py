"""The HMM kernel with landmarks: n x m cross log-likelihoods instead of n x n.

The full kernel (:mod:`kclf.features.hmm_kernel`) needs ``L[i, j] = log p(X_i | lambda_j)``
for every clip ``i`` and every clip's model ``lambda_j``: n^2 forward passes.  Its column
``j`` only needs ``L[:, j]`` (every clip under model ``j``), ``L[j, :]`` (clip ``j`` under
every model) and the diagonal ``L_ii``, since

    D(i, j) = 1/2 [(L_ii - L_ij) / T_i + (L_jj - L_ji) / T_j],   K = exp(-D / tau).

With ``m`` landmark clips ``J`` these are ``2 n m + n`` forward passes, and
``K[:, J]`` equals the full kernel's columns at the landmarks (for the same ``tau``).
The columns feed LSPC's ``n_basis`` path (the landmarks as centres) or Nystroem features
``Phi = K[:, J] K[J, J]^{-1/2}``, with ``Phi Phi^T = K[:, J] K[J, J]^+ K[J, :]``.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

__all__ = [
    "choose_landmarks",
    "landmark_divergence",
    "landmark_tau",
    "nystroem_features",
]


def choose_landmarks(n, m, random_state):
    """The seeded rule: ``min(m, n)`` distinct clip indices, sorted, drawn uniformly."""
    if m < 1:
        raise ValueError(f"landmarks must be >= 1, got {m!r}")
    rng = check_random_state(random_state)
    return np.sort(rng.choice(n, min(int(m), n), replace=False))


def landmark_divergence(L_to_landmarks, L_from_landmarks, self_loglik, lengths, landmarks):
    """``D[:, J]`` (n, m) of :func:`kclf.features.hmm_kernel.hmm_divergence`.

    Parameters
    ----------
    L_to_landmarks : ndarray of shape (n, m)
        ``log p(X_i | lambda_{J_k})``: every clip under each landmark's model.
    L_from_landmarks : ndarray of shape (m, n)
        ``log p(X_{J_k} | lambda_i)``: each landmark clip under every clip's model.
    self_loglik : ndarray of shape (n,)
        ``L_ii = log p(X_i | lambda_i)``.
    lengths : ndarray of shape (n,)
        Frame counts ``T_i``.
    landmarks : ndarray of shape (m,)
        The landmark clips' indices ``J``.
    """
    A = np.asarray(L_to_landmarks, dtype=float)
    B = np.asarray(L_from_landmarks, dtype=float)
    ll = np.asarray(self_loglik, dtype=float)
    T = np.asarray(lengths, dtype=float)
    J = np.asarray(landmarks)
    n, m = A.shape
    if B.shape != (m, n) or ll.shape != (n,) or T.shape != (n,) or J.shape != (m,):
        raise ValueError(
            f"shapes must be (n, m), (m, n), (n,), (n,), (m,); got {A.shape}, {B.shape}, "
            f"{ll.shape}, {T.shape}, {J.shape}"
        )
    if np.any(T <= 0):
        raise ValueError("lengths must be positive frame counts")
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(B)) and np.all(np.isfinite(ll))):
        raise ValueError("cross log-likelihoods must be finite")
    return 0.5 * ((ll[:, None] - A) / T[:, None] + (ll[J][None, :] - B.T) / T[J][None, :])


def landmark_tau(D_nm, landmarks):
    """Median heuristic on the landmark columns: the median of ``D[i, J_k]``, ``i != J_k``
    (the full kernel's :func:`~kclf.features.hmm_kernel.median_tau` over all pairs is
    not available without them)."""
    D_nm = np.asarray(D_nm, dtype=float)
    off = np.ones(D_nm.shape, dtype=bool)
    off[np.asarray(landmarks), np.arange(D_nm.shape[1])] = False
    med = float(np.median(D_nm[off])) if off.any() else 0.0
    return med if med > 0 else 1.0


def nystroem_features(K_nm, landmarks, rcond=1e-12):
    """``Phi = K[:, J] V diag(w^{-1/2})`` from ``K[J, J] = V diag(w) V^T`` (symmetrised;
    eigenvalues at most ``rcond * max(w)`` dropped, negative ones too: an HMM kernel need
    not be positive semi-definite), so ``Phi Phi^T = K[:, J] K[J, J]^+ K[J, :]``, exact on
    the landmark columns when ``K[J, J]`` is positive definite."""
    K_nm = np.asarray(K_nm, dtype=float)
    K_mm = K_nm[np.asarray(landmarks)]
    w, V = np.linalg.eigh(0.5 * (K_mm + K_mm.T))
    keep = w > rcond * max(w.max(initial=0.0), np.finfo(float).tiny)
    return K_nm @ (V[:, keep] / np.sqrt(w[keep]))
