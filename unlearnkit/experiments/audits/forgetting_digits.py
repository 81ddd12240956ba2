"""Per-example forgetting scores (the NeurIPS 2023 competition's metric) on digits, for several methods.

A batch of ``B`` softmax-regression models on sklearn's 8x8 digits (as :func:`unlearnkit.data.datasets.load`
gives them: pixels / 16, flattened, a bias feature, rows divided by sqrt(65) so ``||x|| <= 1``) is trained at
once: full-batch projected gradient descent on a ``(B, 65, 10)`` parameter tensor with batched matmuls. Each
model has its own seed: its random initialisation (``||W_0|| ~ init_norm``) and every noise draw of every
method come from per-model generators, so model ``b`` of a batch equals the same seed run alone
(:func:`run_batch` with one seed; the tests check it). Retraining's only randomness is that initialisation,
shrunk by about ``(1 - mu/L)^T`` (0.003 at the defaults: margins spread by about 1e-4), so any noise a
certificate adds is visible against plain retraining; hence the second reference below.

Methods (one forget request of ``m`` training examples; certificates at ``(epsilon, delta)``, default (1, 1e-5);
``unlearnkit.methods`` formulas, all ``mode="sound"``):

- ``retrain``: exact retraining from fresh seeds, the control (certified epsilon 0);
- ``output_perturbation``: ``clip(w_T, C0) + N(0, sigma^2)``, sensitivity ``2 C0`` (Koloskova et al. eq. 1);
- ``noisy_finetune``: gradient clipping, ``x <- x - gamma (clip(g, C1) + lam x) + N(0, sigma^2)`` on the
  retained data from ``clip(w_T, C0)`` (Koloskova et al. Thm A.9, Balle conversion);
- ``r2d``: rewind to ``w_{T-K}``, ``K`` projected GD steps on the retained data, Gaussian noise for the
  deterministic GD-R2D sensitivity (Mu & Klabjan, derived full-batch bound, analytic Gaussian, diameter cap);
- ``d2d``: ``I`` projected GD steps from ``w_T`` on the retained data plus noise for the derived full-batch D2D
  sensitivity (Neel et al. 2021 substitute);
- ``finetune``: ``K`` plain GD steps on the retained data, no noise, no certificate (epsilon inf).

Each forgotten example's score is its margin (true-class logit minus the log-sum-exp of the others) under
each model. Two references: ``retrained`` (plain retraining: the competition's) and ``vs_certifier``
(retraining plus the method's own noise, the distribution a noise certificate promises closeness to; the
same as plain retraining for noise-free rows). Scores come from
:func:`unlearnkit.audit.forgetting.forgetting_score` (delta 0.01, bins of 0.5, ``F = mean 2^-bin``: 1 is
perfect forgetting) and the interval from ``n_repeats`` independent repetitions (95 % Student-t).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Sequence

import numpy as np
import torch

from ..._validate import check_epsilon, check_int, check_positive, check_probability
from ...audit.forgetting import forgetting_score, score_interval
from ...constants import softmax_constants
from ...methods.descend_rewind.bounds import descend_rewind_sigma, gd_d2d_sensitivity, gd_r2d_sensitivity
from ...methods.noisy_finetune.bounds import gc_sigma, op_sigma
from ...core import MAX_REPEATS, MAX_STEPS, MAX_TRIALS
from ...data.datasets import load


DIGITS_FORGET_METHODS = ("retrain", "output_perturbation", "noisy_finetune", "r2d", "d2d", "finetune")
_STREAMS = {"init": 1, "retrain_init": 2, "output_perturbation": 3, "noisy_finetune": 4, "r2d": 5, "d2d": 6}


@dataclass(frozen=True)
class DigitsForgetConfig:
    """Problem and method settings. ``lam`` weight decay (strong convexity), ``radius`` the projection ball,
    ``init_norm`` the expected norm of the random initialisation, ``T`` training steps (step ``1/L``), ``m``
    forgotten examples (one request), ``K`` R2D replay steps and plain fine-tuning steps, ``I`` D2D steps,
    ``nft_steps`` noisy fine-tuning steps, ``C0``/``C1`` the model and gradient clip of noisy fine-tuning and
    output perturbation; certificates at ``(epsilon, delta)``."""

    lam: float = 0.03
    radius: float = 4.0
    init_norm: float = 4.0
    T: int = 100
    m: int = 10
    K: int = 60
    I: int = 60
    nft_steps: int = 50
    C0: float = 2.0
    C1: float = 0.02
    epsilon: float = 1.0
    delta: float = 1e-5
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_positive("lam", self.lam)
        check_positive("radius", self.radius)
        check_positive("init_norm", self.init_norm, allow_zero=True)
        check_int("T", self.T, low=2, high=MAX_STEPS)
        check_int("m", self.m, low=1, high=100)
        check_int("K", self.K, low=1, high=self.T)
        check_int("I", self.I, low=1, high=MAX_STEPS)
        check_int("nft_steps", self.nft_steps, low=1, high=MAX_STEPS)
        check_positive("C0", self.C0)
        check_positive("C1", self.C1)
        check_epsilon("epsilon", self.epsilon)
        check_probability("delta", self.delta, allow_zero=False, allow_one=False)


def digits_problem(config: DigitsForgetConfig, *, device=None) -> dict[str, Any]:
    """Features (``||x|| <= 1``), labels, the forget indices (``m`` training rows drawn with ``data_seed``) and the
    softmax constants (G, L, mu) with step ``eta = 1/L``, on ``device`` (default CPU)."""

    ds = load("digits", seed=config.data_seed, device=device)

    def feat(x: torch.Tensor) -> torch.Tensor:
        x = x.reshape(x.shape[0], -1).float()
        return torch.cat([x, torch.ones(x.shape[0], 1, device=x.device)], 1) / math.sqrt(65.0)

    x, y = feat(ds.x_train), ds.y_train
    n = x.shape[0]
    forget = np.sort(np.random.default_rng(config.data_seed).choice(n, size=config.m, replace=False))
    keep = np.setdiff1d(np.arange(n), forget)
    c = softmax_constants(n_classes=10, lam=config.lam, radius=config.radius, x_norm=1.0)
    return dict(x=x, y=y, x_test=feat(ds.x_test), y_test=ds.y_test, forget=torch.as_tensor(forget, device=x.device),
                keep=torch.as_tensor(keep, device=x.device), n=n, G=c.G, L=c.L, mu=c.mu, eta=1.0 / c.L)


def method_sigmas(config: DigitsForgetConfig, n: int) -> dict[str, float]:
    """Per-coordinate noise std of each method for its sound ``(epsilon, delta)`` certificate (0: no noise)."""
    c = softmax_constants(n_classes=10, lam=config.lam, radius=config.radius, x_norm=1.0)
    eta, e, d = 1.0 / c.L, config.epsilon, config.delta
    r2d = gd_r2d_sensitivity("strongly_convex", G=c.G, L=c.L, mu=c.mu, eta=eta, T=config.T, K=config.K,
                             m=config.m, n=n)
    d2d = gd_d2d_sensitivity(G=c.G, L=c.L, mu=c.mu, eta=eta, radius=config.radius, T=config.T, I=config.I,
                             m=config.m, n=n)
    det = dict(kind="deterministic", mode="sound", radius=config.radius)
    return dict(retrain=0.0, finetune=0.0, output_perturbation=op_sigma(e, d, C0=config.C0, mode="sound"),
                noisy_finetune=gc_sigma(e, d, C0=config.C0, C1=config.C1, gamma=eta, lam=config.lam,
                                        T=config.nft_steps, mode="sound"),
                r2d=descend_rewind_sigma(r2d, e, d, **det), d2d=descend_rewind_sigma(d2d, e, d, **det))


def _normal(seeds: Sequence[int], stream: int, shape: tuple[int, ...], device) -> torch.Tensor:
    """``(B, *shape)`` standard normals, row ``b`` from its own generator (seed, stream): batch-independent."""
    out = []
    for s in seeds:
        g = torch.Generator(device="cpu").manual_seed(int(s) * 1009 + stream)
        out.append(torch.randn(shape, generator=g, device="cpu"))
    return torch.stack(out).to(device)


def _clip(w: torch.Tensor, c: float) -> torch.Tensor:
    """Scale each model of the batch into the Frobenius ball of radius ``c`` (projection)."""
    norm = w.flatten(1).norm(dim=1).clamp_min(1e-30).reshape(-1, 1, 1)
    return w * torch.clamp(c / norm, max=1.0)


def _loss_grad(w: torch.Tensor, x: torch.Tensor, y1: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy gradient of every model at once: ``X^T (softmax(X W) - Y) / n``, ``(B, 65, 10)``."""
    # one (n, 65) x (65, B*10) GEMM instead of a broadcast batch of B small ones (which copies X B times)
    B = w.shape[0]
    z = (x @ w.permute(1, 0, 2).reshape(x.shape[1], B * 10)).reshape(x.shape[0], B, 10)
    e = torch.exp(z - z.amax(-1, keepdim=True))  # a hand softmax: torch.softmax over 10 columns is 5x slower on CPU
    r = (e / e.sum(-1, keepdim=True) - y1.unsqueeze(1)).reshape(x.shape[0], B * 10)
    return (x.T @ r).reshape(x.shape[1], B, 10).permute(1, 0, 2) / x.shape[0]


def _gd(w: torch.Tensor, x, y1, steps: int, eta: float, lam: float, radius: float,
        keep_at: int | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Projected full-batch GD on ``lam/2 ||W||^2 + mean CE``; also returns the iterate after ``keep_at`` steps."""
    kept = w if keep_at == 0 else None
    for t in range(steps):
        w = _clip(w - eta * (_loss_grad(w, x, y1) + lam * w), radius)
        if keep_at is not None and t + 1 == keep_at:
            kept = w
    return w, kept


def _margins(w: torch.Tensor, x: torch.Tensor, y: torch.Tensor) -> np.ndarray:
    """``(B, m)``: true-class logit minus the log-sum-exp of the other logits, per model and example."""
    z = torch.matmul(x, w).double()
    true = z.gather(-1, y.reshape(1, -1, 1).expand(z.shape[0], -1, 1)).squeeze(-1)
    other = z.scatter(-1, y.reshape(1, -1, 1).expand(z.shape[0], -1, 1), -math.inf).logsumexp(-1)
    return (true - other).cpu().numpy()


def _noisy_finetune(w: torch.Tensor, xk, yk, z: torch.Tensor, config: DigitsForgetConfig, eta: float) -> torch.Tensor:
    """Gradient clipping (Koloskova et al. eq. 3) from ``clip(w, C0)``, ``z`` the ``(B, steps, 65, 10)`` noise."""
    w = _clip(w, config.C0)
    for t in range(config.nft_steps):
        g = _loss_grad(w, xk, yk)
        g = g * torch.clamp(config.C1 / g.flatten(1).norm(dim=1).clamp_min(1e-30), max=1.0).reshape(-1, 1, 1)
        w = w - eta * (g + config.lam * w) + z[:, t]
    return w


def _certifier_reference(name: str, ref: torch.Tensor, seeds: Sequence[int], config: DigitsForgetConfig,
                         p: dict[str, Any], sigma: float) -> torch.Tensor:
    """What the method's certificate says its output is close to, from retrained models ``ref`` and fresh noise:
    the same mechanism applied to retraining (noise-free methods: ``ref`` itself)."""
    if sigma == 0:
        return ref
    if name == "noisy_finetune":
        y1 = torch.nn.functional.one_hot(p["y"], 10).float()
        z = _normal(seeds, 8, (config.nft_steps, 65, 10), ref.device) * sigma
        return _noisy_finetune(ref, p["x"][p["keep"]], y1[p["keep"]], z, config, p["eta"])
    base = _clip(ref, config.C0) if name == "output_perturbation" else ref
    return base + sigma * _normal(seeds, 7, (65, 10), ref.device)


def run_batch(seeds: Sequence[int], config: DigitsForgetConfig, problem: dict[str, Any] | None = None,
              methods: Sequence[str] = DIGITS_FORGET_METHODS) -> dict[str, torch.Tensor]:
    """The released ``(B, 65, 10)`` parameters of every method (and ``retrained``: retraining on the retained
    data from the ``retrain_init`` stream), one model per seed, all trained at once."""
    p = problem or digits_problem(config)
    x, y, keep, dev = p["x"], p["y"], p["keep"], p["x"].device
    y1 = torch.nn.functional.one_hot(y, 10).float()
    xk, yk = x[keep], y1[keep]
    eta, lam, R, shape = p["eta"], config.lam, config.radius, (65, 10)
    sig = method_sigmas(config, p["n"])
    scale = config.init_norm / math.sqrt(650)  # entries N(0, scale^2): ||W_0|| about init_norm

    def init(stream: int) -> torch.Tensor:
        return _clip(_normal(seeds, stream, shape, dev) * scale, R)

    out = {"retrained": _gd(init(_STREAMS["retrain_init"]), xk, yk, config.T, eta, lam, R)[0]}
    if "retrain" in methods:
        out["retrain"] = out["retrained"]
    if set(methods) <= {"retrain"}:
        return out
    w_T, w_mid = _gd(init(_STREAMS["init"]), x, y1, config.T, eta, lam, R, keep_at=config.T - config.K)
    noise = lambda name, *extra: _normal(seeds, _STREAMS[name], (*extra, *shape), dev) * sig[name]  # noqa: E731
    for name in methods:
        if name == "retrain":
            continue
        elif name == "finetune":
            out[name] = _gd(w_T, xk, yk, config.K, eta, lam, R)[0]
        elif name == "output_perturbation":
            out[name] = _clip(w_T, config.C0) + noise(name)
        elif name == "r2d":
            out[name] = _gd(w_mid, xk, yk, config.K, eta, lam, R)[0] + noise(name)
        elif name == "d2d":
            out[name] = _gd(w_T, xk, yk, config.I, eta, lam, R)[0] + noise(name)
        elif name == "noisy_finetune":
            out[name] = _noisy_finetune(w_T, xk, yk, noise(name, config.nft_steps), config, eta)
        else:
            raise ValueError(f"method={name!r} is not one of {DIGITS_FORGET_METHODS}")
    return out


def digits_forgetting_scores(*, n_models: int = 256, n_repeats: int = 4, seed: int = 0,
                             config: DigitsForgetConfig | None = None,
                             methods: Sequence[str] = DIGITS_FORGET_METHODS, device=None) -> list[dict[str, Any]]:
    """One row per method: ``certified_epsilon`` (inf without a certificate), ``sigma``, ``score`` with
    ``ci_low``/``ci_high`` against plain retraining, ``score_vs_certifier`` with its interval, the mean
    per-example epsilon of each, the released models' mean test accuracy, and ``seconds`` (whole run)."""
    config = config or DigitsForgetConfig()
    n_models = check_int("n_models", n_models, low=4, high=MAX_TRIALS)
    n_repeats = check_int("n_repeats", n_repeats, low=2, high=MAX_REPEATS)
    p = digits_problem(config, device=device)
    sig = method_sigmas(config, p["n"])
    xf, yf = p["x"][p["forget"]], p["y"][p["forget"]]
    acc: dict[str, list] = {k: [] for k in methods}
    stats: dict[str, dict[str, list]] = {k: dict(s=[], e=[], sc=[], ec=[]) for k in methods}
    t0 = time.perf_counter()
    for rep in range(n_repeats):
        base = seed * 10_000_019 + rep * 3 * n_models
        with torch.no_grad():
            unl = run_batch(range(base, base + n_models), config, p, methods)
            # an independent batch of retrained models (other seeds): the reference
            ref = run_batch(range(base + n_models, base + 2 * n_models), config, p, ("retrain",))["retrained"]
        r_marg = _margins(ref, xf, yf)
        for name in methods:
            u = _margins(unl[name], xf, yf)
            fs = forgetting_score(u, r_marg)
            # the certificate's counterfactual: the same mechanism run on retraining (fresh noise, other seeds)
            cref = _certifier_reference(name, ref, range(base + 2 * n_models, base + 3 * n_models), config, p,
                                        sig[name])
            fc = forgetting_score(u, _margins(cref, xf, yf)) if cref is not ref else fs
            st = stats[name]
            st["s"].append(fs["score"]), st["e"].append(fs["example_epsilons"].mean())
            st["sc"].append(fc["score"]), st["ec"].append(fc["example_epsilons"].mean())
            acc[name].append(float((torch.matmul(p["x_test"], unl[name]).argmax(-1) == p["y_test"]).float().mean()))
    seconds = time.perf_counter() - t0
    rows = []
    for name in methods:
        st = stats[name]
        mean, lo, hi = score_interval(st["s"])
        mc, lc, hc = score_interval(st["sc"])
        certified = name != "finetune"
        rows.append(dict(kind="forgetting_digits", method=name, mode="sound" if certified else "none",
                         certificate_mode="sound" if certified else "none",
                         certified_epsilon=(0.0 if name == "retrain" else config.epsilon) if certified else math.inf,
                         certified_delta=config.delta if certified else None, sigma=sig[name], score=mean,
                         ci_low=lo, ci_high=hi, mean_example_epsilon=float(np.mean(st["e"])),
                         score_vs_certifier=mc, ci_low_vs_certifier=lc, ci_high_vs_certifier=hc,
                         mean_example_epsilon_vs_certifier=float(np.mean(st["ec"])),
                         test_accuracy=float(np.mean(acc[name])), n_models=n_models, n_repeats=n_repeats,
                         m=config.m, seconds=seconds, config=asdict(config)))
    return rows


def digits_epsilon_sweep(epsilons: Sequence[float], *, method: str = "r2d", n_models: int = 256,
                         n_repeats: int = 4, seed: int = 0, config: DigitsForgetConfig | None = None,
                         device=None) -> list[dict[str, Any]]:
    """:func:`digits_forgetting_scores` of one certified ``method`` at each certified ``epsilon`` (the score
    against the certificate: where, if anywhere, a sound certificate's noise falls below retraining's spread)."""

    if method not in DIGITS_FORGET_METHODS or method in ("retrain", "finetune"):
        raise ValueError(f"method={method!r} is out of range: expected a noise-certified method, one of "
                         f"{DIGITS_FORGET_METHODS[1:5]}")
    base = config or DigitsForgetConfig()
    return [digits_forgetting_scores(n_models=n_models, n_repeats=n_repeats, seed=seed, methods=(method,),
                                     config=replace(base, epsilon=float(e)), device=device)[0] for e in epsilons]


def digits_forgetting_bench_rows(*, quick: bool = False) -> list[dict[str, Any]]:
    """:func:`digits_forgetting_scores` at 256 models per side and 4 repetitions (quick: 32 models, 2)."""
    return digits_forgetting_scores(n_models=32 if quick else 256, n_repeats=2 if quick else 4)
