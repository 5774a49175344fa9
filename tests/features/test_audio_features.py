"""Frame features: librosa MFCCs, the Wichern-style descriptors, decoding and the bad-clip rule."""

import numpy as np
import pytest
import soundfile as sf

from kclf.features.audio import (
    DESCRIPTORS,
    AudioFeatureConfig,
    BadAudioError,
    clip_features,
    features_for_clips,
    frame_features,
    load_audio,
)

SR = 22050
CFG = AudioFeatureConfig(sample_rate=SR)


def _tone(f=1000.0, seconds=1.0, sr=SR, amp=0.5):
    t = np.arange(int(seconds * sr)) / sr
    return amp * np.sin(2 * np.pi * f * t)


def _col(name):
    return CFG.feature_names.index(name)


def test_frame_grid_and_names():
    y = _tone(seconds=1.0)
    F = frame_features(y, SR, CFG)
    assert CFG.hop_length == 441  # 20 ms
    assert F.shape == (1 + y.size // 441, 2 * 13 + len(DESCRIPTORS))
    assert len(CFG.feature_names) == F.shape[1]
    assert CFG.feature_names[-6:] == list(DESCRIPTORS)


def test_mfcc_columns_are_librosas():
    import librosa

    y = np.random.default_rng(0).normal(size=SR) * 0.1 + _tone(440)
    F = frame_features(y, SR, CFG)
    ref = librosa.feature.mfcc(y=y, sr=SR, n_mfcc=13, n_fft=CFG.n_fft, hop_length=CFG.hop_length).T
    np.testing.assert_allclose(F[:, :13], ref, rtol=1e-6, atol=1e-6)
    delta = librosa.feature.delta(ref.T, width=9, mode="nearest").T
    np.testing.assert_allclose(F[:, 13:26], delta, rtol=1e-6, atol=1e-6)


def test_descriptors_on_signals_with_known_answers():
    rng = np.random.default_rng(1)
    tone = _tone(1000.0, amp=0.25)
    mid = slice(5, -5)  # away from the padded edges
    Ft = frame_features(tone, SR, CFG)[mid]
    Ft2 = frame_features(2 * tone, SR, CFG)[mid]
    Fn = frame_features(0.25 * rng.standard_normal(SR), SR, CFG)[mid]
    # doubling the amplitude adds 20 log10(2) dB of loudness
    np.testing.assert_allclose(
        Ft2[:, _col("loudness")] - Ft[:, _col("loudness")], 20 * np.log10(2), atol=1e-9
    )
    # a 1 kHz tone's centroid is 1 kHz: log2(1) = 0 (window leakage: within 0.05 octave)
    assert np.abs(Ft[:, _col("log_centroid")]).max() < 0.05
    # a periodic frame has normalised autocorrelation (n - lag) / n at its period
    lag = SR / 1000.0
    assert Ft[:, _col("harmonicity")].min() > 1 - 1.1 * np.ceil(lag) / CFG.n_fft
    assert Fn[:, _col("harmonicity")].max() < 0.3
    # a tone concentrates the spectrum, white noise spreads it
    assert Ft[:, _col("spectral_sparsity")].min() > Fn[:, _col("spectral_sparsity")].max() + 2
    # a click is temporally sparse: one sample among n_fft -> log2(n_fft)
    click = np.zeros(SR)
    click[SR // 2] = 0.5
    Fc = frame_features(click + 1e-9 * rng.standard_normal(SR), SR, CFG)
    assert Fc[:, _col("temporal_sparsity")].max() > np.log2(CFG.n_fft) - 0.5
    assert Ft[:, _col("temporal_sparsity")].max() < 1.0
    # the click is a transient, the steady tone is not
    assert Fc[:, _col("transient_index")].max() > 5 * Ft[:, _col("transient_index")].max()


def test_stereo_mixdown_and_resampling(tmp_path):
    y = _tone(440.0, seconds=1.0, sr=44100)
    sf.write(tmp_path / "mono.wav", y, 44100, subtype="FLOAT")
    sf.write(tmp_path / "stereo.wav", np.stack([y, y], axis=1), 44100, subtype="FLOAT")
    sf.write(tmp_path / "lr.wav", np.stack([y, 0 * y], axis=1), 44100, subtype="FLOAT")
    m, sr = load_audio(tmp_path / "mono.wav", SR)
    s, _ = load_audio(tmp_path / "stereo.wav", SR)
    lr, _ = load_audio(tmp_path / "lr.wav", SR)
    assert sr == SR and m.size == SR
    np.testing.assert_allclose(s, m, atol=1e-7)
    np.testing.assert_allclose(lr, 0.5 * m, atol=1e-7)  # mono = mean of the channels
    Fm = clip_features(tmp_path / "mono.wav", CFG)
    Fs = clip_features(tmp_path / "stereo.wav", CFG)
    np.testing.assert_allclose(Fs, Fm, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "fmt,subtype", [("WAV", "PCM_16"), ("WAV", "PCM_24"), ("WAV", "FLOAT"), ("FLAC", "PCM_16")]
)
def test_formats_decode_to_the_same_features(tmp_path, fmt, subtype):
    y = _tone(660.0, seconds=0.8, sr=16000) + 0.05 * np.random.default_rng(2).normal(size=12800)
    ref = tmp_path / "ref.wav"
    sf.write(ref, y, 16000, subtype="DOUBLE")
    path = tmp_path / f"x.{fmt.lower()}"
    sf.write(path, y, 16000, subtype=subtype, format=fmt)
    F = clip_features(path, CFG)
    F0 = clip_features(ref, CFG)
    assert F.shape == F0.shape
    # 16-bit quantisation noise is ~-100 dB: MFCCs agree to a small absolute error
    np.testing.assert_allclose(F[:, :13], F0[:, :13], atol=0.5)


def test_bad_files_fail_with_their_path_or_are_listed(tmp_path):
    bad = tmp_path / "broken.wav"
    bad.write_bytes(b"RIFF\x00\x00\x00\x00WAVEjunk" + bytes(100))
    with pytest.raises(BadAudioError, match="broken.wav: cannot decode"):
        clip_features(bad, CFG)
    short = tmp_path / "short.wav"
    sf.write(short, _tone(seconds=0.1), SR)
    with pytest.raises(BadAudioError, match=r"short.wav: too short: 0.100 s"):
        clip_features(short, CFG)
    silent = tmp_path / "silent.wav"
    sf.write(silent, np.zeros(SR), SR)
    with pytest.raises(BadAudioError, match="silent.wav: silent"):
        clip_features(silent, CFG)
    good = tmp_path / "good.wav"
    sf.write(good, _tone(), SR)
    paths = [good, bad, short, silent, tmp_path / "absent.wav"]
    feats, skipped = features_for_clips(paths, CFG, on_bad="skip")
    assert list(feats) == [str(good)]
    assert [p for p, _ in skipped] == [str(p) for p in paths[1:]]
    with pytest.raises(BadAudioError, match="broken.wav"):
        features_for_clips(paths, CFG, on_bad="raise")
    with pytest.raises(ValueError, match="on_bad"):
        features_for_clips(paths, CFG, on_bad="ignore")


def test_undecodable_clip_names_the_file_the_decoders_and_what_to_do(tmp_path, monkeypatch):
    import soundfile

    from kclf.features import audio

    garbled = tmp_path / "garbled.ogg"
    garbled.write_bytes(np.random.default_rng(0).bytes(4096))
    with pytest.raises(BadAudioError) as e:
        load_audio(garbled, SR)
    message = str(e.value)
    assert "\n" not in message and "\t" not in message  # one line, one bad-files entry
    assert message.startswith(f"{garbled}: cannot decode audio: soundfile ")
    assert f"(libsndfile {soundfile.__libsndfile_version__}): LibsndfileError: " in message
    assert "; audioread " in message and "(backends: rawread" in message
    if "ffdec" not in audio._audioread_backends()[0]:
        assert message.endswith(
            "install ffmpeg (e.g. apt-get install ffmpeg) for audioread's ffmpeg backend, or "
            "convert the file to WAV or FLAC"
        )
    # with ffmpeg present the advice is about the file itself
    monkeypatch.setattr(audio, "_audioread_backends", lambda: (("rawread", "ffdec"), True))
    with pytest.raises(BadAudioError, match=r"\(backends: rawread, ffdec\).*re-export it as WAV"):
        load_audio(garbled, SR)
    # skip on: left out and listed with that reason; off: the first bad clip raises
    good = tmp_path / "good.wav"
    sf.write(good, _tone(), SR)
    feats, skipped = features_for_clips([garbled, good], CFG, on_bad="skip")
    assert list(feats) == [str(good)] and skipped[0][0] == str(garbled)
    assert skipped[0][1].startswith("cannot decode audio: soundfile ")
    with pytest.raises(BadAudioError, match="garbled.ogg: cannot decode audio: soundfile"):
        features_for_clips([good, garbled], CFG, on_bad="raise")


def test_config_validation():
    with pytest.raises(ValueError, match="sample_rate"):
        AudioFeatureConfig(sample_rate=100)
    with pytest.raises(ValueError, match="hop_seconds"):
        AudioFeatureConfig(hop_seconds=2.0)
    with pytest.raises(ValueError, match="n_mfcc"):
        AudioFeatureConfig(n_mfcc=0)
    cfg = AudioFeatureConfig(deltas=False, descriptors=False, n_mfcc=20)
    assert frame_features(_tone(), SR, cfg).shape[1] == 20


def test_clip_model_is_cached_per_clip_and_shards_round_trip(tmp_path):
    from kclf.features.hmm_kernel import HMMBank, cross_loglik
    from kclf_workflow.shards.audio import clip_model, load_shards, save_shard

    cfg = AudioFeatureConfig(sample_rate=8000)
    rng = np.random.default_rng(7)
    paths = []
    for k in range(3):
        p = tmp_path / f"c{k}.wav"
        sf.write(
            p, _tone(300.0 * (k + 1), seconds=0.6, sr=8000) + 0.01 * rng.normal(size=4800), 8000
        )
        paths.append(p)
    cache = tmp_path / "cache"
    X0, b0 = clip_model(paths[0], "c0", cfg, seed=1, n_states=2, cache_dir=cache)
    assert len(list(cache.glob("c0-*.npz"))) == 1
    X1, b1 = clip_model(paths[0], "c0", cfg, seed=1, n_states=2, cache_dir=cache)
    np.testing.assert_array_equal(X0, X1)
    np.testing.assert_array_equal(b0.means, b1.means)
    # the same settings without the cache fit the same model (seeded by the clip id)
    _, b2 = clip_model(paths[0], "c0", cfg, seed=1, n_states=2)
    np.testing.assert_allclose(b2.means, b0.means)
    # other settings or other content: another cache entry
    clip_model(paths[0], "c0", cfg, seed=2, n_states=2, cache_dir=cache)
    sf.write(paths[0], _tone(500.0, seconds=0.6, sr=8000), 8000)
    clip_model(paths[0], "c0", cfg, seed=1, n_states=2, cache_dir=cache)
    assert len(list(cache.glob("c0-*.npz"))) == 3

    got = [clip_model(p, f"c{k}", cfg, seed=1, n_states=2) for k, p in enumerate(paths)]
    save_shard(tmp_path / "s0.npz", HMMBank.concatenate([got[0][1]]), ["c0"], [got[0][0]])
    save_shard(
        tmp_path / "s1.npz",
        HMMBank.concatenate([g[1] for g in got[1:]]),
        ["c1", "c2"],
        [g[0] for g in got[1:]],
        bad=[("/x/broken.wav", "cannot decode audio")],
    )
    bank, ids, feats, bad = load_shards([tmp_path / "s0.npz", tmp_path / "s1.npz"])
    assert ids == ["c0", "c1", "c2"] and bad == [("/x/broken.wav", "cannot decode audio")]
    for F, (X, _) in zip(feats, got):
        np.testing.assert_array_equal(F, X)
    assert cross_loglik(feats, bank).shape == (3, 3)
