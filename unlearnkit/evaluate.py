"""How we measure forgetting: accuracies, membership inference, backdoor success, distance to retraining.

- **Forget accuracy**: accuracy on the samples that were to be forgotten. Retraining sets the reference:
  for a forgotten class it is near 0 (the model never saw the class); for random samples it is near the
  test accuracy (they look like unseen data).
- **Membership inference (MIA)**: the loss-threshold attack (Yeom et al. 2018). A model's loss is lower on
  its training samples; the attack's AUC for telling forget samples from held-out test samples is 0.5 when
  they look the same (good unlearning) and approaches 1 when the model still remembers them. PDUDT's Table 3
  reports the attack's *precision* instead (:func:`mia_precision`). :func:`report` gives the AUC with its 95 %
  interval (bootstrap; DeLong's for large sets) (``mia_auc_low``, ``mia_auc_high``; :func:`auc_interval`): with 60 forgotten samples the
  AUC of a model that forgot them wanders 0.1 either side of 0.5, so a single number reads as a signal.
- **Backdoor attack success**: the fraction of triggered non-target test images classified as the target.
- **Distance to retraining**: ``||theta - theta_retrain||_2``, the quantity certified unlearning bounds.

:func:`report` collects them into the dictionary that the CLI writes as ``result.json``.
"""

from __future__ import annotations

import functools
from typing import Any, Mapping, Optional

import numpy as np
import torch
from torch import Tensor

from ._validate import check_finite_params, check_int, check_request_fits


def consensus(params: Tensor) -> Tensor:
    """A single model from ``params``: itself for ``(d,)``, the average over clients for ``(N, d)``."""
    return params.mean(dim=0) if params.dim() == 2 else params


def accuracy(flat, params: Tensor, x: Tensor, y: Tensor) -> float:
    """Top-1 accuracy of the model ``params`` on ``(x, y)`` (``nan`` for an empty set)."""
    if x.shape[0] == 0:
        return float("nan")
    pred = flat.predict(consensus(params), x)
    return float((pred == y.to(pred.device)).float().mean())


def auc(pos: np.ndarray, neg: np.ndarray) -> float:
    """Area under the ROC curve for scores ``pos`` (positives) against ``neg`` (Mann-Whitney U, ties = 1/2)."""
    pos, neg = np.asarray(pos, dtype=float), np.asarray(neg, dtype=float)
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    scores = np.concatenate([pos, neg])
    order = scores.argsort(kind="mergesort")
    ranks = np.empty(len(scores))
    sorted_scores = scores[order]
    # average ranks for ties
    i = 0
    while i < len(scores):
        j = i
        while j + 1 < len(scores) and sorted_scores[j + 1] == sorted_scores[i]:
            j += 1
        ranks[order[i:j + 1]] = 0.5 * (i + j) + 1.0
        i = j + 1
    u = ranks[: pos.size].sum() - pos.size * (pos.size + 1) / 2.0
    return float(u / (pos.size * neg.size))


#: bootstrap resamples behind every ``mia_auc`` interval of :func:`report`
MIA_BOOTSTRAP = 400


@functools.lru_cache(maxsize=16)
def _resample_counts(m: int, n: int, n_boot: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """How often each positive and each negative is drawn in each of ``n_boot`` resamples (read-only arrays,
    cached: a frontier reports hundreds of models on the same forget and test sets)."""
    rng = np.random.default_rng(seed)
    rows = np.arange(n_boot)[:, None]
    cp = np.bincount((rng.integers(0, m, (n_boot, m)) + rows * m).ravel(), minlength=n_boot * m)
    cn = np.bincount((rng.integers(0, n, (n_boot, n)) + rows * n).ravel(), minlength=n_boot * n)
    cp, cn = cp.reshape(n_boot, m).astype(float), cn.reshape(n_boot, n).astype(float)
    cp.flags.writeable = cn.flags.writeable = False
    return cp, cn


def auc_interval(pos: np.ndarray, neg: np.ndarray, *, level: float = 0.95, n_boot: int = MIA_BOOTSTRAP,
                 seed: int = 0) -> tuple[float, float]:
    """A ``level`` interval for :func:`auc` of ``pos`` against ``neg``; ``(nan, nan)`` when either is empty.

    Up to 250 000 pairs: the percentile bootstrap, positives and negatives resampled separately (each set
    keeps its size), ``n_boot`` times from a fixed ``seed`` (the same scores give the same interval). Larger
    sets: DeLong's normal interval (DeLong, DeLong & Clarke-Pearson 1988, the variance of the two sets'
    placement values), which the bootstrap agrees with there at a fraction of the cost; clipped to [0, 1]."""
    from scipy.stats import norm  # deferred: imports scipy.stats

    pos, neg = np.asarray(pos, dtype=float).ravel(), np.asarray(neg, dtype=float).ravel()
    n_boot = check_int("n_boot", n_boot, low=10, high=100_000)
    if pos.size == 0 or neg.size == 0:
        return float("nan"), float("nan")
    m, n = pos.size, neg.size
    if m * n <= 250_000:  # every pair once, resampling as counts
        pairs = (pos[:, None] > neg[None, :]) + 0.5 * (pos[:, None] == neg[None, :])
        cp, cn = _resample_counts(m, n, n_boot, seed)
        aucs = ((cp @ pairs) * cn).sum(1) / (m * n)
        lo, hi = np.quantile(aucs, [(1 - level) / 2, (1 + level) / 2])
        return float(lo), float(hi)
    sn, sp = np.sort(neg), np.sort(pos)
    v10 = (np.searchsorted(sn, pos, "left") + np.searchsorted(sn, pos, "right")) / (2.0 * n)  # placements
    v01 = 1.0 - (np.searchsorted(sp, neg, "left") + np.searchsorted(sp, neg, "right")) / (2.0 * m)
    a, se = float(v10.mean()), float(np.sqrt(v10.var(ddof=1) / m + v01.var(ddof=1) / n))
    z = float(norm.ppf((1 + level) / 2))
    return max(0.0, a - z * se), min(1.0, a + z * se)


def _mia_scores(flat, params: Tensor, x_forget: Tensor, y_forget: Tensor, x_test: Tensor,
                y_test: Tensor) -> tuple[np.ndarray, np.ndarray]:
    theta = consensus(params)
    with torch.no_grad():
        return (-flat.sample_losses(theta, x_forget, y_forget).cpu().numpy(),
                -flat.sample_losses(theta, x_test, y_test).cpu().numpy())


def mia_auc(flat, params: Tensor, x_forget: Tensor, y_forget: Tensor, x_test: Tensor, y_test: Tensor) -> float:
    """AUC of the loss-threshold membership attack: forget samples (positives) against test samples.

    The attack scores each sample by its negative loss (members have low loss). 0.5 means the forget set
    looks like unseen data; 1.0 means it is perfectly recognisable as training data.
    """
    return auc(*_mia_scores(flat, params, x_forget, y_forget, x_test, y_test))


def mia_precision(flat, params: Tensor, x_mem: Tensor, y_mem: Tensor, x_non: Tensor, y_non: Tensor, *,
                  repeats: int = 100, seed: int = 0) -> tuple[float, float]:
    """Membership-inference *precision* (paper Table 3), mean and std in percent over ``repeats`` attacks.

    Qiao et al. 2025 (PDUDT) report it without saying which attack (digest 002, P11). Ours: a loss-threshold
    attack on the average model, on balanced draws of ``m`` members (the leaver's training samples) and ``m``
    non-members (held-out samples of the same classes); the ``m`` lowest-loss samples are called members.
    Precision is the share of true members among them: 50% is guessing, 100% a model that still remembers
    every member.
    """
    check_int("mia_repeats", repeats, low=1)
    rng = np.random.default_rng([int(seed), 9])
    theta = consensus(params)
    with torch.no_grad():
        lm = flat.sample_losses(theta, x_mem, y_mem).cpu().numpy()
        ln = flat.sample_losses(theta, x_non, y_non).cpu().numpy()
    m = min(lm.size, ln.size)
    if m == 0:
        raise ValueError("mia_precision needs at least one member and one non-member sample")
    prec = []
    for _ in range(repeats):
        a = lm[rng.choice(lm.size, m, replace=False)]
        b = ln[rng.choice(ln.size, m, replace=False)]
        scores = np.concatenate([a, b]) + rng.uniform(0, 1e-9, 2 * m)  # random tie-breaking
        called = np.argsort(scores)[:m]
        prec.append(100.0 * np.mean(called < m))
    return float(np.mean(prec)), float(np.std(prec))


def mia_precision_interval(precision_pct: float, calls: int, *, level: float = 0.95) -> tuple[float, float]:
    """The two-sided Clopper-Pearson interval (percent) of one attack's precision: ``calls`` samples called
    members, ``round(precision_pct * calls / 100)`` of them true members (Clopper & Pearson 1934). Beside
    :func:`mia_precision`'s mean over repeated draws, it says how far one attack of that size can land from
    the attack's expected precision."""
    from scipy.stats import beta  # deferred: imports scipy.stats

    calls = check_int("calls", calls, low=1)
    k = int(round(precision_pct * calls / 100.0))
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(beta.ppf(a, k, calls - k + 1))
    hi = 1.0 if k == calls else float(beta.ppf(1 - a, k + 1, calls - k))
    return 100.0 * lo, 100.0 * hi


def backdoor_success(flat, params: Tensor, backdoor) -> float:
    """Attack success rate: fraction of triggered non-target test images classified as the target."""
    return accuracy(flat, params, backdoor.x_test_triggered, backdoor.y_test_triggered)


def distance(a: Tensor, b: Tensor) -> float:
    """``||a - b||_2`` between two models (client averages for ``(N, d)`` stacks)."""
    return float((consensus(a) - consensus(b)).norm())


def report(flat, params: Tensor, dataset, request, *, retrained: Optional[Tensor] = None,
           original: Optional[Tensor] = None, backdoor=None, train_indices: Optional[np.ndarray] = None,
           mia_reference: Optional[tuple[Tensor, Tensor]] = None) -> dict[str, float]:
    """All forgetting metrics for ``params`` after a forget ``request``.

    Parameters
    ----------
    retrained:
        Parameters of the model retrained without the forget set: gives ``dist_to_retrain`` and the
        ``retrain_*`` reference columns.
    original:
        Parameters before unlearning: gives ``original_*`` columns, including ``original_dist_to_retrain``.
    backdoor:
        A :class:`unlearnkit.data.Backdoor`: adds ``backdoor_asr`` (and for the references).
    train_indices:
        The training indices used (for ``retain_acc``); all of the training split when ``None``.
    mia_reference:
        ``(x, y)`` of non-member samples for the MIA (default: the test split, or the test samples of the
        forgotten class for a class request).
    """
    idx_all = np.arange(dataset.n_train) if train_indices is None else np.asarray(train_indices)
    check_request_fits(request, n_train=dataset.n_train, train_indices=idx_all, n_classes=dataset.n_classes,
                       labels=dataset.y_train.cpu().numpy() if request.kind == "class" else None, where="report")
    for name, p in (("params", params), ("retrained", retrained), ("original", original)):
        if p is not None:
            check_finite_params(p, where=f"report ({name})")
    xf, yf = dataset.train_subset(request.indices)
    retain = request.retain(idx_all)
    xr, yr = dataset.train_subset(retain)
    if mia_reference is not None:
        xt, yt = mia_reference
    elif request.kind == "class" and request.label is not None:
        # a forgotten class is compared with unseen samples *of that class*: against the whole test set the
        # attack would only detect "this class is poorly classified", which retraining also shows
        mask = dataset.y_test == request.label
        xt, yt = dataset.x_test[mask], dataset.y_test[mask]
    else:
        xt, yt = dataset.x_test, dataset.y_test

    def metrics(p: Tensor) -> dict[str, float]:
        out = {
            "test_acc": accuracy(flat, p, dataset.x_test, dataset.y_test),
            "retain_acc": accuracy(flat, p, xr, yr),
            "forget_acc": accuracy(flat, p, xf, yf),
        }
        s_f, s_t = _mia_scores(flat, p, xf, yf, xt, yt)
        out["mia_auc"] = auc(s_f, s_t)
        out["mia_auc_low"], out["mia_auc_high"] = auc_interval(s_f, s_t)
        if request.kind == "class" and request.label is not None:
            mask = dataset.y_test == request.label
            out["forget_class_test_acc"] = accuracy(flat, p, dataset.x_test[mask], dataset.y_test[mask])
        if backdoor is not None:
            out["backdoor_asr"] = backdoor_success(flat, p, backdoor)
        return out

    res = metrics(params)
    if retrained is not None:
        res["dist_to_retrain"] = distance(params, retrained)
        res.update({f"retrain_{k}": v for k, v in metrics(retrained).items()})
    if original is not None:
        res.update({f"original_{k}": v for k, v in metrics(original).items()})
        if retrained is not None:
            res["original_dist_to_retrain"] = distance(original, retrained)
    return res


def format_report(rows: Mapping[str, Mapping[str, Any]], keys: Optional[list[str]] = None) -> str:
    """A plain-text table: one row per model (e.g. ``{"unlearned": {...}, "retrained": {...}}``).

    A key whose rows carry ``<key>_low`` and ``<key>_high`` (``mia_auc`` from :func:`report`: its 95 %
    interval, :func:`auc_interval`) is printed as ``value [low, high]``, and its header says which interval."""
    keys = keys or sorted({k for r in rows.values() for k in r})
    ci = {k for k in keys if any(f"{k}_low" in r and f"{k}_high" in r for r in rows.values())}
    heads = {k: f"{k} [95% interval]" if k in ci else k for k in keys}
    name_w = max(len("model"), *(len(n) for n in rows))
    widths = {k: max(len(heads[k]), 22 if k in ci else 8) for k in keys}
    head = "model".ljust(name_w) + "  " + "  ".join(heads[k].rjust(widths[k]) for k in keys)
    lines = [head, "-" * len(head)]
    for name, r in rows.items():
        cells = []
        for k in keys:
            v = r.get(k)
            text = "-" if v is None else f"{v:.4f}" if isinstance(v, float) else str(v)
            if k in ci and r.get(f"{k}_low") is not None and isinstance(v, float):
                text += f" [{r[f'{k}_low']:.3f}, {r[f'{k}_high']:.3f}]"
            cells.append(text.rjust(widths[k]))
        lines.append(name.ljust(name_w) + "  " + "  ".join(cells))
    return "\n".join(lines)
