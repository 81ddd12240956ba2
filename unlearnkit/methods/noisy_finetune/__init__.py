"""Certified unlearning by noisy fine-tuning on the retain set (Koloskova et al., ICML 2025; digest 004).

Unlearning = a few *noisy* SGD steps on the retain data only, then ordinary fine-tuning. Each noisy step is
a stochastic post-processing of the trained model that never touches the forget set, so privacy amplifies
with every step. Two certified variants and two baselines:

- **gradient clipping** (eq. 3, code name ``iteration``): ``x0 = clip(x_hat, C0)``, then
  ``x <- x - gamma (clip(g, C1) + lam x) + N(0, sigma^2 I)`` for ``T`` steps; certified by shifted Renyi
  divergences (Theorem A.9) and an RDP -> (eps, delta) conversion;
- **model clipping** (eq. 4, ``contractive_coefficients``): ``x <- clip(x - gamma (g + lam x), C2) +
  N(0, sigma^2 I)``; certified by hockey-stick contraction (Theorem 4.2 / Lemma A.2): delta shrinks by
  ``theta_eps(2 C2 / sigma)`` per step;
- **output perturbation** (eq. 1): ``clip(x_hat, C0) + N(0, sigma0^2 I)``, the Gaussian mechanism with
  sensitivity ``2 C0``;
- **DP-SGD + group privacy** (Sec. 4.2): train with DP-SGD so that the whole forget set of ``k`` points is
  covered by group privacy; "unlearning" is then free fine-tuning.

Paper mode versus sound mode (named, never silently fixed; see digest 004 section 7):

1. *Gradient clipping, paper mode* reproduces the sigma of the paper's tables (Tables 5, 7, 12-15; the 14 test
   vectors of digest 004 section 3.4): the code sets the *slope* of the linear Renyi curve
   ``D_q <= q rho`` equal to the target epsilon (``rho = eps``) and then converts as if ``D_q <= eps`` held at
   every order. By the paper's own Theorem A.9 (``D_q <= q rho``, read in the seed), at table epsilon 1 and
   delta 1e-5 the guarantee is really about **(7.08, 1e-5)**; :func:`gc_epsilon` reports both numbers.
   *Sound mode* solves ``eps(rho, delta) = eps`` with the Balle et al. (2020) conversion of the linear curve.
2. The code's lambda = 0 branch uses half its own lambda -> 0 limit; paper mode keeps it, sound mode uses the
   limit.
3. *Model clipping*: paper mode is the paper's Lemma A.2 as printed (``theta_eps`` with eps fixed); sound mode
   is the tight recursion ``eps~ = log(1 + (e^eps - 1) / delta_t)`` (Balle et al. 2019, Thm 1) that
   reproduces Tables 6/8. Both are valid bounds; the tight one needs far fewer steps.
4. *Output perturbation*: paper mode is the classic ``sigma = 2 C0 sqrt(2 ln(1.25/delta)) / eps`` (valid for
   eps < 1 only); sound mode is the analytic Gaussian mechanism (Balle & Wang 2018).
5. *DP-SGD group privacy*: paper mode reproduces the code's per-record delta ``delta e^{eps1 - k eps1}``,
   which omits the ``1/k`` factor of group privacy (Vadhan 2017, Lemma 2.2); sound mode uses
   ``delta / (k e^{(k-1) eps1})``.

Layout: :mod:`.bounds` (the formulas, no torch), :mod:`.algorithms` (configs and method classes),
:mod:`.finetune` (the shared noisy and clean loops), :mod:`.dpsgd` (the DP-SGD baseline). The experiments
(profiles, the ablation, the DP-SGD pipeline, the accuracy race) live in
:mod:`unlearnkit.experiments.noisy_finetune.lab`.
"""

from ...runtime import lazy_exports

__all__ = [
    "GradientClipping", "GradientClippingConfig", "ModelClipping", "ModelClippingConfig", "OutputPerturbation",
    "OutputPerturbationConfig", "CleanFinetuneConfig", "DPSGDConfig",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "GradientClipping": ".algorithms", "GradientClippingConfig": ".algorithms", "ModelClipping": ".algorithms",
    "ModelClippingConfig": ".algorithms", "OutputPerturbation": ".algorithms",
    "OutputPerturbationConfig": ".algorithms", "CleanFinetuneConfig": ".finetune", "DPSGDConfig": ".dpsgd",
})
