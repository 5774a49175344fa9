"""The walk of :class:`kclf.ManifoldGPC` over its hyper-parameter grid (private).

The feature maps, length scales and amplitudes are chosen by the approximate log
marginal likelihood (the evidence) of the inference (:func:`kclf.mgpc._solver.infer`).
Along the amplitudes of one length scale the evidence rises to one maximum or plateau and
falls, and so does the best value of a row across the length scales, so the grid is
walked rather than filled (:class:`EvidenceWalk`; the estimator's Notes give the rule and
what it was checked against).  On the sparse path every grid point's prior is the FITC
covariance of the inducing inputs (:class:`kclf.mgpc._fitc.FITCCovariance`), and its
evidence is that model's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._progress import SILENT
from ..kernels import median_sigma, rbf_kernel, scaled_squared_distances, unit_of
from ._fitc import FITCCovariance
from ._solver import infer


@dataclass
class GridPoint:
    """A visited point of the grid: its evidence ``score``, where it is (the feature map
    ``map_index`` with its inputs ``Z``, the training rows' or, on the sparse path, the
    inducing inputs', the length scale and amplitude), and what the model keeps of its
    inference: the result, ``alpha``, ``sqrt_w`` and the unit-amplitude covariance ``R``
    (dense or FITC)."""

    score: float
    map_index: int
    Z: np.ndarray
    length_scale: float
    amplitude: float
    result: dict
    alpha: np.ndarray
    sqrt_w: np.ndarray
    R: np.ndarray


class EvidenceWalk:
    """The walk of one fit: ``inference`` ("laplace" or "ep") with ``max_iter`` and
    ``tol``; EP runs at the grid points to ``max(tol, search_tol)`` from the sites of a
    neighbour, the chosen point's then to ``tol``; ``progress``
    (:class:`kclf._progress.SearchProgress`) gets a line per length-scale row walked;
    ``sample_weight`` weighs the rows' likelihoods (and the median distance of the
    default length scales); ``inducing`` (row indices of the inputs, or None for the full
    model) makes every prior the FITC covariance of those rows' feature-map images."""

    def __init__(
        self,
        inference,
        max_iter,
        tol,
        search_tol,
        progress=SILENT,
        sample_weight=None,
        inducing=None,
    ):
        self.inference, self.max_iter, self.tol = inference, max_iter, tol
        self.progress = progress
        self.ep = inference == "ep"
        self.search_tol = max(tol, search_tol) if self.ep else None
        self.sample_weight = sample_weight
        self.inducing = inducing

    def unit_covariances(self, Z):
        """``(cov, ls_unit, Z_kept)``: ``cov(l)`` is the unit-amplitude covariance of the
        rows at the length scale ``l * ls_unit`` (one distance matrix for every length
        scale, in units ``ls_unit`` of ``Z``: any scale of ``Z``); dense ``n x n``, or on
        the sparse path the FITC covariance from the ``n x m`` and ``m x m`` distances to
        the inducing inputs ``Z_kept`` (the full model keeps ``Z``)."""
        if self.inducing is None:
            D, u = scaled_squared_distances(Z)
            half_d2 = -0.5 * D
            return (lambda ls: np.exp(half_d2 / ls**2)), u, Z
        Zu = Z[self.inducing]
        u = unit_of(Z)
        half_nm = -0.5 * scaled_squared_distances(Z, Zu, unit=u)[0]
        half_mm = -0.5 * scaled_squared_distances(Zu, unit=u)[0]

        def cov(ls):
            return FITCCovariance.from_kernels(np.exp(half_nm / ls**2), np.exp(half_mm / ls**2))

        return cov, u, Zu

    def infer(self, K, y, warm=None, tol=None):
        """:func:`kclf.mgpc._solver.infer` at this fit's settings."""
        return infer(self.inference, K, y, self.max_iter, self.tol, warm, tol, self.sample_weight)

    def sites(self, result):
        """The site parameters ``(tau, nu)`` an EP run starts its neighbour from."""
        return (result["tau"], result["nu"]) if self.ep else None

    def row(self, R, y, amps, start, warm):
        """The amplitudes of one length scale: from ``amps[start]`` (EP from the sites
        ``warm``) up until the evidence first falls, then, unless the first step up
        rose (the evidence is unimodal along the row: its maximum is then above
        ``start``), down from ``start`` until it first falls; every EP run starts from
        the sites of its neighbour.  Returns ``{j: (result, alpha, sqrt_w)}`` of the
        amplitudes visited."""

        def lml(j):
            return row[j][0]["log_marginal_likelihood"]

        row = {start: self.infer(amps[start] * R, y, warm, self.search_tol)}
        for direction in (1, -1):
            if direction == -1 and start + 1 in row and lml(start + 1) > lml(start):
                break
            j = start
            while 0 <= j + direction < amps.size:
                r = row[j][0]
                row[j + direction] = self.infer(
                    amps[j + direction] * R, y, self.sites(r), self.search_tol
                )
                j += direction
                if lml(j) < r["log_marginal_likelihood"]:
                    break
        return row

    def length_scales(self, unit_cov, ls_grid, y, amps, first, start, warm):
        """The length scales of one feature map (``unit_cov(ls)`` the unit-amplitude
        covariance at ``ls``, :meth:`unit_covariances`): from ``ls_grid[first]`` up until the best
        evidence of a row (:meth:`row`, from ``amps[start]`` and the sites ``warm``) first
        falls, then, unless the first row up rose, down from ``first`` until it first
        falls; each further row starts at the best amplitude of its neighbour towards
        ``first``, from that point's sites.  Yields ``(i, row, R)`` for each length scale
        visited (``R`` the unit-amplitude covariance), one at a time: a row's factors are
        not kept once the caller has read them."""

        def visit(i, start, warm):
            R = unit_cov(ls_grid[i])
            row = self.row(R, y, amps, start, warm)
            j = max(row, key=lambda j: row[j][0]["log_marginal_likelihood"])
            r = row[j][0]
            return (i, row, R), (r["log_marginal_likelihood"], j, self.sites(r))

        visited, at_first = visit(first, start, warm)
        yield visited
        del visited
        rose = False
        for direction in (1, -1):
            if rose:  # the rows' best is unimodal too: its maximum is above first
                break
            i, (score, start, warm) = first, at_first
            while 0 <= i + direction < len(ls_grid):
                i += direction
                visited, new = visit(i, start, warm)
                yield visited
                del visited
                rose = rose or (i == first + 1 and new[0] > score)
                if new[0] < score:
                    break
                score, start, warm = new

    def bisect_amplitude(self, best, scores, amp_grid, y):
        """The default amplitudes' walk visits every other value (``1, 4, ..., 4096``);
        along the chosen row the evidence is unimodal, so the full grid's best amplitude
        there is the chosen one or a neighbour: the one above is tried (from the chosen
        point's sites), and the one below only if that did not improve.  Writes the
        scores of the amplitudes tried into ``scores``; returns ``best`` or the
        improvement."""
        h = best.map_index
        i, j = np.unravel_index(np.argmax(scores[h]), scores.shape[1:])
        for k in (j + 1, j - 1):
            if not 0 <= k < amp_grid.size:
                continue
            r, alpha, sw = self.infer(
                amp_grid[k] * best.R, y, self.sites(best.result), self.search_tol
            )
            scores[h, i, k] = r["log_marginal_likelihood"]
            if scores[h, i, k] > best.score:
                return GridPoint(
                    scores[h, i, k], h, best.Z, best.length_scale, amp_grid[k], r, alpha, sw, best.R
                )
        return best

    def run(self, X, feature_maps, length_scales, length_scale_factors, amp_grid, stride, y):
        """``(best, scores)``: the chosen :class:`GridPoint` and the evidence of every grid
        point (n_maps, n_length_scales, n_amplitudes; ``-inf`` where the walk did not go).

        ``feature_maps``: ``(n_centers, centres, sigma)`` of every map (``(None, None,
        None)`` the identity); the length scales ``length_scales`` or, when None,
        ``length_scale_factors`` times the median distance of each map's inputs; the
        amplitudes ``amp_grid`` walked at every ``stride``-th value (2: then bisected,
        :meth:`bisect_amplitude`); ``y`` in {-1, +1}.  The walk starts at the middle of the
        first map's grid, a later map at the best grid point so far, from its sites."""
        n_ls = length_scales.size if length_scales is not None else length_scale_factors.size
        scores = np.full((len(feature_maps), n_ls, amp_grid.size), -np.inf)
        # a view, so the walk writes into scores
        walked, walk_amps = scores[:, :, ::stride], amp_grid[::stride]
        best, warm, first, start = None, None, n_ls // 2, walk_amps.size // 2
        for h, (m, centres, sig) in enumerate(feature_maps):
            Z = X if m is None else rbf_kernel(X, centres, sig)
            if length_scales is not None:
                ls_grid = length_scales
            else:
                ls_grid = median_sigma(Z, sample_weight=self.sample_weight) * length_scale_factors
            cov, u, Z = self.unit_covariances(Z)
            walked_rows = self.length_scales(cov, ls_grid / u, y, walk_amps, first, start, warm)
            for i, row, R in walked_rows:
                for j, (r, alpha, sw) in row.items():
                    walked[h, i, j] = r["log_marginal_likelihood"]
                    if best is None or walked[h, i, j] > best.score:
                        best = GridPoint(
                            walked[h, i, j], h, Z, ls_grid[i], walk_amps[j], r, alpha, sw, R
                        )
                if self.progress:
                    self.progress(
                        f"map {h + 1}/{len(feature_maps)} ("
                        f"{'identity' if m is None else f'{m} centres'}), length scale "
                        f"{i + 1}/{ls_grid.size} ({ls_grid[i]:.4g}): best log evidence "
                        f"{np.max(walked[h, i]):.6g} over {len(row)} amplitudes"
                    )
            # the next map starts at the best grid point so far, from its sites
            first, start = np.unravel_index(np.argmax(walked[best.map_index]), walked.shape[1:])
            warm = self.sites(best.result)
        if stride == 2:
            best = self.bisect_amplitude(best, scores, amp_grid, y)
        if self.ep and self.search_tol > self.tol:  # the chosen point's sites to full tol
            r, alpha, sw = self.infer(best.amplitude * best.R, y, self.sites(best.result))
            best = GridPoint(
                r["log_marginal_likelihood"],
                best.map_index,
                best.Z,
                best.length_scale,
                best.amplitude,
                r,
                alpha,
                sw,
                best.R,
            )
        return best, scores
