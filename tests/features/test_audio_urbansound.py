"""The real UrbanSound8K clips end to end: features -> one HMM per clip -> HMM kernel."""

from pathlib import Path

import numpy as np
import pytest
from hmm_reference import naive_cross_loglik

from kclf.features.audio import AudioFeatureConfig, clip_features
from kclf.features.hmm_kernel import (
    HMMBank,
    check_symmetric,
    cross_loglik,
    fit_clip_hmm,
    hmm_divergence,
    hmm_kernel,
    project_psd,
)
from kclf_workflow.datasets.audio_collections import load_urbansound8k
from kclf_workflow.seeding import seed_for

ROOT = Path(__file__).resolve().parents[3] / "shared" / "data" / "urbansound8k_sample/UrbanSound8K"


@pytest.fixture(scope="module")
def urban():
    # module-scoped (features and HMMs are computed once), so it checks the mirror itself
    if not ROOT.is_dir():
        pytest.skip(f"../shared/data not present: no real UrbanSound8K clips at {ROOT}")
    df = load_urbansound8k(ROOT, missing="drop")
    cfg = AudioFeatureConfig(sample_rate=16000)
    feats = [clip_features(p, cfg) for p in df["path"]]
    models = [
        fit_clip_hmm(F, n_states=3, random_state=seed_for(0, "hmm", cid), n_iter=10)
        for cid, F in zip(df["id"], feats)
    ]
    return df, feats, models


def test_real_clips_give_a_finite_symmetric_psd_kernel(urban):
    df, feats, models = urban
    assert len(feats) == 15
    for F in feats:
        assert F.shape[1] == 32 and F.shape[0] >= 20 and np.all(np.isfinite(F))
    L = cross_loglik(feats, HMMBank.from_models(models))
    assert np.all(np.isfinite(L))
    # each clip is best explained by its own model, up to EM's local optima
    assert np.mean(np.argmax(L, axis=1) == np.arange(len(L))) >= 0.8
    D = hmm_divergence(L, [F.shape[0] for F in feats])
    assert np.all(np.isfinite(D))
    K, tau = hmm_kernel(D)
    assert tau > 0
    check_symmetric(K)
    Kp, clipped = project_psd(K)
    assert 0.0 <= clipped < 0.5
    assert np.linalg.eigvalsh(Kp).min() >= -1e-10 * np.abs(Kp).max()
    np.testing.assert_allclose(np.diag(K), 1.0)
    # slices of one recording (same fsID) are closer than clips of other classes
    cls = np.array([t[0] for t in df["tags"]])
    same = cls[:, None] == cls[None, :]
    off = ~np.eye(len(cls), dtype=bool)
    assert np.median(K[same & off]) > np.median(K[~same])


def test_real_clips_batched_equals_hmmlearn(urban):
    _, feats, models = urban
    sub = feats[:6]
    np.testing.assert_allclose(
        cross_loglik(sub, HMMBank.from_models(models[:6])),
        naive_cross_loglik(sub, models[:6]),
        rtol=1e-8,
    )
