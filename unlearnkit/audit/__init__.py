"""Empirical audit of an (epsilon, delta) certificate: a statistical *lower bound* on epsilon.

A certificate says that two random outputs are (epsilon, delta)-indistinguishable: the unlearned model
``U(A(D))`` ("world A") and the certifier's model ``C(D minus D_f)`` ("world B"), e.g. retraining plus the
same noise. That is a statement about *every* event E::

    P_A(E) <= e^eps P_B(E) + delta      and      P_B(E) <= e^eps P_A(E) + delta.

So any event we can observe turns into a lower bound, ``eps >= log((P_A(E) - delta) / P_B(E))``
(and the same with A and B swapped). The audit here (Jagielski et al. 2020, "Auditing Differentially Private
Machine Learning", NeurIPS; Nasr et al. 2021, "Adversary Instantiation", S&P):

1. samples both worlds many times with fresh randomness (a *mechanism* is any callable
   ``(n, generator) -> (n, d) tensor``: a plain Gaussian mechanism, or train-then-unlearn of a method);
2. reduces each output to one number, by default its projection on the direction in which world A's mean
   differs from world B's (the direction the forget set pushes; for a Gaussian mechanism this is the
   likelihood-ratio test, so a threshold on it is the best possible test);
3. splits the samples: on the first part it picks the best threshold test (event E = {stat > t} or
   {stat <= t}, and which world plays A), on the held-out part it counts that test's errors;
4. turns the held-out counts into a Clopper-Pearson bound at confidence ``1 - alpha`` (a lower bound on
   P_A(E) and an upper bound on P_B(E), each at ``alpha / 2``), hence a lower bound on epsilon that holds
   with probability at least ``1 - alpha``. The threshold never sees the held-out samples, so the bound is
   valid (choosing it on the same samples would overstate epsilon).

Several audits reported together (a table of methods) are corrected for multiple testing with
:func:`bonferroni`: each runs at ``alpha / k``, so all ``k`` verdicts hold jointly with confidence ``1 - alpha``.

A **violation** is an audit lower bound above the certified epsilon: the certificate is refuted at
confidence ``1 - alpha``. No violation does *not* prove a certificate: the audit only sees one statistic of
one problem, and with ``n`` samples it cannot certify more than about ``log(n)``.

Beyond the default, :func:`estimate` (and ``AuditConfig(method=...)``) offers a menu of statistics
(:mod:`.statistics`: Clopper-Pearson with a split or with Bonferroni over fixed rank thresholds, a GDP-shape
estimate labelled with its assumption, AUROC and TPR at low FPR), and :mod:`.one_run` the one-run canary
audit's bound (Steinke, Nasr & Jagielski 2023), :mod:`.ceiling` the highest bound a budget of trials could
ever reach, and :mod:`.forgetting` the per-example forgetting scores of the NeurIPS 2023 competition.

This module is the statistics only (it knows no unlearning method); the worlds of each method's certificate
on a tiny convex task, and the audit of every method, are in :mod:`unlearnkit.experiments.audits.methods`.
"""

from ..runtime import lazy_exports

__all__ = [
    "AuditConfig", "AuditResult", "audit", "audit_gaussian", "audit_ceiling", "forgetting_score",
]

__getattr__, __dir__ = lazy_exports(__name__, __all__, {
    "AuditConfig": ".run", "AuditResult": ".run", "audit": ".run", "audit_gaussian": ".run",
    "audit_ceiling": ".ceiling", "forgetting_score": ".forgetting",
})
