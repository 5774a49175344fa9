"""Binary Gaussian process classification on a given prior covariance: the inference that
:class:`kclf.ManifoldGPC` runs at each point of its hyper-parameter grid, for a user (or a
benchmark) who builds the covariance himself.

:func:`laplace_mode`: Laplace's approximation with the logistic likelihood (the paper's
MLA, Rasmussen & Williams (2006) Algorithm 3.1); :func:`ep_sites`: expectation
propagation with the probit likelihood (MEP, R&W Algorithm 3.5 with parallel, accelerated
updates); :func:`ep_log_marginal_likelihood_gradient`: EP's evidence gradient in the
covariance's hyper-parameters at the fixed point (R&W Eq. (5.27)).  Each takes the
``(n, n)`` covariance ``K`` and the labels ``y`` in ``{-1, +1}`` and returns a dict whose
``"log_marginal_likelihood"`` is the approximate evidence.
"""

from ._solver import ep_log_marginal_likelihood_gradient, ep_sites, laplace_mode

__all__ = ["ep_log_marginal_likelihood_gradient", "ep_sites", "laplace_mode"]
