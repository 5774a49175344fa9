"""``verbose``: 0 writes nothing; 1 a line per step of the search to stderr, each with the
seconds elapsed, whose numbers are the search's own; the fitted model does not change."""

import re

import numpy as np
import pytest
from sklearn.datasets import make_classification

from kclf import LSPCCV, CorrLog, KernelLogisticRegressionCV, ManifoldGPC

LINE = re.compile(r"^\[(\w+)\] (.+); (\d+\.\d\d) s$")


def _lines(err, name):
    lines = err.strip().splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), lines
    assert {m.group(1) for m in parsed} == {name}
    elapsed = [float(m.group(3)) for m in parsed]
    assert elapsed == sorted(elapsed)
    return [m.group(2) for m in parsed]


@pytest.fixture
def data():
    return make_classification(90, 4, random_state=0)


@pytest.mark.parametrize("cls", [LSPCCV, KernelLogisticRegressionCV])
def test_a_width_search_writes_a_line_per_width_and_fold(cls, data, capsys):
    X, y = data
    kw = dict(sigma_factors=[0.5, 2.0], lams=[0.1], cv=3, random_state=0)
    quiet = cls(**kw).fit(X, y)
    assert capsys.readouterr().err == ""
    loud = cls(**kw, verbose=1).fit(X, y)
    lines = _lines(capsys.readouterr().err, cls.__name__)
    assert len(lines) == 1 + 2 * 3 + 1
    assert lines[0] == "90 rows, 1 task(s): 3 folds x 2 widths x 1 lambdas"
    # with one lambda a fold's best score is its score: the mean of a width's three
    # lines is the CV score of that width (printed to 4 significant digits)
    for w in range(2):
        fold_lines = lines[1 + 3 * w : 4 + 3 * w]
        assert all(line.startswith(f"width {w + 1}/2 ") for line in fold_lines)
        scores = [float(line.split("best error ")[1].split()[0]) for line in fold_lines]
        assert np.mean(scores) == pytest.approx(quiet.cv_results_["mean_test_score"][w], abs=5e-4)
    assert lines[-1].startswith(f"refitted at sigma={quiet.sigma_:.4g}, lam=0.1")
    np.testing.assert_array_equal(loud.predict_proba(X), quiet.predict_proba(X))


def test_a_multitask_search_says_how_many_tasks_it_refitted(data, capsys):
    X, y = data
    Y = np.c_[y, 1 - y]
    LSPCCV(sigma_factors=[1.0], cv=2, verbose=1).fit(X, Y)
    lines = _lines(capsys.readouterr().err, "LSPCCV")
    assert lines[0].startswith("90 rows, 2 task(s)")
    assert lines[-1] == "refitted 2 task(s) at their chosen settings"


def test_manifold_gpc_writes_a_line_per_length_scale_row_it_walks(data, capsys):
    X, y = data
    quiet = ManifoldGPC(n_centers=[10, None], inference="ep").fit(X, y)
    assert capsys.readouterr().err == ""
    loud = ManifoldGPC(n_centers=[10, None], inference="ep", verbose=1).fit(X, y)
    lines = _lines(capsys.readouterr().err, "ManifoldGPC")
    walked_rows = np.isfinite(quiet.hyperparameter_scores_).any(axis=2).sum()
    assert len(lines) == 1 + walked_rows + 1
    best = [float(line.split("best log evidence ")[1].split()[0]) for line in lines[1:-1]]
    assert max(best) == pytest.approx(np.max(quiet.hyperparameter_scores_[..., ::2]), rel=1e-5)
    chosen = 1 if quiet.n_centers_ is not None else 2
    assert lines[-1].startswith(f"chose map {chosen}, length scale")
    np.testing.assert_array_equal(loud.predict_proba(X), quiet.predict_proba(X))


@pytest.mark.parametrize("penalty, paths", [("shared", 1), ("per_label", 2)])
def test_corrlog_writes_a_line_per_fold_of_each_path(penalty, paths, capsys):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 4))
    Y = (X[:, :3] + rng.normal(size=(80, 3)) > 0).astype(int)
    quiet = CorrLog(cv=3, penalty=penalty).fit(X, Y)
    assert capsys.readouterr().err == ""
    loud = CorrLog(cv=3, penalty=penalty, verbose=1).fit(X, Y)
    lines = _lines(capsys.readouterr().err, "CorrLog")
    assert len(lines) == 1 + 3 * paths + 1
    assert lines[-1] == f"chose rho1={quiet.rho1_:.4g}, rho2={quiet.rho2_:.4g}"
    np.testing.assert_array_equal(loud.predict(X), quiet.predict(X))
