"""The LSPC toy experiment's methods (the LSPC-new paper's Sec. 3.1 and Figure 1;
:mod:`kclf_workflow.experiments.lspc_toy`): LSPC-new, LSPC and LSPC', the three
roundings of :class:`kclf.LSPCCV`.

``build(sigmas, lams, cv, random_state, variant)``: the CV search over ``sigmas`` x
``lams`` (None: the papers' families' grid, the widths as multiples of the median
distance); ``chosen(search)`` its ``sigma`` and ``lam``.
"""

from __future__ import annotations

from functools import partial

from .kernel import LSPC_NEW, LSPC_PARAMETERS, LSPC_PRIME, kernel_search
from .spec import MethodSpec, register

FAMILY = "lspc_toy"


def _search(options, sigmas, lams, cv, random_state, variant=None):
    # the papers' families' grid where none is given: the library's default one
    from kclf.model_selection import DEFAULT_LAMS, DEFAULT_SIGMA_FACTORS

    return kernel_search(
        options,
        sigmas,
        DEFAULT_LAMS if lams is None else lams,
        cv=cv,
        random_state=random_state,
        sigma_factors=DEFAULT_SIGMA_FACTORS if sigmas is None else None,
        **variant or {},
    )


def _chosen(search):
    return {"sigma": search.sigma_, "lam": search.lam_}


register(
    FAMILY,
    *(
        MethodSpec(
            key,
            name,
            build=partial(_search, options),
            chosen=_chosen,
            variant=variant,
            low_rank=True,
            options=options,
        )
        for key, name, options, variant in (
            ("lspc_new", "LSPC-new", LSPC_NEW, "lspc_new"),
            ("lspc", "LSPC", LSPC_PARAMETERS, None),
            ("lspc_prime", "LSPC'", LSPC_PRIME, None),
        )
    ),
)
