"""The MGPC family's methods (the MGPC paper's Sec. 4;
:mod:`kclf_workflow.experiments.mgpc`).

``build(X, y, cfg, random_state)``: the method's estimator for the training part
``(X, y)``, its hyper-parameters chosen where the choice needs no fit of it (the widths
from ``X``'s median distance; the ridge baselines' lambda by CV error, which fits them),
unfitted; ``chosen(fitted)`` what it chose.  ``cfg`` is the family's block as the fit's
params hold it; each spec's ``defaults`` are the values of its keys the block may leave
out.  The ridge baselines are also refitted at every lambda of the grid for the paper's
Figure 1 (``refit({"lam": lam}, cfg)``, ``options["lam_curve"]``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from .spec import MethodSpec, gpy_missing, register

FAMILY = "mgpc"
#: the ridge baselines' lambdas where the config gives none
DEFAULT_LAMS = (0.001, 0.01, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 0.95)
#: the Gaussian process methods' grid keys and their defaults
GP_DEFAULTS = {
    "n_centers": 20,
    "sigma_factors": (0.5, 1.0),
    "length_scale_factors": (0.25, 0.5, 1.0, 2.0, 4.0),
    "amplitudes": (1.0, 4.0, 16.0, 64.0),
    "tol": 1e-8,
}


def _gp(inference, X, y, cfg, random_state):
    from kclf import ManifoldGPC
    from kclf.kernels import median_sigma

    d = GP_DEFAULTS
    sigmas = median_sigma(X) * np.asarray(cfg.get("sigma_factors", d["sigma_factors"]), dtype=float)
    return ManifoldGPC(
        n_centers=cfg.get("n_centers", d["n_centers"]),
        sigma=sigmas,
        inference=inference,
        length_scale_factors=cfg.get("length_scale_factors", d["length_scale_factors"]),
        amplitude=cfg.get("amplitudes", d["amplitudes"]),
        tol=cfg.get("tol", d["tol"]),
        random_state=random_state,
    )


def _gp_chosen(est):
    return {
        "n_centers": est.n_centers_,
        "sigma": est.sigma_,
        "length_scale": est.length_scale_,
        "amplitude": est.amplitude_,
        "log_marginal_likelihood": est.log_marginal_likelihood_,
        "n_iter": est.n_iter_,
    }


def _ridge(solver, params, cfg):
    """The weighted ridge logistic baseline at ``params["lam"]``."""
    from kclf import WeightedRidgeLogistic

    if solver == "newton":
        return WeightedRidgeLogistic(
            lam=params["lam"], solver="newton", tol=cfg.get("ridge_tol", 1e-8)
        )
    return WeightedRidgeLogistic(
        lam=params["lam"],
        solver="gradient",
        max_iter=cfg.get("gradient_max_iter", 1000),
        tol=cfg.get("ridge_tol", 1e-8),
    )


def _ridge_cv(solver, X, y, cfg, random_state):
    """The baseline at the lambda with the lowest mean CV error on ``(X, y)`` (ties: the
    larger)."""
    from sklearn.model_selection import StratifiedKFold

    lams = cfg.get("lams") or DEFAULT_LAMS
    folds = StratifiedKFold(cfg.get("folds", 3), shuffle=True, random_state=random_state)
    err = np.zeros(len(lams))
    for tr, va in folds.split(X, y):
        for k, lam in enumerate(lams):
            est = _ridge(solver, {"lam": lam}, cfg).fit(X[tr], y[tr])
            err[k] += np.mean(est.predict(X[va]) != y[va])
    best = np.flatnonzero(err == err.min())[-1]
    return _ridge(solver, {"lam": float(lams[best])}, cfg)


def _ridge_chosen(est):
    return {"lam": est.lam, "n_iter": est.n_iter_}


def _sklearn_gpc(X, y, cfg, random_state):
    from sklearn.gaussian_process import GaussianProcessClassifier
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel

    from kclf.kernels import median_sigma

    kernel = ConstantKernel(1.0) * RBF(median_sigma(X))
    return GaussianProcessClassifier(kernel, random_state=random_state)


def _gpy(X, y, cfg, random_state):
    from ..estimators import GPyEPClassifier

    return GPyEPClassifier(random_state=random_state)


def _gpy_chosen(est):
    kern = est.model_.kern
    return {"variance": float(kern.variance[0]), "length_scale": float(kern.lengthscale[0])}


def _ridge_spec(key, name, solver, grid):
    defaults = {"lams": DEFAULT_LAMS, "folds": 3, "ridge_tol": 1e-8, "gradient_max_iter": 1000}
    return MethodSpec(
        key,
        name,
        build=partial(_ridge_cv, solver),
        grid=grid,
        defaults={k: defaults[k] for k in grid},
        chosen=_ridge_chosen,
        refit=partial(_ridge, solver),
        options={"solver": solver, "lam_curve": True},
    )


register(
    FAMILY,
    *(
        MethodSpec(
            key,
            name,
            build=partial(_gp, inference),
            grid=tuple(GP_DEFAULTS),
            defaults=GP_DEFAULTS,
            chosen=_gp_chosen,
        )
        for key, name, inference in (("mla", "MLA", "laplace"), ("mep", "MEP", "ep"))
    ),
    _ridge_spec("ridge_newton", "Ridge Newton", "newton", ("lams", "folds", "ridge_tol")),
    _ridge_spec(
        "ridge_gradient",
        "Ridge gradient",
        "gradient",
        ("lams", "folds", "ridge_tol", "gradient_max_iter"),
    ),
    MethodSpec(
        "sklearn_gpc",
        "sklearn GPC",
        build=_sklearn_gpc,
        chosen=lambda est: {"kernel": str(est.kernel_)},
    ),
    MethodSpec(
        "gpy_ep",
        "GPy EP",
        build=_gpy,
        chosen=_gpy_chosen,
        binary_only=True,
        requires=gpy_missing,
    ),
)
