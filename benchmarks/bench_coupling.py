"""Pairwise coupling's Newton solver (``kclf.coupling.couple_pairs``) against its floor,
the batched solve of its (n, c, c) Newton systems.  Not a test.

Every Newton step of Eq. (10) solves one c x c system per row, ``numpy.linalg.solve``
of an (n, c, c) stack; no step can cost less.  Rows: ``--rows`` test points of
``--classes`` classes, the pairs' probabilities ``r_ij`` of a noisy consistent model
(``p`` Dirichlet, ``r_ij = p_i / (p_i + p_j)`` moved on the log-odds scale by Gaussian
noise of ``--noise``, as a search's pairs give: confident and not quite consistent),
pair weights ``n_ij`` of a few hundred rows, ``random_state=0``.  Prints the coupling's
seconds (best of ``--repeat``), its Newton steps (of the slowest row), one stacked
solve's seconds, and the ratio of a step's mean time to that solve.

    .venv/bin/python benchmarks/bench_coupling.py                  # letter's size
    .venv/bin/python benchmarks/bench_coupling.py --classes 10 --rows 4000
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("OMP_NUM_THREADS", "1")  # the benchmark's fit jobs: one thread

import numpy as np  # noqa: E402
from bench_lspc_jobs import best_of  # noqa: E402
from scipy.special import expit, logit  # noqa: E402

import kclf.coupling as coupling  # noqa: E402


def pair_probabilities(rng, n, c, noise):
    """``r`` (n, c(c-1)/2) of the pairs ``i < j`` and the pair weights ``N`` (c, c)."""
    iu, ju = np.triu_indices(c, 1)
    P = rng.dirichlet(np.full(c, 0.3), size=n)
    r = P[:, iu] / (P[:, iu] + P[:, ju])
    r = expit(logit(np.clip(r, 1e-12, 1 - 1e-12)) + rng.normal(scale=noise, size=r.shape))
    counts = rng.integers(250, 350, size=c).astype(float)
    return r, counts[:, None] + counts[None, :]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=8000)
    ap.add_argument("--classes", type=int, default=26)
    ap.add_argument("--noise", type=float, default=0.5)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    n, c = args.rows, args.classes
    r, N = pair_probabilities(rng, n, c, args.noise)
    R = _full(r, c)
    seconds, (P, steps) = best_of(lambda: coupling.couple(R, N, return_n_iter=True), args.repeat)
    H = rng.normal(size=(n, c, c))
    H = H @ H.transpose(0, 2, 1) + c * np.eye(c)
    G = rng.normal(size=(n, c, 1))
    solve, _ = best_of(lambda: np.linalg.solve(H, G), args.repeat)
    print(
        f"couple {n} rows x {c} classes ({r.shape[1]} pairs, blocks of "
        f"{coupling.block_rows(r.shape[1])} rows): {seconds:.3f} s, "
        f"{steps} Newton steps (the slowest row); "
        f"one (n, c, c) solve {solve * 1e3:.1f} ms; the time per step / the solve: "
        f"{seconds / steps / solve:.2f}"
    )
    assert np.allclose(P.sum(axis=1), 1.0)


def _full(r, c):
    """The (n, c, c) matrices of :func:`kclf.coupling.couple` from the pairs' ``r``."""
    iu, ju = np.triu_indices(c, 1)
    R = np.full((r.shape[0], c, c), 0.5)
    R[:, iu, ju], R[:, ju, iu] = r, 1.0 - r
    return R


if __name__ == "__main__":
    main()
