"""Generated audio clips in the Freesound-style layout (the offline stand-in for Freesound).

Each clip is a few seconds of low background noise with one to three kinds of sound
event, and its tags are the kinds it contains:

* ``tone``: pure sine notes with a smooth envelope;
* ``chirp``: frequency sweeps (up or down, log or linear);
* ``noise``: short band-passed noise bursts with a sharp attack;
* ``harmonic``: harmonic stacks (a fundamental with decaying overtones), held notes.

The clips exercise the decoding paths a real collection needs: mixed sample rates
(16, 22.05, 44.1, 48 kHz), some stereo files, and three WAV sample formats (16-bit PCM,
24-bit PCM, 32-bit float).  Every clip comes from its own seed stream (``seed``, its
id), so asking for more clips re-creates the first ones byte for byte, and a file whose
content is unchanged is not rewritten (its modification time stays).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from ..files import write_if_changed
from ..seeding import rng_for

EVENT_KINDS = ("tone", "chirp", "noise", "harmonic")
SAMPLE_RATES = (16000, 22050, 44100, 48000)
WAV_SUBTYPES = ("PCM_16", "PCM_24", "FLOAT")


def clip_ids(n_clips):
    return [f"synth{k:05d}" for k in range(1, n_clips + 1)]


def _envelope(n, sr, rng, attack):
    t = np.arange(n) / sr
    a = max(attack, 1.0 / sr)
    env = np.minimum(t / a, 1.0) * np.exp(-t * rng.uniform(0.5, 3.0) / max(n / sr, 1e-3))
    release = min(n, int(0.02 * sr))
    if release > 1:
        env[-release:] *= np.linspace(1.0, 0.0, release)
    return env


def _event(kind, n, sr, rng):
    t = np.arange(n) / sr
    nyq = sr / 2
    if kind == "tone":
        f = rng.uniform(300, 1500)
        return np.sin(2 * np.pi * f * t + rng.uniform(0, 2 * np.pi)) * _envelope(n, sr, rng, 0.05)
    if kind == "chirp":
        f0, f1 = rng.uniform(200, 800), rng.uniform(1500, min(6000, 0.8 * nyq))
        if rng.random() < 0.5:
            f0, f1 = f1, f0
        dur = n / sr
        if rng.random() < 0.5:
            phase = 2 * np.pi * (f0 * t + (f1 - f0) * t**2 / (2 * dur))
        else:
            k = (f1 / f0) ** (1 / dur)
            phase = 2 * np.pi * f0 * (k**t - 1) / np.log(k)
        return np.sin(phase) * _envelope(n, sr, rng, 0.01)
    if kind == "noise":
        x = rng.standard_normal(n)
        lo = rng.uniform(500, 2000)
        hi = min(lo * rng.uniform(2, 4), 0.9 * nyq)
        X = np.fft.rfft(x)
        f = np.fft.rfftfreq(n, 1 / sr)
        X[(f < lo) | (f > hi)] = 0
        x = np.fft.irfft(X, n)
        x /= max(np.max(np.abs(x)), 1e-12)
        return x * _envelope(n, sr, rng, 0.002)
    if kind == "harmonic":
        f0 = rng.uniform(100, 350)
        x = np.zeros(n)
        for h in range(1, 9):
            if h * f0 < 0.9 * nyq:
                x += np.sin(2 * np.pi * h * f0 * t + rng.uniform(0, 2 * np.pi)) / h**1.2
        x /= max(np.max(np.abs(x)), 1e-12)
        return x * _envelope(n, sr, rng, 0.08)
    raise ValueError(f"unknown event kind {kind!r}; expected one of {EVENT_KINDS}")


def _plan(rng, duration_range):
    """The first draws of a clip's stream: sample rate, length, duration, event kinds."""
    sr = int(rng.choice(SAMPLE_RATES))
    duration = float(rng.uniform(*duration_range))
    n = int(duration * sr)
    n_kinds = int(rng.choice([1, 2, 3], p=[0.45, 0.4, 0.15]))
    kinds = sorted(rng.choice(len(EVENT_KINDS), size=n_kinds, replace=False).tolist())
    return sr, n, duration, kinds


def clip_info(seed, clip_id, duration_range=(3.0, 6.0)):
    """``(tags, duration in seconds, sample_rate)`` of a clip, without synthesising it
    (the same draws :func:`synth_clip` starts with): a collection's metadata is known
    before its files are written."""
    sr, n, _, kinds = _plan(rng_for(seed, "synthetic_audio", clip_id), duration_range)
    return [EVENT_KINDS[k] for k in kinds], round(n / sr, 6), sr


def synth_clip(seed, clip_id, duration_range=(3.0, 6.0)):
    """One clip: ``(signal (n,) or (n, 2), sample_rate, tags, wav_subtype)``."""
    rng = rng_for(seed, "synthetic_audio", clip_id)
    sr, n, duration, kinds = _plan(rng, duration_range)
    x = 0.01 * rng.standard_normal(n)
    for k in kinds:
        for _ in range(int(rng.integers(1, 4))):
            length = int(rng.uniform(0.3, min(1.5, duration / 2)) * sr)
            start = int(rng.integers(0, n - length))
            x[start : start + length] += rng.uniform(0.2, 0.6) * _event(
                EVENT_KINDS[k], length, sr, rng
            )
    x /= max(1.0, np.max(np.abs(x)) / 0.9)
    if rng.random() < 0.3:
        right = x * rng.uniform(0.6, 1.0) + 0.005 * rng.standard_normal(n)
        x = np.stack([x, np.clip(right, -1, 1)], axis=1)
    subtype = str(rng.choice(WAV_SUBTYPES))
    return x, sr, [EVENT_KINDS[k] for k in kinds], subtype


def _wav_bytes(x, sr, subtype):
    import soundfile as sf

    buf = io.BytesIO()
    sf.write(buf, x, sr, subtype=subtype, format="WAV")
    return buf.getvalue()


def _check_range(duration_range):
    lo, hi = duration_range
    if not 0.5 <= lo <= hi:
        raise ValueError(f"duration_range must satisfy 0.5 <= low <= high, got {duration_range}")


def write_clips(root, ids, seed=0, duration_range=(3.0, 6.0)):
    """Write the clips ``ids`` as ``root/audio/<id>.wav`` (only changed files are written);
    return their metadata rows (the columns of :func:`make_synthetic_collection`)."""
    _check_range(duration_range)
    root = Path(root)
    rows = []
    for cid in ids:
        x, sr, tags, subtype = synth_clip(seed, cid, duration_range)
        rel = f"audio/{cid}.wav"
        write_if_changed(root / rel, _wav_bytes(x, sr, subtype))
        rows.append(
            {
                "id": cid,
                "file": rel,
                "tags": " ".join(tags),
                "duration": round(x.shape[0] / sr, 6),
                "sample_rate": sr,
                "channels": 1 if x.ndim == 1 else 2,
                "subtype": subtype,
            }
        )
    return rows


def make_synthetic_collection(root, n_clips, seed=0, duration_range=(3.0, 6.0)):
    """Write ``n_clips`` generated clips into ``root`` in the Freesound-style layout.

    Layout: ``root/audio/<id>.wav`` and ``root/metadata.csv`` with columns ``id``,
    ``file`` (relative to ``root``), ``tags`` (space-separated), ``duration`` (seconds),
    ``sample_rate``, ``channels``, ``subtype``.  Returns the metadata as a DataFrame.
    """
    if int(n_clips) < 1:
        raise ValueError(f"n_clips must be >= 1, got {n_clips}")
    rows = write_clips(root, clip_ids(int(n_clips)), seed, duration_range)
    meta = pd.DataFrame(rows)
    write_if_changed(Path(root) / "metadata.csv", meta.to_csv(index=False).encode("utf-8"))
    return meta
