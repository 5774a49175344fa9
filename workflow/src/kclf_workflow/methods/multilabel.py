"""The multilabel family's methods (the CorrLog paper's Sec. V;
:mod:`kclf_workflow.experiments.multilabel`).

``build(cfg, seed)``: the method's estimator with its CV over the training part built in
(``cfg``: the family's block as the fit's params hold it; ``seed``: the trial's CV
stream); ``chosen(fitted)`` its choice.  CorrLog and independent logistic regression
(ILR: CorrLog without couplings) search the penalties themselves; the classifier chain
and the per-label SVC search ``C`` by ``GridSearchCV`` on subset accuracy, the SVC
Platt-scaled for its probabilities.
"""

from __future__ import annotations

from functools import partial

from .spec import MethodSpec, register

FAMILY = "multilabel"
#: the ``C`` grid of the classifier chain's logistic regressions (the SVC: from 0.1)
C_GRID = (0.01, 0.1, 1.0, 10.0)
#: what CorrLog's (and ILR's) fit reads from the block
CORRLOG_KEYS = ("inference", "scaling", "penalty", "rho1_grid", "rho2_grid")


def _folds(cfg, seed):
    from sklearn.model_selection import KFold

    return KFold(cfg["folds"], shuffle=True, random_state=seed)


def _corrlog(couplings, cfg, seed):
    from kclf import CorrLog

    return CorrLog(
        couplings=couplings,
        inference=cfg["inference"],
        scaling=cfg["scaling"],
        penalty=cfg.get("penalty", "shared"),
        cv=cfg["folds"],
        rho1_grid=cfg["rho1_grid"],
        rho2_grid=cfg["rho2_grid"],
        random_state=seed,
    )


def _corrlog_chosen(est):
    return {"rho1": est.rho1_, "rho2": est.rho2_}


def _chain(cfg, seed):
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import GridSearchCV
    from sklearn.multioutput import ClassifierChain
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    lr = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    chain = ClassifierChain(lr, order=None, random_state=seed)
    grid = {"estimator__logisticregression__C": list(C_GRID)}
    return GridSearchCV(chain, grid, cv=_folds(cfg, seed), scoring="accuracy")


def _per_label_svc(cfg, seed):
    from sklearn.model_selection import GridSearchCV
    from sklearn.multioutput import MultiOutputClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    from sklearn.svm import SVC

    svc = MultiOutputClassifier(make_pipeline(StandardScaler(), SVC()))
    grid = {"estimator__svc__C": list(C_GRID[1:])}
    return GridSearchCV(svc, grid, cv=_folds(cfg, seed), scoring="accuracy")


def _search_chosen(est):
    return {k.rsplit("__", 1)[-1]: v for k, v in est.best_params_.items()}


register(
    FAMILY,
    *(
        MethodSpec(
            key,
            name,
            build=partial(_corrlog, couplings),
            grid=CORRLOG_KEYS,
            defaults={"penalty": "shared"},
            chosen=_corrlog_chosen,
        )
        for key, name, couplings in (("corrlog", "CorrLog", True), ("ilr", "ILR", False))
    ),
    MethodSpec("cc", "ClassifierChain (LR)", build=_chain, chosen=_search_chosen),
    MethodSpec(
        "mo_svc",
        "MultiOutput (SVC)",
        build=_per_label_svc,
        chosen=_search_chosen,
        probability="platt",
    ),
)
