"""Per-clip hidden Markov models and the HMM kernel between clips.

Each clip ``i`` (frame features ``X_i``, ``T_i`` frames) gets its own diagonal-covariance
Gaussian HMM ``lambda_i`` (hmmlearn's ``GaussianHMM``).  With the cross log-likelihoods
``L[i, j] = log p(X_i | lambda_j)`` the clips are compared by the length-normalised,
symmetrised divergence (the "hidden Markov kernel" that the LSPC-new paper, Sec. 4.2,
uses for Freesound)::

    D(i, j) = 1/2 [ (L[i, i] - L[i, j]) / T_i + (L[j, j] - L[j, i]) / T_j ]
    K(i, j) = exp(-D(i, j) / tau)

``K`` need not be positive semi-definite, so :func:`project_psd` clips its negative
eigenvalues and reports the clipped mass.

The cross log-likelihood matrix is the expensive part (``N^2`` forward passes).
:func:`cross_loglik` runs the forward algorithm for a batch of clips against all
models at once (numpy, vectorised over clips x models x states, log-domain emissions
with per-step rescaling), equal to ``GaussianHMM.score`` up to round-off; pairs whose
rescaled forward pass underflows are recomputed in pure log space.  It takes any
subset of rows and any subset of models (:meth:`HMMBank.subset`), so the matrix can be
computed in row blocks as separate jobs and assembled (the workflow's shards,
``kclf_workflow.shards.audio``), or for a few landmark columns only
(:mod:`kclf.features.landmarks`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.special import logsumexp

__all__ = [
    "HMMBank",
    "save_bank",
    "load_bank",
    "fit_clip_hmm",
    "cross_loglik",
    "hmm_divergence",
    "median_tau",
    "hmm_kernel",
    "project_psd",
]

LOG_2PI = np.log(2.0 * np.pi)


@dataclass(frozen=True)
class HMMBank:
    """Parameters of ``M`` diagonal-Gaussian HMMs with ``S`` states over ``d`` features.

    Attributes
    ----------
    startprob : ndarray of shape (M, S)
    transmat : ndarray of shape (M, S, S)
        ``transmat[m, s, t] = P(state t at step k+1 | state s at step k)``.
    means : ndarray of shape (M, S, d)
    variances : ndarray of shape (M, S, d)
        Diagonal covariances (``GaussianHMM._covars_`` for ``covariance_type="diag"``).
    """

    startprob: np.ndarray
    transmat: np.ndarray
    means: np.ndarray
    variances: np.ndarray

    def __post_init__(self):
        M, S, d = np.shape(self.means)
        shapes = {
            "startprob": (M, S),
            "transmat": (M, S, S),
            "variances": (M, S, d),
        }
        for name, shape in shapes.items():
            if np.shape(getattr(self, name)) != shape:
                raise ValueError(
                    f"HMMBank.{name} must have shape {shape} to match means {(M, S, d)}, "
                    f"got {np.shape(getattr(self, name))}"
                )
        if np.any(np.asarray(self.variances) <= 0):
            raise ValueError("HMMBank.variances must be positive")

    def __len__(self):
        return self.means.shape[0]

    @property
    def n_states(self):
        return self.means.shape[1]

    @property
    def n_features(self):
        return self.means.shape[2]

    @classmethod
    def from_models(cls, models):
        """Stack fitted ``GaussianHMM`` models (diagonal covariances, same sizes)."""
        models = list(models)
        if not models:
            raise ValueError("models must hold at least one fitted GaussianHMM")
        for k, m in enumerate(models):
            if getattr(m, "covariance_type", None) != "diag":
                raise ValueError(f"models[{k}] must be a GaussianHMM with covariance_type='diag'")
        return cls(
            startprob=np.stack([m.startprob_ for m in models]).astype(float),
            transmat=np.stack([m.transmat_ for m in models]).astype(float),
            means=np.stack([m.means_ for m in models]).astype(float),
            variances=np.stack([np.diagonal(m.covars_, axis1=1, axis2=2) for m in models]).astype(
                float
            ),
        )

    def model(self, m):
        """Model ``m`` as an hmmlearn ``GaussianHMM`` (e.g. to call its ``score``)."""
        from hmmlearn.hmm import GaussianHMM

        hmm = GaussianHMM(n_components=self.n_states, covariance_type="diag")
        hmm.n_features = self.n_features
        hmm.startprob_ = self.startprob[m].copy()
        hmm.transmat_ = self.transmat[m].copy()
        hmm.means_ = self.means[m].copy()
        hmm.covars_ = self.variances[m].copy()
        return hmm

    def subset(self, index):
        index = np.asarray(index)
        return HMMBank(
            self.startprob[index], self.transmat[index], self.means[index], self.variances[index]
        )

    @classmethod
    def concatenate(cls, banks):
        banks = list(banks)
        return cls(*(np.concatenate([getattr(b, f) for b in banks]) for f in _FIELDS))


_FIELDS = ("startprob", "transmat", "means", "variances")


def save_bank(path, bank, ids, lengths):
    """Save a bank with its clip ids and clip lengths (frames) to ``.npz``."""
    ids = np.asarray(ids, dtype=str)
    lengths = np.asarray(lengths, dtype=np.int64)
    if ids.shape != (len(bank),) or lengths.shape != (len(bank),):
        raise ValueError(f"ids and lengths must have one entry per model ({len(bank)})")
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        np.savez(fh, ids=ids, lengths=lengths, **{f: getattr(bank, f) for f in _FIELDS})


def load_bank(path):
    """Inverse of :func:`save_bank`: ``(bank, ids, lengths)``."""
    with np.load(path, allow_pickle=False) as z:
        bank = HMMBank(*(z[f] for f in _FIELDS))
        return bank, z["ids"].astype(str), z["lengths"]


def fit_clip_hmm(X, n_states=4, random_state=0, n_iter=20, tol=1e-3, min_covar=1e-3):
    """Fit one diagonal-covariance ``GaussianHMM`` to one clip's frames ``X`` (T, d).

    ``random_state`` should be named by the clip (the workflow's
    ``kclf_workflow.seeding.seed_for``), so a clip's model does not depend on which job
    fits it.
    """
    from hmmlearn.hmm import GaussianHMM

    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D (frames, features) array, got shape {X.shape}")
    if X.shape[0] < max(2, n_states):
        raise ValueError(
            f"X has {X.shape[0]} frames, fewer than n_states={n_states}: clip too short"
        )
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity")
    hmm = GaussianHMM(
        n_components=n_states,
        covariance_type="diag",
        n_iter=n_iter,
        tol=tol,
        min_covar=min_covar,
        random_state=random_state,
        implementation="log",
    )
    with warnings.catch_warnings():
        # hmmlearn warns when EM's log-likelihood dips by round-off; the fit is still usable
        warnings.simplefilter("ignore", RuntimeWarning)
        hmm.fit(X)
    # hmmlearn can leave a state unvisited with a zero row; make rows proper distributions
    T = hmm.transmat_
    empty = T.sum(axis=1) <= 0
    if np.any(empty):
        T = T.copy()
        T[empty] = 1.0 / n_states
        hmm.transmat_ = T
    return hmm


def _emission_weights(bank):
    """``W`` of shape (2d + 1, S * M) with ``[x**2, x, 1] @ W = log N(x | state s, model m)``
    in state-major order, so one matrix product gives a clip's (T, S, M) log emissions."""
    M, S, d = bank.means.shape
    prec = 1.0 / bank.variances.transpose(1, 0, 2).reshape(S * M, d)
    mu = bank.means.transpose(1, 0, 2).reshape(S * M, d)
    const = -0.5 * (d * LOG_2PI - np.log(prec).sum(1) + (mu**2 * prec).sum(1))
    return np.vstack([-0.5 * prec.T, (mu * prec).T, const[None, :]])


def _log_emissions_sm(X, W, S, M):
    X = np.asarray(X, dtype=float)
    Z = np.hstack([X * X, X, np.ones((X.shape[0], 1))])
    return (Z @ W).reshape(X.shape[0], S, M)


def log_emissions(X, bank):
    """``log N(x_t | means[m, s], diag variances[m, s])`` as a (T, M, S) array."""
    X = np.asarray(X, dtype=float)
    M, S, d = bank.means.shape
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"X must have shape (T, {d}) to match the bank, got {X.shape}")
    return _log_emissions_sm(X, _emission_weights(bank), S, M).transpose(0, 2, 1)


def _forward_log(logB, log_start, log_trans):
    """Pure log-space forward pass of one clip against models: logB (T, M, S) -> (M,)."""
    a = log_start + logB[0]
    for t in range(1, logB.shape[0]):
        a = logsumexp(a[:, :, None] + log_trans, axis=1) + logB[t]
    return logsumexp(a, axis=1)


def _forward_batch(logB, lengths, startprob, transmat):
    """Rescaled forward pass for a batch of clips against all models.

    logB : (Tmax, S, B, M) log emissions (states before clips so every per-step
    operation works on contiguous (B, M) slices), padded beyond each clip's length;
    clips sorted by decreasing length.  Overwritten.  Returns (B, M) log-likelihoods and a (B, M)
    mask of pairs whose rescaled pass underflowed (to be recomputed in log space).
    """
    Tmax, S, B, M = logB.shape
    # per (t, clip, model) shift so the largest state emission is exp(0) = 1
    c = logB[:, 0].copy()
    for s in range(1, S):  # elementwise maxima of slices: faster than a reduce over axis 1
        np.maximum(c, logB[:, s], out=c)
    c[~np.isfinite(c)] = 0.0
    E = logB  # overwritten in place: the emissions are not needed afterwards
    E -= c[:, None]
    np.exp(E, out=E)
    A = np.ascontiguousarray(transmat.transpose(1, 2, 0))  # (S, S, M): A[s, t, m]
    a = startprob.T[:, None, :] * E[0]
    s = a.sum(axis=0)
    bad = s <= 0
    with np.errstate(divide="ignore", invalid="ignore"):
        ll = np.log(s) + c[0]
        a /= s
        for t in range(1, Tmax):
            nb = int(np.count_nonzero(lengths > t))
            if nb == 0:
                break
            # active clips are a prefix of the batch
            an = np.einsum("sbm,stm->tbm", a[:, :nb], A)
            an *= E[t, :, :nb]
            s = an.sum(axis=0)
            bad[:nb] |= s <= 0
            ll[:nb] += np.log(s)
            ll[:nb] += c[t, :nb]
            an /= s
            a[:, :nb] = an
    return ll, bad


def cross_loglik(sequences, bank, max_bytes=256 * 2**20):
    """Cross log-likelihoods ``L[i, m] = log p(sequences[i] | bank model m)``.

    The forward algorithm runs for batches of clips (sorted by length, batch size chosen
    so the emission array stays under ``max_bytes``) against all ``M`` models at once.
    Equal to ``bank.model(m).score(sequences[i])`` up to round-off.

    Parameters
    ----------
    sequences : list of ndarray of shape (T_i, d)
    bank : HMMBank
    max_bytes : int
        Memory budget of one batch's emission array.

    Returns
    -------
    L : ndarray of shape (len(sequences), len(bank))
    """
    seqs = [np.asarray(X, dtype=float) for X in sequences]
    M, S, d = bank.means.shape
    for i, X in enumerate(seqs):
        if X.ndim != 2 or X.shape[1] != d or X.shape[0] < 1:
            raise ValueError(f"sequences[{i}] must have shape (T >= 1, {d}), got {X.shape}")
    lengths = np.array([X.shape[0] for X in seqs], dtype=np.int64)
    L = np.empty((len(seqs), M))
    order = np.argsort(-lengths, kind="stable")
    per_frame = M * S * 8 * 2  # logB/E and the shift
    W = _emission_weights(bank)
    buf = None
    with np.errstate(divide="ignore"):
        log_start = np.log(bank.startprob)
        log_trans = np.log(bank.transmat)
    k = 0
    while k < len(order):
        Tmax = int(lengths[order[k]])
        nb = max(1, int(max_bytes // (per_frame * Tmax)))
        idx = order[k : k + nb]
        k += nb
        if buf is None or buf.size < Tmax * S * len(idx) * M:
            # one buffer for all batches (each under max_bytes): no fresh pages per batch
            buf = np.empty(max(Tmax * S * len(idx) * M, int(max_bytes // 16)))
        logB = buf[: Tmax * S * len(idx) * M].reshape(Tmax, S, len(idx), M)
        for b, i in enumerate(idx):
            logB[: lengths[i], :, b, :] = _log_emissions_sm(seqs[i], W, S, M)
            logB[lengths[i] :, :, b, :] = 0.0
        ll, bad = _forward_batch(logB, lengths[idx], bank.startprob, bank.transmat)
        for b, m in zip(*np.nonzero(bad)):
            logBm = log_emissions(seqs[idx[b]], bank.subset([m]))
            ll[b, m] = _forward_log(logBm, log_start[m : m + 1], log_trans[m : m + 1])[0]
        L[idx] = ll
    return L


def hmm_divergence(L, lengths):
    """``D(i, j) = 1/2[(L_ii - L_ij)/T_i + (L_jj - L_ji)/T_j]`` from the square matrix ``L``.

    ``L[i, j] = log p(X_i | lambda_j)`` where model ``j`` was fitted to clip ``j``.
    """
    L = np.asarray(L, dtype=float)
    lengths = np.asarray(lengths, dtype=float)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be square (clips x their own models), got shape {L.shape}")
    if lengths.shape != (L.shape[0],) or np.any(lengths <= 0):
        raise ValueError(f"lengths must hold {L.shape[0]} positive frame counts")
    if not np.all(np.isfinite(L)):
        bad = np.argwhere(~np.isfinite(L))[:5].tolist()
        raise ValueError(f"L contains non-finite log-likelihoods, e.g. at {bad}")
    A = (np.diag(L)[:, None] - L) / lengths[:, None]
    return 0.5 * (A + A.T)


def median_tau(D):
    """Median heuristic for ``tau``: the median of the off-diagonal divergences."""
    D = np.asarray(D, dtype=float)
    off = D[~np.eye(D.shape[0], dtype=bool)]
    med = float(np.median(off)) if off.size else 0.0
    return med if med > 0 else 1.0


def hmm_kernel(D, tau=None):
    """``K = exp(-D / tau)``; ``tau=None`` uses :func:`median_tau`. Returns ``(K, tau)``."""
    D = np.asarray(D, dtype=float)
    tau = median_tau(D) if tau is None else float(tau)
    if not np.isfinite(tau) or tau <= 0:
        raise ValueError(f"tau must be a finite positive number, got {tau!r}")
    return np.exp(-D / tau), tau


def check_symmetric(K, rtol=1e-10, name="K"):
    """Raise ``ValueError`` unless ``K`` is square and symmetric to ``rtol``; return ``K``."""
    K = np.asarray(K, dtype=float)
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be square, got shape {K.shape}")
    err = np.max(np.abs(K - K.T), initial=0.0)
    scale = max(np.max(np.abs(K), initial=0.0), np.finfo(float).tiny)
    if err > rtol * scale:
        raise ValueError(f"{name} is not symmetric: max |K - K^T| = {err:.3g}")
    return K


def project_psd(K, *, return_eigenvalues=False):
    """Nearest PSD matrix in Frobenius norm: clip negative eigenvalues of ``(K + K^T)/2``.

    Returns
    -------
    K_psd : ndarray
    clipped_mass : float
        ``sum |negative eigenvalues| / sum |eigenvalues|`` (0 when ``K`` was PSD).
    eigenvalues : ndarray, only with ``return_eigenvalues=True``
        The eigenvalues of ``(K + K^T)/2`` before clipping, ascending.
    """
    K = check_symmetric(K, rtol=1e-8)
    K = 0.5 * (K + K.T)
    w, V = np.linalg.eigh(K)
    neg = w < 0
    total = np.abs(w).sum()
    clipped = float(-w[neg].sum() / total) if total > 0 else 0.0
    if not np.any(neg):
        Kp = K
    else:
        Kp = (V * np.maximum(w, 0.0)) @ V.T
        Kp = 0.5 * (Kp + Kp.T)
    return (Kp, clipped, w) if return_eigenvalues else (Kp, clipped)
