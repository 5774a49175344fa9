"""What the kernel methods of every family share: the library's LSPC and kernel logistic
regression estimators and their CV searches (LSPC-new, LSPC, LSPC' by ``rounding``; KLR
by ``multi_class``), the RBF SVC's grid, the width conversion ``gamma = 1 / (2 sigma^2)``
between the papers' sigma and scikit-learn's ``gamma``, and the grid the papers' families
search when their config gives none."""

from __future__ import annotations

import numpy as np

#: the fixed parameters of each kernel method: LSPC's ``rounding`` (LSPC-new: Eq. 6 on the
#: outputs, LSPC: on the parameters, LSPC': none), KLR's ``multi_class``
LSPC_NEW = {"rounding": "outputs"}
LSPC_PARAMETERS = {"rounding": "parameters"}
LSPC_PRIME = {"rounding": "none"}
KLR_PAIRWISE = {"multi_class": "pairwise"}
KLR_OVR = {"multi_class": "ovr"}


def _classes(options):
    """(estimator, its CV search) of a kernel method's fixed ``options``."""
    from kclf import LSPC, LSPCCV, KernelLogisticRegression, KernelLogisticRegressionCV

    if "rounding" in options:
        return LSPC, LSPCCV
    if "multi_class" in options:
        return KernelLogisticRegression, KernelLogisticRegressionCV
    raise ValueError(f"{options!r} are no kernel method's; expected a rounding or a multi_class")


def kernel_estimator(options, sigma, lam, **kwargs):
    """The LSPC or KLR estimator of ``options`` with fixed ``sigma`` and ``lam``."""
    cls, _ = _classes(options)
    return cls(sigma=sigma, lam=lam, **options, **kwargs)


def kernel_search(options, sigmas, lams, *, cv, random_state, **kwargs):
    """The CV search of ``options`` (:class:`kclf.LSPCCV` or
    :class:`kclf.KernelLogisticRegressionCV`) over ``sigmas`` x ``lams``."""
    _, cls = _classes(options)
    return cls(sigmas=sigmas, lams=lams, cv=cv, random_state=random_state, **options, **kwargs)


def gamma_of(sigma):
    """scikit-learn's RBF ``gamma = 1 / (2 sigma^2)`` of the Gaussian width ``sigma``."""
    return 1.0 / (2.0 * np.asarray(sigma, dtype=float) ** 2)


def sigma_of(gamma):
    """The Gaussian width ``sigma = sqrt(1 / (2 gamma))`` of scikit-learn's ``gamma``."""
    return np.sqrt(1.0 / (2.0 * np.asarray(gamma, dtype=float)))


def svc_grid(sigmas, Cs):
    """``GridSearchCV`` grid of an RBF SVC: ``C`` x the ``gamma`` of each width."""
    return {"C": list(Cs), "gamma": list(gamma_of(sigmas))}
