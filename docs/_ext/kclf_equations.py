r"""The papers' equations on the API pages, rendered as math: each model is stated here once.

This extension adds a "Model" section with the model's equations typeset to each
estimator's API page (``autodoc-process-docstring``, after numpydoc has turned the
docstring into reStructuredText).  The docstrings cite the same equation numbers and
describe the implementation around them, without a second, plain-text copy of the model;
docstrings that hold ``.. math::`` themselves (``MAPLP``) are rendered as they are.  The
equations are transcribed from the papers, with their equation numbers.
"""

from __future__ import annotations

MODELS = {
    "LSPC": r"""
Posterior model (Eq. 2) with Gaussian kernels at the training points and its least-squares
fit (Eq. 3), solved in closed form with one Cholesky factorisation for all classes:

.. math::

   q(y \mid x; \alpha_y) = \alpha_y^\top \varphi(x), \qquad
   \varphi(x) = \big(k(x, x_1), \dots, k(x, x_n)\big)^\top

.. math::

   k(x, x') = \exp\!\Big(-\frac{\lVert x - x' \rVert^2}{2\sigma^2}\Big)

.. math::

   \tilde\alpha_y = (H + \lambda I_n)^{-1} h_y

.. math::

   H = \frac{1}{n} \sum_{i=1}^n \varphi(x_i)\varphi(x_i)^\top, \qquad
   h_y = \frac{1}{n} \sum_{i:\, y_i = y} \varphi(x_i)

The three roundings (``rounding=``): LSPC rounds the parameters (Eq. 4), LSPC' does not
round (Eq. 5), LSPC-new rounds the outputs (Eq. 6, the default):

.. math::

   \hat p_{\mathrm{LSPC}}(y \mid x) &= \frac{\max(0, \tilde\alpha_y)^\top \varphi(x)}
       {\sum_{y'} \max(0, \tilde\alpha_{y'})^\top \varphi(x)} \\
   \hat p_{\mathrm{LSPC'}}(y \mid x) &= \frac{\tilde\alpha_y^\top \varphi(x)}
       {\sum_{y'} \tilde\alpha_{y'}^\top \varphi(x)} \\
   \hat p_{\mathrm{new}}(y \mid x) &= \frac{\max(0, \tilde\alpha_y^\top \varphi(x))}
       {\sum_{y'} \max(0, \tilde\alpha_{y'}^\top \varphi(x))}
""",
    "LSPCCV": r"""
For every (σ, fold) the training-fold Gram matrix is decomposed once,
:math:`K = U \operatorname{diag}(s) V^\top`; then for every λ and every class column
:math:`y` of every task at once (:math:`m` training rows of the fold)

.. math::

   \tilde\alpha = \Big(\frac{K^\top K}{m} + \lambda I\Big)^{-1} \frac{K^\top y}{m}
   = V \operatorname{diag}\!\Big(\frac{s/m}{s^2/m + \lambda}\Big) U^\top y ,

exactly the solution of Eq. (3) on the fold, so the search scores what a per-fold refit
would.
""",
    "KernelLogisticRegression": r"""
The model (Eq. 2 with the expansion Eq. 7) and the penalised conditional log-likelihood it
maximises (Eq. 3 with the Gaussian prior of Eq. 6):

.. math::

   P(1 \mid x) = \pi(x) = \frac{1}{1 + e^{-f(x)}}, \qquad
   f(x) = \sum_{i=1}^n \alpha_i k(x_i, x)

.. math::

   \Phi(\alpha) = \sum_{i=1}^n \big[y_i \log \pi_i + (1 - y_i) \log(1 - \pi_i)\big]
   - \frac{\lambda}{2} \alpha^\top K \alpha

Its Newton (IRLS) step, Eq. (9), with :math:`W = \operatorname{diag}(\pi_i (1 - \pi_i))`:

.. math::

   (K + \lambda W^{-1})\, \alpha_{r+1} = K \alpha_r + e
""",
    "KernelLogisticRegressionCV": r"""
The model of :class:`kclf.KernelLogisticRegression`, with σ and λ chosen by K-fold
cross-validation:

.. math::

   \Phi(\alpha) = \sum_{i=1}^n \big[y_i \log \pi_i + (1 - y_i) \log(1 - \pi_i)\big]
   - \frac{\lambda}{2} \alpha^\top K \alpha
""",
    "PairwiseCoupling": r"""
The pairwise probabilities :math:`r_{ij}(x) = P(i \mid x, i \text{ or } j)` of the
:math:`c(c-1)/2` binary classifiers are coupled into class probabilities :math:`p` by
minimising the weighted Kullback-Leibler divergence of Eq. (10), :math:`n_{ij}` the pair
sizes:

.. math::

   \sum_{i<j} n_{ij} \Big[r_{ij} \log\frac{r_{ij}}{\mu_{ij}}
   + (1 - r_{ij}) \log\frac{1 - r_{ij}}{1 - \mu_{ij}}\Big], \qquad
   \mu_{ij} = \frac{p_i}{p_i + p_j}

whose optimum satisfies the score equations (11):

.. math::

   \sum_{j \ne i} n_{ij}\, \mu_{ij} = \sum_{j \ne i} n_{ij}\, r_{ij}, \qquad i = 1, \dots, c
""",
    "couple": r"""
The weighted Kullback-Leibler divergence of Eq. (10) over the simplex, and the iteration
after Eq. (11):

.. math::

   \sum_{i<j} n_{ij} \Big[r_{ij} \log\frac{r_{ij}}{\mu_{ij}}
   + (1 - r_{ij}) \log\frac{1 - r_{ij}}{1 - \mu_{ij}}\Big], \qquad
   \mu_{ij} = \frac{p_i}{p_i + p_j}

.. math::

   p_i \leftarrow p_i \, \frac{\sum_{j \ne i} n_{ij} r_{ij}}{\sum_{j \ne i} n_{ij} \mu_{ij}}
""",
    "CorrLog": r"""
The correlated logistic model, Eq. (4), for labels :math:`y \in \{-1, +1\}^m`:

.. math::

   P(y \mid x) = \frac{1}{Z(x)} \exp\Big(\sum_{i} y_i \beta_i^\top x
   + \sum_{i<j} \alpha_{ij}\, y_i y_j\Big)

learned by elastic-net regularised maximum pseudo-likelihood (Eq. 10-13), with
:math:`W` the weights without intercepts and :math:`c` = ``coupling_scale``:

.. math::

   & \frac{1}{n}\sum_{l=1}^n \sum_{i=1}^m \log\Big(1 + e^{-2 y_{li}
   (\beta_i^\top x_l + \sum_{j \ne i} \alpha_{ij} y_{lj})}\Big) \\
   & \quad + \rho_2 \big(\lVert W \rVert_2^2 + c \lVert \alpha \rVert_2^2\big)
   + \rho_1 \big(\lVert W \rVert_1 + c \lVert \alpha \rVert_1\big)

Prediction: the joint MAP label vector (Eq. 21) or the thresholded marginals.
""",
    "ManifoldGPC": r"""
The inputs are mapped to kernel values at :math:`m` k-means centres (Sec. 3.2, Eq. 1-2),
and a zero-mean GP acts on :math:`z = \psi(x)`:

.. math::

   \psi(x) = \big(K(x, c_1), \dots, K(x, c_m)\big), \qquad
   c(z, z') = a \exp\!\Big(-\frac{\lVert z - z' \rVert^2}{2\ell^2}\Big)

with the logistic likelihood and Laplace's approximation (MLA, Eq. 3-6) or the probit
likelihood and expectation propagation (MEP, Eq. 7-8), whose predictive probability is

.. math::

   P(y = 1 \mid x) = \Phi\Big(\frac{\mu_*}{\sqrt{1 + s_*^2}}\Big)
""",
    "WeightedRidgeLogistic": r"""
The weighted ridge likelihood of Sec. 2.2 (:math:`y_i \in \{0, 1\}`), maximised by
Newton-Raphson or gradient ascent:

.. math::

   \ell^\lambda(\beta) = \frac{1 - \lambda}{2}\, \ell(\beta)
   - \frac{\lambda}{2} \lVert \beta \rVert^2, \qquad
   \ell(\beta) = \sum_{i=1}^n y_i x_i^\top \beta - \log\big(1 + e^{x_i^\top \beta}\big)
""",
    "PlattScaled": r"""
The estimator's decision values :math:`f(x)` mapped to probabilities by a sigmoid fitted on
out-of-fold decision values (Platt scaling):

.. math::

   P(y = 1 \mid x) = \frac{1}{1 + \exp\big(A f(x) + B\big)}
""",
}


def _insert(app, what, name, obj, options, lines):
    short = name.rsplit(".", 1)[-1]
    if what not in ("class", "function") or short not in MODELS:
        return
    if not name.startswith("kclf."):
        return
    block = [".. rubric:: Model", ""] + MODELS[short].strip("\n").splitlines() + [""]
    # after the summary paragraph (the first blank line after the first text)
    first = next((i for i, line in enumerate(lines) if line.strip()), 0)
    at = next((i for i in range(first, len(lines)) if not lines[i].strip()), len(lines))
    lines[at:at] = [""] + block


def setup(app):
    # after numpydoc (priority 500), so the block is plain reStructuredText in its output
    app.connect("autodoc-process-docstring", _insert, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
