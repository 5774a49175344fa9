"""The prior of :class:`kclf.ManifoldGPC`'s sparse path (private): :class:`FITCCovariance`.

With ``m`` inducing inputs ``u_1, ..., u_m`` the latent GP's covariance ``K`` of the ``n``
training rows is replaced by the fully independent training conditional (FITC; Snelson &
Ghahramani 2006, in the unifying view of Quiñonero-Candela & Rasmussen 2005)

    ``K~ = Q + diag(K - Q)``,  ``Q = K_nm K_mm^+ K_mn``,

the covariance of the GP ``f(x) = g(x) + e(x)`` whose part ``g`` lies in the span of the
inducing inputs' kernel functions and whose part ``e`` is independent from row to row,
with the variance ``k(x, x) - q(x, x)`` that ``g`` misses: every row keeps its prior
variance, the correlations are those of the rank-``m`` Nyström approximation.  With
``Q = V V'`` (``V = K_nm P``, ``P P' = K_mm^+``) the matrices met by Laplace's Newton step
and by EP, ``B = I + S^1/2 K~ S^1/2`` for a diagonal ``S >= 0`` (``W`` or the sites'
precisions), are diagonal plus rank ``m``,

    ``B = G + U U'``,  ``G = I + S D``,  ``U = S^1/2 V``,  ``D = diag(K - Q)``,

so Woodbury's identity (R&W Eq. (A.9)) and Sylvester's determinant identity give
``B^-1 x`` and ``log |B|`` through the ``m x m`` matrix ``A = I + U' G^-1 U``: ``O(n m^2)``
time and ``O(n m)`` memory per Newton step or EP sweep instead of ``O(n^3)`` and
``O(n^2)``.  ``D = 0`` and ``G = I`` where the inducing inputs are all the training rows:
the full model.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_solve, eigh, solve_triangular
from scipy.linalg.blas import dsyrk
from scipy.linalg.lapack import dpotrf


class FITCCovariance:
    """``amplitude * (V V' + diag(d))``, the FITC covariance of the training rows.

    Built at unit amplitude from the kernels of a length scale
    (:meth:`from_kernels`); ``a * cov`` is the same prior at ``a`` times the amplitude
    (sharing the arrays), so the walk over the amplitudes of a length scale costs no
    further ``O(n m^2)``.
    """

    #: numpy's scalars defer ``a * cov`` to :meth:`__rmul__`
    __array_ufunc__ = None

    def __init__(self, V, d, P, amplitude=1.0):
        self.V, self.d, self.P, self.amplitude = V, d, P, float(amplitude)

    @classmethod
    def from_kernels(cls, R_nm, R_mm):
        """The unit-amplitude FITC covariance from the kernel ``R_nm`` of the rows and the
        inducing inputs and ``R_mm`` of the inducing inputs (unit diagonal).

        ``K_mm^+`` is taken from the eigendecomposition with the eigenvalues up to
        ``m eps`` times the largest dropped (the pseudo-inverse's cut of
        :func:`numpy.linalg.pinv`): a direction of eigenvalue ``lam`` carries the
        round-off ``eps ||R|| / lam`` of ``R_nm``'s columns into ``Q``, so a kept direction
        adds at most ``eps ||R||`` of error and a dropped one ``m eps ||R||``; inducing
        inputs that coincide (distinct rows whose feature-map images do) are one
        direction.  ``Q``'s diagonal is clipped at 1 (``d >= 0``)."""
        lam, U = eigh(R_mm)
        keep = lam > R_mm.shape[0] * np.finfo(float).eps * lam[-1]
        P = U[:, keep] / np.sqrt(lam[keep])
        V = R_nm @ P
        d = np.maximum(1.0 - np.einsum("ij,ij->i", V, V), 0.0)
        return cls(V, d, P)

    def __rmul__(self, a):
        return FITCCovariance(self.V, self.d, self.P, self.amplitude * a)

    __mul__ = __rmul__

    @property
    def shape(self):
        return (self.V.shape[0], self.V.shape[0])

    def __matmul__(self, x):
        """``K~ x`` for a vector ``x``."""
        return self.amplitude * (self.V @ (self.V.T @ x) + self.d * x)

    def diagonal(self):
        return self.amplitude * (np.einsum("ij,ij->i", self.V, self.V) + self.d)

    def factor(self, p):
        """``B = I + S^1/2 K~ S^1/2`` for the precisions ``p`` (:class:`WoodburyFactor`)."""
        return WoodburyFactor(self, p)

    def ep_posterior(self, tau, nu):
        """Posterior marginal variances ``diag(Sigma)``, mean ``mu = Sigma nu`` and the factor
        of ``B`` for site precisions ``tau`` and natural means ``nu``
        (``Sigma = (K~^-1 + S)^-1``, ``S = diag(tau)``).

        With ``f = g + e`` (``g = V w``, ``w ~ N(0, a I)``, ``e ~ N(0, a D)``) the sites
        seen by ``g`` have precisions ``tau / G`` (``e`` integrated out), so
        ``Cov(g) = a V A^-1 V'``; given ``g``, ``e_i`` has variance ``a d_i / G_i``, and
        ``f_i = (g_i + a d_i nu_i) / G_i`` in mean: ``Sigma_ii = a ||L_A^-1 V_i||^2 / G_i^2
        + a d_i / G_i`` and ``mu = (a V A^-1 V' (nu / G) + a d nu) / G``, a sum of positive
        terms (R&W's ``K_ii - ||v_i||^2`` is not needed)."""
        F = self.factor(tau)
        a = self.amplitude
        # L_A^-1 (a^1/2 V)': n m^2, the sweep's other O(n m^2) step beside A itself
        Wt = solve_triangular(F.L, self.V.T, lower=True, check_finite=False)
        Wt *= np.sqrt(a)
        g = F.g
        sigma_diag = np.einsum("ij,ij->j", Wt, Wt) / g**2 + a * self.d / g
        mu = (Wt.T @ (Wt @ (nu / g)) + a * self.d * nu) / g
        return sigma_diag, mu, F

    def inducing_weights(self, alpha):
        """``P V' alpha``: the predictive mean ``k~_*' alpha`` of the training rows'
        ``alpha`` is ``k(u, x_*)' P V' alpha``, ``k(u, x_*)`` the inducing inputs' kernel
        at the amplitude (``Cov(f_*, f) = k(u, x_*)' P V'`` for a new input)."""
        return self.P @ (self.V.T @ alpha)


class WoodburyFactor:
    """``B = G + U U'`` (``G = I + a p d``, ``U = (a p)^1/2 V``) of a
    :class:`FITCCovariance` at the precisions ``p``: ``L`` is the lower Cholesky factor of
    ``A = I + U' G^-1 U`` (``m x m``), ``half_logdet`` is ``log |B| / 2 = (sum log G) / 2
    + sum log L_ii``, :meth:`solve` applies ``B^-1``."""

    def __init__(self, cov, p):
        a = cov.amplitude
        self.g = 1.0 + a * p * cov.d
        self.c = np.sqrt(a * p)  # U = c V
        self.V = cov.V
        scaled = cov.V * (self.c / np.sqrt(self.g))[:, None]
        # A = I + scaled' scaled by one symmetric rank-k update (scaled.T is Fortran-ordered)
        A = dsyrk(1.0, scaled.T, trans=0, lower=1)
        del scaled
        A.flat[:: A.shape[0] + 1] += 1.0
        L, info = dpotrf(A, lower=1, clean=1, overwrite_a=1)
        if info != 0:
            raise np.linalg.LinAlgError(f"I + U' G^-1 U is not positive definite (potrf {info})")
        self.L = L
        self.half_logdet = 0.5 * np.log(self.g).sum() + np.log(np.diag(L)).sum()

    def solve(self, x):
        """``B^-1 x = G^-1 x - G^-1 U A^-1 U' G^-1 x`` (Woodbury) for a vector ``x``."""
        y = x / self.g
        w = cho_solve((self.L, True), self.V.T @ (self.c * y), check_finite=False)
        return y - (self.c / self.g) * (self.V @ w)
