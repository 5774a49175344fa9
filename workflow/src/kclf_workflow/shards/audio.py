"""Clip shards of the audio chain (rules audio_hmm_shard, audio_loglik_shard,
audio_kernel): one shard's frame features and HMMs, the cross log-likelihood row blocks
and the HMM kernel assembled from them.

With ``audio.kernel.landmarks: m`` a row block holds only the landmark columns
(:mod:`kclf.features.landmarks`): its clips under the m landmark models, the m landmark clips
under its clips' models and its clips under their own models, ``2 m + 1`` forward passes
per clip instead of ``n``; the kernel rule then stores Nystroem features ``Phi``
(``Phi Phi^T`` approximates the full kernel) instead of ``K``.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, fields
from pathlib import Path

import numpy as np

from kclf.features.audio import clip_features
from kclf.features.hmm_kernel import (
    HMMBank,
    check_symmetric,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    hmm_kernel,
    project_psd,
)
from kclf.features.landmarks import (
    choose_landmarks,
    landmark_divergence,
    landmark_tau,
    nystroem_features,
)

from ..files import atomic_write, file_hash
from ..progress import Progress
from ..readers import load_npz, reading
from ..seeding import seed_for
from . import row_shards

logger = logging.getLogger(__name__)

__all__ = [
    "clip_model",
    "save_shard",
    "load_shards",
    "landmarks_of",
    "loglik_rows",
    "assemble_kernel",
]

_FIELDS = tuple(f.name for f in fields(HMMBank))


def _bank_arrays(bank):
    return {f: getattr(bank, f) for f in _FIELDS}


def _clip_key(path, feature_config, hmm_params, seed):
    """Cache key: the file's content hash and every setting the features and HMM depend on."""
    h = file_hash(path)
    settings = {"features": asdict(feature_config), "hmm": hmm_params, "seed": int(seed)}
    h.update(json.dumps(settings, sort_keys=True, default=str).encode())
    return h.hexdigest()[:20]


def clip_model(
    path, clip_id, feature_config, seed, n_states=4, n_iter=20, min_covar=1e-3, cache_dir=None
):
    """Frame features and fitted HMM of one clip: ``(X, bank of one model)``.

    The HMM is seeded by ``seed_for(seed, "hmm", clip_id)``.  With ``cache_dir`` the
    result is stored per clip as ``<clip_id>-<key>.npz`` (key: file content and settings),
    so re-sharding or adding clips never refits an unchanged clip.  Undecodable or
    unusable clips raise :class:`kclf.features.audio.BadAudioError`.
    """
    hmm_params = {"n_states": int(n_states), "n_iter": int(n_iter), "min_covar": float(min_covar)}
    cache = None
    if cache_dir is not None:
        key = _clip_key(path, feature_config, hmm_params, seed)
        cache = Path(cache_dir) / f"{clip_id}-{key}.npz"
        if cache.is_file():
            z = load_npz(cache, "cached clip HMM")
            with reading(cache, "cached clip HMM"):
                return z["X"], HMMBank(*(z[f] for f in _FIELDS))
    X = clip_features(path, feature_config)
    hmm = fit_clip_hmm(
        X,
        n_states=n_states,
        random_state=seed_for(seed, "hmm", clip_id),
        n_iter=n_iter,
        min_covar=min_covar,
    )
    bank = HMMBank.from_models([hmm])
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)

        def _write(tmp):
            with open(tmp, "wb") as fh:
                np.savez(fh, X=X, **_bank_arrays(bank))

        atomic_write(cache, _write)
    return X, bank


def save_shard(path, bank, ids, features, bad=()):
    """One shard of clips: their HMMs, ids, frame features and the clips left out.

    ``features`` is a list of (T_i, d) arrays, stored concatenated with offsets;
    ``bad`` lists ``(path, reason)`` of clips skipped as unusable.
    """
    lengths = np.array([F.shape[0] for F in features], dtype=np.int64)
    d = bank.n_features if len(ids) else 0
    frames = np.concatenate(features) if features else np.zeros((0, d))
    bad = np.array([f"{p}\t{r}" for p, r in bad], dtype=str)

    def _write(tmp):
        with open(tmp, "wb") as fh:
            np.savez(
                fh,
                ids=np.asarray(ids, dtype=str),
                lengths=lengths,
                frames=frames,
                bad=bad,
                **_bank_arrays(bank),
            )

    atomic_write(path, _write)


def load_shards(paths):
    """Concatenate shards saved by :func:`save_shard`: ``(bank, ids, features, bad)``."""
    banks, ids, feats, bad = [], [], [], []
    for p in paths:
        z = load_npz(p, "HMM shard")
        with reading(p, "HMM shard"):
            if z["ids"].size:
                banks.append(HMMBank(*(z[f] for f in _FIELDS)))
                ids.extend(z["ids"].astype(str).tolist())
                edges = np.concatenate([[0], np.cumsum(z["lengths"])])
                frames = z["frames"]
                feats.extend(frames[a:b] for a, b in zip(edges[:-1], edges[1:]))
            bad.extend(tuple(s.split("\t", 1)) for s in z["bad"].astype(str).tolist())
    if not banks:
        raise ValueError("no usable clips in the shards: every clip was skipped")
    return HMMBank.concatenate(banks), ids, feats, bad


def landmarks_of(n_clips, landmarks, seed):
    """The landmark clips' indices (in the shards' clip order): ``min(landmarks, n_clips)``
    drawn by :func:`kclf.features.landmarks.choose_landmarks` from the stream
    ``seed_for(seed, "audio", "landmarks")``."""
    return choose_landmarks(n_clips, landmarks, seed_for(seed, "audio", "landmarks"))


def loglik_rows(shard_paths, r, n_shards, landmarks=None, seed=None):
    """Row block ``r`` of :func:`~kclf_workflow.shards.row_shards` as arrays to save.

    ``landmarks=None``: ``L`` (rows x every clip's model).  Else with the landmark clips
    ``J`` (:func:`landmarks_of`): ``L`` = rows x the landmark models, ``L_from`` = the
    landmark clips x the rows' models, ``self`` = each row's clip under its own model.
    """
    bank, ids, feats, _ = load_shards(shard_paths)
    rows = row_shards(len(ids), n_shards)[int(r)]
    out = {"rows": rows, "ids": np.asarray(ids, dtype=str)[rows]}
    mine = [feats[i] for i in rows]
    progress = Progress(logger, "log-likelihood blocks", 1 if landmarks is None else 3)
    if landmarks is None:
        out["L"] = cross_loglik(mine, bank)
        progress.step(f"{rows.size} clips x {len(bank)} models")
        return out
    J = landmarks_of(len(ids), landmarks, seed)
    out["landmarks"] = J
    if rows.size == 0:
        out.update(L=np.zeros((0, J.size)), L_from=np.zeros((J.size, 0)), self=np.zeros(0))
        return out
    out["L"] = cross_loglik(mine, bank.subset(J))
    progress.step(f"{rows.size} clips x {J.size} landmark models")
    out["L_from"] = cross_loglik([feats[j] for j in J], bank.subset(rows))
    progress.step(f"{J.size} landmark clips x {rows.size} models")
    out["self"] = np.array([cross_loglik([feats[i]], bank.subset([i]))[0, 0] for i in rows])
    progress.step(f"{rows.size} clips under their own models")
    return out


def _read_rows(row_paths, ids, J=None):
    """Fill the blocks of ``row_paths`` into their places; name a stale or missing one."""
    n = len(ids)
    m = n if J is None else J.size
    L, L_from, own = np.full((n, m), np.nan), np.full((m, n), np.nan), np.full(n, np.nan)
    for path in row_paths:
        z = load_npz(path, "log-likelihood row block")
        with reading(path, "log-likelihood row block"):
            rows, block_ids, block = z["rows"], z["ids"], z["L"]
            if J is not None:
                block_from, block_own = z["L_from"], z["self"]
        if block_ids.tolist() != [ids[i] for i in rows]:
            raise ValueError(f"{path}: row ids do not match the HMM shards (stale shard?)")
        if (J is None) != ("landmarks" not in z) or (
            J is not None and not np.array_equal(z["landmarks"], J)
        ):
            raise ValueError(f"{path}: its landmark columns are not this kernel's (stale?)")
        L[rows] = block
        if J is not None:
            L_from[:, rows] = block_from
            own[rows] = block_own
    if np.isnan(L).any() or (J is not None and np.isnan(own).any()):
        missing = np.flatnonzero(np.isnan(L).any(axis=1))[:5].tolist()
        raise ValueError(f"row blocks {list(row_paths)} leave rows {missing}... unfilled")
    return L, L_from, own


def assemble_kernel(shard_paths, row_paths, tau=None, landmarks=None, seed=None, tau_factors=None):
    """The HMM kernel from the row blocks: ``(arrays to save, summary)``.

    ``tau_factors`` (full kernel, ``tau=None``): the width grid of the fits' tau search,
    ``taus = median * tau_factors``; the arrays then also hold ``Ks`` (n_taus, n, n), the
    kernel at each width PSD-projected on its own (one projection per tau), and
    ``taus``; the summary lists them.  A fixed ``tau`` (or landmarks) ignores it.

    Full (``landmarks=None``): ``K`` (PSD-projected), ``D``, ``tau``, ``ids``.  With
    landmarks: ``Phi`` (:func:`kclf.features.landmarks.nystroem_features` of the landmark columns
    ``K[:, J]``), ``K_nm``, ``D_nm``, ``landmarks``, ``tau``, ``ids``; ``tau=None`` is the
    median of ``D`` over the off-diagonal entries of the columns at hand (all of them for
    the full kernel).  The summary's ``clipped_mass`` is the negative eigenvalue mass of
    ``K`` (with landmarks of ``K[J, J]``, whose non-positive eigenvalues Nystroem drops).
    """
    _, ids, feats, bad = load_shards(shard_paths)
    lengths = np.array([F.shape[0] for F in feats], dtype=float)
    J = None if landmarks is None else landmarks_of(len(ids), landmarks, seed)
    L, L_from, own = _read_rows(row_paths, ids, J)
    if J is None:
        D = hmm_divergence(L, lengths)
        K, tau_ = hmm_kernel(D, tau)
        K_sq = K
        rule = "median of off-diagonal D"
    else:
        D = landmark_divergence(L, L_from, own, lengths, J)
        tau_ = landmark_tau(D, J) if tau is None else float(tau)
        K = np.exp(-D / tau_)
        K_sq = K[J]
        rule = "median of D to the landmarks"
    asym = float(np.max(np.abs(K_sq - K_sq.T)))
    check_symmetric(K_sq)
    Kpsd, clipped, w = project_psd(K_sq, return_eigenvalues=True)
    summary = {
        "n_clips": len(ids),
        "n_bad_clips": len(bad),
        "tau": tau_,
        "tau_rule": rule if tau is None else "config",
        "max_asymmetry": asym,
        "min_eigenvalue_before": float(w[0]),
        "clipped_mass": clipped,
        "mean_frames": float(lengths.mean()),
    }
    if J is None:
        arrays = {"K": Kpsd, "D": D, "tau": tau_, "ids": np.array(ids)}
        if tau is None and tau_factors is not None:
            taus = tau_ * np.sort(np.asarray(tau_factors, dtype=float))
            arrays["Ks"] = np.stack([project_psd(hmm_kernel(D, t)[0])[0] for t in taus])
            arrays["taus"] = taus
            summary.update(taus=taus.tolist(), tau_factors=np.sort(tau_factors).tolist())
        return arrays, summary
    Phi = nystroem_features(K, J)
    summary.update(landmarks=int(J.size), rank=int(Phi.shape[1]))
    arrays = {"Phi": Phi, "K_nm": K, "D_nm": D, "landmarks": J, "tau": tau_, "ids": np.array(ids)}
    return arrays, summary
