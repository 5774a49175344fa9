"""Frame features of audio clips (librosa), one row per 20 ms hop.

Per frame (columns in :data:`FEATURE_NAMES` order):

* ``n_mfcc`` MFCCs (``librosa.feature.mfcc``) and, with ``deltas=True``, their deltas
  (``librosa.feature.delta``);
* six descriptors in the spirit of Wichern et al. (2010), "Segmentation, indexing, and
  retrieval for environmental and natural sounds" (the HMM indexing work the LSPC-new
  paper's Freesound kernel builds on), as librosa/numpy equivalents:

  ============================  ===========================================================
  ``loudness``                  A-weighted power of the STFT frame in dB
                                (``librosa.A_weighting``), floored at ``-100`` dB
  ``log_centroid``              ``log2`` of ``librosa.feature.spectral_centroid`` / 1 kHz
  ``spectral_sparsity``         ``log2(n * max / sum)`` of the frame's ``n``-bin magnitude
                                spectrum (Wichern's l_inf / l_1 ratio, log-scaled: 0 = flat)
  ``temporal_sparsity``         the same ratio for ``|x|`` over the frame's samples
  ``transient_index``           ``log1p`` of ``librosa.onset.onset_strength`` (spectral flux,
                                librosa's stand-in for Wichern's MFCC-difference index)
  ``harmonicity``               maximum of the frame's normalised autocorrelation over lags
                                of 50-1000 Hz pitch periods (Wichern's harmonicity)
  ============================  ===========================================================

Clips are mixed down to mono, resampled to one rate (``librosa.resample``, soxr) and
checked by one rule: a clip is *unusable* when it is shorter than ``min_seconds`` or its
peak is below ``silence_db`` dBFS (digital silence gives degenerate HMMs); unusable and
undecodable files raise :class:`BadAudioError` naming the path, which callers can turn
into "skip and list".  An undecodable file's reason names, in one line, each decoder
librosa tried (soundfile / libsndfile, then audioread and its backends), what it said,
and what to install or do (:func:`undecodable_reason`).
"""

from __future__ import annotations

import functools
import logging
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

__all__ = [
    "BadAudioError",
    "AudioFeatureConfig",
    "load_audio",
    "check_usable",
    "frame_features",
    "clip_features",
    "features_for_clips",
]

logger = logging.getLogger(__name__)

DESCRIPTORS = (
    "loudness",
    "log_centroid",
    "spectral_sparsity",
    "temporal_sparsity",
    "transient_index",
    "harmonicity",
)


class BadAudioError(ValueError):
    """A clip that cannot be decoded or is unusable (too short, silent); names the path."""

    def __init__(self, path, reason):
        self.path = str(path)
        self.reason = str(reason)
        super().__init__(f"{self.path}: {self.reason}")


@dataclass(frozen=True)
class AudioFeatureConfig:
    """Settings of :func:`clip_features` (defaults: 22.05 kHz, 20 ms hop, 13 MFCCs + deltas)."""

    sample_rate: int = 22050
    hop_seconds: float = 0.02
    n_mfcc: int = 13
    deltas: bool = True
    descriptors: bool = True
    min_seconds: float = 0.25
    silence_db: float = -60.0
    max_seconds: float | None = None

    def __post_init__(self):
        if int(self.sample_rate) < 4000:
            raise ValueError(f"sample_rate must be >= 4000 Hz, got {self.sample_rate}")
        if not 0.001 <= self.hop_seconds <= 0.5:
            raise ValueError(f"hop_seconds must be in [0.001, 0.5], got {self.hop_seconds}")
        if self.n_mfcc < 1:
            raise ValueError(f"n_mfcc must be >= 1, got {self.n_mfcc}")
        if self.max_seconds is not None and self.max_seconds <= self.min_seconds:
            raise ValueError("max_seconds must be larger than min_seconds")

    @property
    def hop_length(self):
        return int(round(self.hop_seconds * self.sample_rate))

    @property
    def n_fft(self):
        """Window: the power of two covering two hops (2048 samples at 22.05 kHz / 20 ms)."""
        return int(2 ** np.ceil(np.log2(2 * self.hop_length)))

    @property
    def feature_names(self):
        names = [f"mfcc{k}" for k in range(self.n_mfcc)]
        if self.deltas:
            names += [f"delta_mfcc{k}" for k in range(self.n_mfcc)]
        if self.descriptors:
            names += list(DESCRIPTORS)
        return names


def wav_frames(path):
    """``(declared, present)`` sample frames of a RIFF/WAVE file: what its ``data`` chunk
    header declares and what the file holds (what a decoder can return); ``None`` for
    other formats and for streamed WAVs whose size field is a placeholder."""
    import struct

    path = Path(path)
    with open(path, "rb") as fh:
        head = fh.read(12)
        if len(head) < 12 or head[:4] != b"RIFF" or head[8:12] != b"WAVE":
            return None
        size = path.stat().st_size
        block_align = None
        while True:
            chunk = fh.read(8)
            if len(chunk) < 8:
                return None
            cid, length = chunk[:4], struct.unpack("<I", chunk[4:])[0]
            if cid == b"fmt ":
                fmt = fh.read(length + (length & 1))
                if len(fmt) >= 14:
                    block_align = struct.unpack("<H", fmt[12:14])[0]
            elif cid == b"data":
                if not block_align or length in (0, 0xFFFFFFFF):
                    return None
                present = max(0, size - fh.tell())
                return length // block_align, min(length, present) // block_align
            else:
                fh.seek(length + (length & 1), 1)


def load_audio(path, sample_rate=22050, max_seconds=None):
    """Decode ``path`` (any format soundfile or audioread reads), mix down to mono, resample.

    Raises :class:`BadAudioError` with the path when the file cannot be decoded, or when
    it is a truncated WAV (fewer sample frames in the file than its header declares, which
    decoders silently accept).
    """
    import librosa

    try:
        frames = wav_frames(path)
    except OSError:  # absent or unreadable: the decoder below says so, naming the path
        frames = None
    if frames is not None and frames[1] < frames[0]:
        raise BadAudioError(
            path, f"truncated: the header declares {frames[0]} frames, the file holds {frames[1]}"
        )

    try:
        with warnings.catch_warnings():
            # librosa warns before falling back from soundfile to audioread: both are tried
            warnings.simplefilter("ignore", UserWarning)
            warnings.simplefilter("ignore", FutureWarning)
            y, sr = librosa.load(
                str(path), sr=None, mono=False, duration=max_seconds, dtype=np.float32
            )
    except Exception as exc:  # soundfile, audioread and EOF errors all mean "cannot decode"
        raise BadAudioError(path, undecodable_reason(path, exc)) from exc
    y = np.asarray(y, dtype=np.float64)
    if y.ndim == 2:
        y = y.mean(axis=0)
    if y.size == 0:
        raise BadAudioError(path, "no samples")
    if not np.all(np.isfinite(y)):
        raise BadAudioError(path, "samples contain NaN or infinity")
    if sr != sample_rate:
        y = librosa.resample(y, orig_sr=sr, target_sr=sample_rate)
    return y, sample_rate


def _one_line(text):
    return " ".join(str(text).split())


def _error_text(exc):
    """An exception as ``Type: message`` on one line (a soundfile error by libsndfile's
    own words, without the path it repeats)."""
    message = getattr(exc, "error_string", None) or str(exc)
    message = _one_line(message).rstrip(".")
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _version(package):
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"


@functools.cache
def _audioread_backends():
    """``(names, has_ffmpeg)`` of the audioread backends on this machine (``rawread``:
    the standard library's WAV / AIFF / AU readers; ``ffdec``: ffmpeg; ``gstdec``:
    GStreamer; ``maddec``: MAD; ``macca``: Core Audio), None when audioread is absent."""
    try:
        import audioread
    except ImportError:
        return None
    names = [b.__module__.rsplit(".", 1)[-1] for b in audioread.available_backends()]
    return tuple(names), "ffdec" in names


def undecodable_reason(path, exc):
    """Why ``path`` could not be decoded, in one line: each decoder tried with its version
    and its error, then what to install or do.

    ``exc`` is what decoding raised (librosa tries soundfile, then audioread).  E.g.
    ``cannot decode audio: soundfile 0.13.1 (libsndfile 1.2.2): LibsndfileError: Format
    not recognised; audioread 3.0.1 (backends: rawread): NoBackendError (no backend reads
    it); install ffmpeg (e.g. apt-get install ffmpeg) for audioread's ffmpeg backend, or
    convert the file to WAV or FLAC``.
    """
    if not Path(path).is_file():
        return "cannot decode audio: no such file"
    import soundfile

    try:
        soundfile.info(str(path))
        sf_said = "reads the header, not the samples"
    except Exception as sf_exc:
        sf_said = _error_text(sf_exc)
    tried = [
        f"soundfile {_version('soundfile')} (libsndfile "
        f"{getattr(soundfile, '__libsndfile_version__', '?')}): {sf_said}"
    ]
    backends = _audioread_backends()
    if backends is None:
        tried.append("audioread not installed")
        todo = "install audioread and ffmpeg, or convert the file to WAV or FLAC"
    else:
        names, has_ffmpeg = backends
        said = _error_text(exc)
        if type(exc).__name__ == "NoBackendError":
            said = "NoBackendError (no backend reads it)"
        tried.append(f"audioread {_version('audioread')} (backends: {', '.join(names)}): {said}")
        if has_ffmpeg:
            todo = "the file looks damaged or is not audio: re-export it as WAV or FLAC"
        else:
            todo = (
                "install ffmpeg (e.g. apt-get install ffmpeg) for audioread's ffmpeg backend, "
                "or convert the file to WAV or FLAC"
            )
    reason = f"cannot decode audio: {'; '.join(tried)}; {todo}"
    logger.debug("%s: %s", path, reason)
    return _one_line(reason)


def check_usable(y, sr, config, path="<array>"):
    """The short/silent rule: raise :class:`BadAudioError` for unusable clips."""
    seconds = y.size / sr
    if seconds < config.min_seconds:
        raise BadAudioError(path, f"too short: {seconds:.3f} s < min_seconds={config.min_seconds}")
    peak = float(np.max(np.abs(y)))
    peak_db = 20 * np.log10(peak) if peak > 0 else -np.inf
    if peak_db < config.silence_db:
        raise BadAudioError(
            path, f"silent: peak {peak_db:.1f} dBFS < silence_db={config.silence_db}"
        )


def frame_features(y, sr, config=None):
    """Frame features of a mono signal ``y`` at rate ``sr``: (n_frames, n_features) array."""
    import librosa

    config = config or AudioFeatureConfig(sample_rate=sr)
    hop, n_fft = config.hop_length, config.n_fft
    y = np.asarray(y, dtype=np.float64)
    S = np.abs(librosa.stft(y, n_fft=n_fft, hop_length=hop, center=True))
    P = S**2
    cols = []
    mel = librosa.feature.melspectrogram(S=P, sr=sr, n_fft=n_fft, hop_length=hop)
    mfcc = librosa.feature.mfcc(S=librosa.power_to_db(mel, amin=1e-10), n_mfcc=config.n_mfcc)
    cols.append(mfcc)
    if config.deltas:
        width = min(9, mfcc.shape[1] if mfcc.shape[1] % 2 else mfcc.shape[1] - 1)
        if width >= 3:
            cols.append(librosa.feature.delta(mfcc, width=width, mode="nearest"))
        else:
            cols.append(np.zeros_like(mfcc))
    if config.descriptors:
        cols.append(_descriptors(y, sr, S, P, hop, n_fft))
    F = np.vstack(cols).T
    return np.ascontiguousarray(F)


def _descriptors(y, sr, S, P, hop, n_fft):
    import librosa

    freqs = librosa.fft_frequencies(sr=sr, n_fft=n_fft)
    with np.errstate(divide="ignore"):  # A-weighting's log at 0 Hz; min_db floors it
        weights = librosa.db_to_power(librosa.A_weighting(freqs, min_db=-100.0))
    loud = 10 * np.log10(np.maximum((weights[:, None] * P).sum(0) / n_fft, 1e-10))
    centroid = librosa.feature.spectral_centroid(S=S, sr=sr, n_fft=n_fft)[0]
    log_centroid = np.log2(np.maximum(centroid, 20.0) / 1000.0)
    spec_sparsity = _log_sparsity(S)
    frames = librosa.util.frame(
        np.pad(y, n_fft // 2, mode="constant"), frame_length=n_fft, hop_length=hop
    )
    temp_sparsity = _log_sparsity(np.abs(frames))
    onset = librosa.onset.onset_strength(S=librosa.power_to_db(P, amin=1e-10), sr=sr)
    transient = np.log1p(np.maximum(onset, 0.0))
    harmonicity = _harmonicity(frames, sr)
    n = S.shape[1]
    rows = [loud, log_centroid, spec_sparsity, temp_sparsity, transient, harmonicity]
    return np.vstack([_fit_length(r, n) for r in rows])


def _log_sparsity(A):
    """``log2(n * max / sum)`` per column: 0 for a flat column, ``log2(n)`` for one spike."""
    n = A.shape[0]
    return np.log2(np.maximum(n * A.max(0) / np.maximum(A.sum(0), 1e-12), 1.0))


def _harmonicity(frames, sr, fmin=50.0, fmax=1000.0):
    """Max normalised autocorrelation over pitch lags in [sr/fmax, sr/fmin]."""
    n = frames.shape[0]
    x = frames - frames.mean(0)
    spec = np.fft.rfft(x, n=2 * n, axis=0)
    ac = np.fft.irfft(np.abs(spec) ** 2, axis=0)[:n]
    lo, hi = int(sr / fmax), min(int(sr / fmin), n - 1)
    energy = ac[0]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = ac[lo : hi + 1] / energy
    r = np.where(energy > 1e-12, r.max(0), 0.0)
    return np.clip(r, 0.0, 1.0)


def _fit_length(v, n):
    v = np.asarray(v, dtype=float).ravel()
    if v.size >= n:
        return v[:n]
    return np.pad(v, (0, n - v.size), mode="edge")


def clip_features(path, config=None):
    """Load ``path`` and return its frame features (n_frames, n_features).

    Raises :class:`BadAudioError` (with the path) for undecodable or unusable clips.
    """
    config = config or AudioFeatureConfig()
    y, sr = load_audio(path, config.sample_rate, config.max_seconds)
    check_usable(y, sr, config, path)
    F = frame_features(y, sr, config)
    if not np.all(np.isfinite(F)):
        raise BadAudioError(path, "features contain NaN or infinity")
    return F


def features_for_clips(paths, config=None, on_bad="raise"):
    """Features of many clips.

    ``on_bad="raise"`` re-raises the first :class:`BadAudioError`; ``"skip"`` leaves the
    clip out.  Returns ``(features, bad)``: a dict path -> array of the good clips and a
    list of ``(path, reason)`` for the skipped ones.
    """
    if on_bad not in ("raise", "skip"):
        raise ValueError(f"on_bad must be 'raise' or 'skip', got {on_bad!r}")
    feats, bad = {}, []
    for p in paths:
        try:
            feats[str(p)] = clip_features(p, config)
        except BadAudioError as exc:
            if on_bad == "raise":
                raise
            bad.append((exc.path, exc.reason))
    return feats, bad
