"""One Newton solver for every logistic model of the library (private).

Kernel logistic regression (its dual, stacked and Nystroem forms), the weighted ridge
logistic regression and the Laplace mode of the manifold GP classifier all maximise a
concave objective ``Phi(x)`` of parameters ``x`` through a linear predictor ``z`` (``K
alpha``, ``Phi w``, ``A beta``).  :func:`newton` is their one loop, after scikit-learn's
``linear_model/_glm/_newton_solver.py``: the model supplies the objective and the step
(its gradient and its Hessian solve or Hessian products, the *inner solve*) through a
:class:`NewtonProblem`; the loop owns what every model shares:

* many problems at once: ``x`` and ``z`` hold one problem per column (the last axis);
  only the columns still running are passed to the model (an active set), so a shared
  kernel or design is applied to all of them by one matrix product;
* step halving: a column whose step lowers ``Phi`` by more than round-off
  (``1e-12 |Phi|``) is moved back halfway, at most ``max_halvings`` times, then stopped
  unconverged unless the model can make its step more exact (:meth:`NewtonProblem.refine`);
* the stopping rule: the relative change of ``Phi`` at most ``tol``
  (:meth:`NewtonProblem.converged`, which a model may replace), the converged flags and
  the steps taken per column.

The loop uses only operations of the array API standard on the namespace ``xp`` (NumPy
by default): ``take`` and ``where`` instead of fancy-index assignment, a boolean mask
for the active set.  :func:`conjugate_gradients` is the inner solve of the models whose
Hessian is applied rather than factorised, with the same conventions.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

#: a step may lower the objective by this much relative to it (round-off) and still count
#: as an ascent
ROUND_OFF = 1e-12


class NewtonResult(NamedTuple):
    """What :func:`newton` returns: the parameters ``x`` and linear predictor ``z`` (one
    problem per column), the objective per column, the steps taken and the converged
    flags."""

    x: object
    z: object
    objective: object
    n_iter: object
    converged: object


class NewtonProblem:
    """What a model gives :func:`newton`.  ``cols`` are the indices of the columns passed
    (the active set, increasing); ``x``, ``z`` hold exactly those columns.

    A subclass defines :meth:`objective` and :meth:`direction`; :meth:`converged` and
    :meth:`refine` have defaults.
    """

    def objective(self, x, z, cols):
        """``Phi`` of each column, shape ``(len(cols),)`` (to be maximised)."""
        raise NotImplementedError

    def direction(self, x, z, cols):
        """``(dx, dz)``: the Newton step of each column and its change of ``z`` (the step
        is linear in ``x``, so ``z + t dz`` is the predictor of ``x + t dx``)."""
        raise NotImplementedError

    def converged(self, old, new, x, z, cols, tol):
        """Whether each column is done after a step that took its objective from ``old`` to
        ``new`` (at ``x``, ``z``): the relative change of ``Phi`` at most ``tol``."""
        xp, _ = _namespace(new)
        return xp.abs(new - old) <= tol * xp.clip(xp.abs(new), 1e-300, None)

    def refine(self, failed, cols):
        """Columns whose step could not be made an ascent by halving (``failed``, a mask
        over ``cols``): return the mask of those the model will retry with a more exact
        inner solve (they stay active); the others stop unconverged.  Default: none."""
        return failed & False


def _namespace(a):
    """``(xp, kw)``: the array namespace of ``a`` (``array-api-compat``'s for PyTorch,
    CuPy, ``array-api-strict``; NumPy itself for NumPy arrays) and the keywords that put a
    new array on ``a``'s device (none for NumPy)."""
    if isinstance(a, np.ndarray | np.generic):
        return np, {}
    import array_api_compat

    if not array_api_compat.is_array_api_obj(a):
        return np, {}
    return array_api_compat.array_namespace(a), {"device": array_api_compat.device(a)}


def _take(xp, a, cols):
    """The columns ``cols`` of ``a`` (last axis)."""
    return xp.take(a, cols, axis=a.ndim - 1)


def _put(xp, full, part, mask, pos):
    """``full`` with its columns where ``mask`` replaced by those of ``part``; ``pos[j]``
    is column ``j``'s index in ``part`` (array API: no fancy-index assignment)."""
    return xp.where(mask, _take(xp, part, pos), full)


def newton(problem, x, z, *, tol, max_iter, max_halvings=30):
    """Maximise every column's objective of ``problem`` by Newton steps from ``x`` (with
    its predictor ``z``): see the module docstring.

    Parameters
    ----------
    problem : NewtonProblem
    x : array of shape (..., T)
        Starting parameters, one problem per column.
    z : array of shape (..., T)
        Their linear predictor.
    tol : float
        Passed to ``problem.converged`` (the relative change of the objective).
    max_iter : int
        Steps at most per column.
    max_halvings : int
        Halvings at most of one step.

    Returns
    -------
    NewtonResult
    """
    xp, kw = _namespace(x)
    T = x.shape[-1]
    all_cols = xp.arange(T, **kw)
    obj = problem.objective(x, z, all_cols)
    n_iter = xp.zeros(T, dtype=xp.int64, **kw)
    converged = xp.zeros(T, dtype=xp.bool, **kw)
    active = xp.ones(T, dtype=xp.bool, **kw)
    for _ in range(max_iter):
        if not bool(xp.any(active)):
            break
        cols = xp.nonzero(active)[0]
        # column j's index among the active ones (valid where active)
        pos = xp.clip(xp.cumulative_sum(xp.astype(active, xp.int64)) - 1, 0, None)
        x_old, z_old, obj_old = _take(xp, x, cols), _take(xp, z, cols), _take(xp, obj, cols)
        dx, dz = problem.direction(x_old, z_old, cols)
        x_new, z_new = x_old + dx, z_old + dz
        obj_new = problem.objective(x_new, z_new, cols)
        floor = obj_old - ROUND_OFF * xp.abs(obj_old)
        bad = obj_new < floor
        for _ in range(max_halvings):
            if not bool(xp.any(bad)):
                break
            x_new = xp.where(bad, 0.5 * (x_new + x_old), x_new)
            z_new = xp.where(bad, 0.5 * (z_new + z_old), z_new)
            obj_new = xp.where(bad, problem.objective(x_new, z_new, cols), obj_new)
            bad = obj_new < floor
        keep = ~bad
        done = keep & problem.converged(obj_old, obj_new, x_new, z_new, cols, tol)
        retry = problem.refine(bad, cols)
        took = _take(xp, keep, pos) & active
        x = _put(xp, x, x_new, took, pos)
        z = _put(xp, z, z_new, took, pos)
        obj = _put(xp, obj, obj_new, took, pos)
        n_iter = n_iter + xp.astype(active, xp.int64)
        converged = xp.where(active, _take(xp, done, pos), converged)
        stop = _take(xp, done | (bad & ~retry), pos)
        active = active & ~stop
    return NewtonResult(x, z, obj, n_iter, converged)


def _finish(xp, X, LX, active, cols, Xa, LXa, running):
    """Write the columns ``cols`` of the compacted ``Xa`` (and ``LXa``) back into ``X``
    (``LX``); the ones not ``running`` leave the ``active`` set."""
    pos = xp.clip(xp.cumulative_sum(xp.astype(active, xp.int64)) - 1, 0, None)
    X = _put(xp, X, Xa, active, pos)
    if LXa is not None:
        LX = _put(xp, LX, LXa, active, pos)
    stopped = _take(xp, ~running, pos) & active
    return X, LX, active & ~stopped


def conjugate_gradients(matvec, B, X0, tol, max_iter, precondition=None, track=False):
    """(Preconditioned) conjugate gradients for ``T`` independent SPD systems
    ``A_t x_t = b_t`` at once.

    ``matvec(V, cols)`` returns ``[A_t v_t]`` for the columns ``cols`` of ``V`` (the
    products of all columns still running are formed together, so a shared matrix is
    applied by one matrix-matrix product); ``precondition(R, cols)``, if given, returns
    ``[M_t^-1 r_t]`` for an SPD approximation ``M_t`` of ``A_t``.  A column stops when
    ``||b_t - A_t x_t|| <= tol_t ||b_t||`` (``tol`` a scalar or one per column).
    With ``track``, ``matvec`` returns ``(A V, L V)`` for a linear map ``L`` it applies on
    the way (a design matrix: ``A = L^T D L + lam I``), and the image ``L X`` of the
    solution is returned too, at no extra product.

    Returns ``(X, n_iterations, converged)`` (``(X, LX, n_iterations, converged)`` with
    ``track``), ``converged`` a boolean per column (False where ``max_iter`` was reached
    first).
    """
    xp, kw = _namespace(B)
    T = B.shape[1]
    all_cols = xp.arange(T, **kw)

    def apply(V, cols):
        out = matvec(V, cols)
        return out if track else (out, None)

    X = xp.asarray(X0, copy=True)
    AX, LX = apply(X, all_cols)
    R = B - AX
    thresh = (xp.asarray(tol, dtype=B.dtype, **kw) * xp.linalg.vector_norm(B, axis=0)) ** 2
    thresh = xp.broadcast_to(thresh, (T,))
    rr = xp.sum(R * R, axis=0)
    active = rr > thresh
    # the running columns' state, compacted whenever some of them stop (the finished
    # columns of X and LX are written back then)
    cols = xp.nonzero(active)[0]
    Xa, Ra, th = _take(xp, X, cols), _take(xp, R, cols), _take(xp, thresh, cols)
    LXa = _take(xp, LX, cols) if track else None
    Za = Ra if precondition is None else precondition(Ra, cols)
    rz, Pa = xp.sum(Ra * Za, axis=0), Za
    it = 0
    while cols.shape[0] and it < max_iter:
        AP, LP = apply(Pa, cols)
        step = rz / xp.sum(Pa * AP, axis=0)
        Xa = Xa + step * Pa
        if track:
            LXa = LXa + step * LP
        Ra = Ra - step * AP
        it += 1
        running = xp.sum(Ra * Ra, axis=0) > th
        if not bool(xp.all(running)):
            X, LX, active = _finish(xp, X, LX, active, cols, Xa, LXa, running)
            keep = xp.nonzero(running)[0]
            cols, th, rz = _take(xp, cols, keep), _take(xp, th, keep), _take(xp, rz, keep)
            Xa, Ra, Pa = _take(xp, Xa, keep), _take(xp, Ra, keep), _take(xp, Pa, keep)
            LXa = _take(xp, LXa, keep) if track else None
            if not cols.shape[0]:
                break
        Za = Ra if precondition is None else precondition(Ra, cols)
        rz_new = xp.sum(Ra * Za, axis=0)
        Pa = Za + (rz_new / rz) * Pa
        rz = rz_new
    if cols.shape[0]:  # stopped by max_iter: write back the running columns
        stopped = xp.zeros(cols.shape[0], dtype=xp.bool, **kw)
        X, LX, _ = _finish(xp, X, LX, active, cols, Xa, LXa, stopped)
    return (X, LX, it, ~active) if track else (X, it, ~active)
