"""The cores of a CV search (private): ``n_jobs`` in scikit-learn's meaning, as BLAS
threads through threadpoolctl and independent work items (a search's widths) on joblib's
threading backend.  Below the estimators: it imports none of them.

Results must not depend on ``n_jobs``, and OpenBLAS's products and factorisations do
depend on its thread count (a matrix product on one thread and on two differ in the last
bits here), so with a given ``n_jobs`` every BLAS call of the fit runs on one thread and
the parallelism comes from the work items alone: ``n_jobs=1``, ``2`` or ``-1`` give the
same bits.  ``n_jobs=None`` (outside a ``joblib.parallel_config`` that sets it) leaves
the BLAS library's own threads as they are and runs the items in turn, as the
searches always did; its results equal an integer ``n_jobs``'s to round-off.
"""

from __future__ import annotations

import contextlib

from joblib import Parallel, delayed, effective_n_jobs
from threadpoolctl import ThreadpoolController

_CONTROLLER = []
#: set while work items run on several threads: every BLAS call is already on one
#: thread, and toggling the (process-wide) limit from a worker would race
_PARALLEL = []


def _controller():
    """One cached ``ThreadpoolController``: ``threadpool_limits`` inspects the loaded
    libraries on every call (about 10 ms here, as much as an eigh of a few hundred rows);
    a cached controller switches in microseconds."""
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def serial_blas(serial=True):
    """Context: one BLAS thread if ``serial``, else unchanged (also unchanged inside a
    parallel section of :class:`Workers`, where BLAS already runs on one thread)."""
    if not serial or _PARALLEL:
        return contextlib.nullcontext()
    return _controller().limit(limits=1, user_api="blas")


class Workers:
    """The cores a search is given: ``n_jobs`` as scikit-learn means it (``-1``: all
    cores; ``None``: 1, unless a ``joblib.parallel_config`` says otherwise).

    ``fitting()`` is the context of the whole fit (one BLAS thread with a given
    ``n_jobs``; nothing with ``None``), ``map(fn, items)`` yields ``fn(item)`` in the
    items' order, computed on up to ``n_jobs`` threads.
    """

    def __init__(self, n_jobs=None):
        if n_jobs is None and effective_n_jobs(None) == 1:
            self.n = None
        else:
            self.n = effective_n_jobs(n_jobs)

    def fitting(self):
        """Context of the fit: BLAS on one thread when ``n_jobs`` is given."""
        if self.n is None:
            return contextlib.nullcontext()
        return _controller().limit(limits=1, user_api="blas")

    def map(self, fn, items):
        """``fn(item)`` for every item, in order (an iterator); on ``min(n_jobs,
        len(items))`` threads of joblib's threading backend (numpy's and LAPACK's heavy
        calls release the GIL)."""
        items = list(items)
        workers = 1 if self.n is None else min(self.n, len(items))
        if workers <= 1:
            yield from map(fn, items)
            return
        _PARALLEL.append(True)
        try:
            parallel = Parallel(n_jobs=workers, backend="threading", return_as="generator")
            yield from parallel(delayed(fn)(item) for item in items)
        finally:
            _PARALLEL.pop()
