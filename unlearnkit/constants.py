"""Lipschitz, smoothness and strong-convexity constants that certified unlearning bounds need.

The convex theory of "Descend or Rewind?" (Mu & Klabjan 2025, digest 003, Assumptions 4.1-4.3 and the
bounded-gradient assumption of Theorem 4.5) and of Descent-to-Delete (Neel et al. 2021) calibrates noise
from three numbers:

- ``G`` a bound on every per-sample gradient norm over the parameter set (the D2D code calls it the
  "Lipschitz constant" M),
- ``L`` the per-sample smoothness constant (D2D: beta),
- ``mu`` the strong-convexity constant,

and, for the unprojected derived bounds, ``F0`` a bound on every per-sample loss at the initial point.
``F0`` is a bound *at a set of initial points*: ``{||w0|| <= init_norm}`` (``init_norm=0``: only at ``w0 = 0``),
so a certificate must check that training actually started there (``Constants.init_norm``). The constants
also record the L2 weight they include (``Constants.weight_decay``): ``G``, ``L`` and ``mu`` of a regularised
loss are only those of the training objective when the training adds exactly that weight.

A certificate is only valid when these constants do **not** depend on the data values (digest 003, P5:
"Delta must not encode data"). For logistic regression on features in the unit ball they are known in closed
form (:func:`logistic_constants`); for neural networks they are not, and :func:`estimate_constants` probes
them on the data, which makes every certificate built on them **"constants estimated from data: not
certified"** (``Constants.certified = False``; methods then return ``mode="none"``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import torch

from ._validate import check_choice, check_int, check_positive


NOT_CERTIFIED_NOTE = "constants estimated from data: not certified"


@dataclass(frozen=True, kw_only=True)
class Constants:
    """Constants of a per-sample loss ``f(w; z)`` on the parameter set ``{||w|| <= radius}``.

    Attributes
    ----------
    G:
        Bound on ``||grad f(w; z)||`` for every ``w`` in the set and every sample ``z``.
    L:
        Per-sample smoothness: ``||grad f(w; z) - grad f(v; z)|| <= L ||w - v||``.
    mu:
        Per-sample strong convexity (0 when merely convex, ``nan``-free: nonconvex losses use 0 too and
        ``regime="nonconvex"``).
    F0:
        Bound on the per-sample loss ``f(w0; z)`` (the regulariser included) for every sample ``z`` and every
        initial point with ``||w0|| <= init_norm`` (``ln 2`` for logistic loss at ``w0 = 0``).
    init_norm:
        Largest initial-point norm at which ``F0`` holds (default 0: ``F0`` is the value at ``w0 = 0``).
        Certificates whose bound uses ``F0`` are not certified when training starts outside this ball.
    weight_decay:
        The L2 weight ``lambda`` (loss ``+ lambda/2 ||w||^2``) that ``G``, ``L``, ``mu`` and ``F0`` include;
        a certificate needs the training's ``weight_decay`` to equal it. ``None``: not recorded, taken to be
        ``mu`` (the strong convexity of an L2-regularised convex loss is its weight).
    radius:
        Radius of the projection ball the bounds hold on (``inf``: unprojected; then ``G`` may be ``inf``).
    regime:
        ``"strongly_convex"``, ``"convex"`` or ``"nonconvex"``.
    certified:
        ``True`` only for analytic constants that do not look at the data values.
    source:
        Where the numbers come from (a formula or "estimated").
    """

    G: float
    L: float
    mu: float = 0.0
    F0: float = math.log(2.0)
    radius: float = math.inf
    regime: str = "convex"
    certified: bool = True
    source: str = ""
    init_norm: float = 0.0
    weight_decay: float | None = None
    extras: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        check_positive("G", self.G) if math.isfinite(self.G) else None
        check_positive("L", self.L)
        check_positive("mu", self.mu, allow_zero=True)
        check_positive("F0", self.F0, allow_zero=True)
        if not (self.radius > 0):
            raise ValueError(f"radius={self.radius!r} is out of range: expected radius in (0, inf]")
        check_choice("regime", self.regime, ("strongly_convex", "convex", "nonconvex"))
        if self.regime == "strongly_convex" and self.mu <= 0:
            raise ValueError(f"mu={self.mu!r} must be > 0 for regime='strongly_convex'")
        if self.mu > self.L:
            raise ValueError(f"mu={self.mu!r} exceeds L={self.L!r}: a mu-strongly convex L-smooth loss has mu <= L")
        check_positive("init_norm", self.init_norm, allow_zero=True)
        if self.weight_decay is not None:
            check_positive("weight_decay", self.weight_decay, allow_zero=True)

    @property
    def assumed_weight_decay(self) -> float:
        """The L2 weight the training must add for these constants to hold (``weight_decay``, else ``mu``)."""
        return self.mu if self.weight_decay is None else self.weight_decay

    def as_dict(self) -> dict[str, float]:
        return {"G": self.G, "L": self.L, "mu": self.mu, "F0": self.F0, "R": self.radius,
                "init_norm": self.init_norm, "weight_decay": self.assumed_weight_decay}


def _feature_norm(x_norm: float, bias: bool) -> float:
    # an intercept is a constant feature 1, so the augmented feature vector has norm sqrt(||x||^2 + 1)
    return math.sqrt(x_norm**2 + 1.0) if bias else x_norm


def logistic_constants(*, lam: float = 0.0, radius: float = math.inf, x_norm: float = 1.0,
                       bias: bool = False, init_norm: float = 0.0) -> Constants:
    """Binary logistic loss ``log(1 + exp(-s <w, x>)) + lam/2 ||w||^2`` with ``||x|| <= x_norm``.

    Analytic (certified) constants, digest 003 P5:

    - gradient ``-s sigmoid(-s<w,x>) x + lam w`` has norm ``<= x_norm + lam * radius`` (``G``),
    - Hessian ``sigmoid'(.) x x^T + lam I`` with ``sigmoid' <= 1/4`` gives ``L = x_norm^2 / 4 + lam``,
    - ``mu = lam`` (strongly convex when ``lam > 0``, convex otherwise),
    - ``F0 = ln 2`` at ``w0 = 0`` (plus nothing from the regulariser there); for any ``||w0|| <= init_norm = r``,
      ``f(w0; z) <= ln(1 + exp(a r)) + lam r^2 / 2`` (``|<w0, x>| <= a r``), which is the ``F0`` returned.

    With ``bias=True`` the intercept is treated as a feature of value 1 (it is regularised like the weights,
    as unlearnkit's ``FlatParams.loss`` does).
    """
    check_positive("lam", lam, allow_zero=True)
    check_positive("x_norm", x_norm)
    if not (radius > 0):
        raise ValueError(f"radius={radius!r} is out of range: expected radius in (0, inf]")
    check_positive("init_norm", init_norm, allow_zero=True)
    a = _feature_norm(x_norm, bias)
    G = a + lam * radius
    F0 = math.log1p(math.exp(a * init_norm)) + 0.5 * lam * init_norm**2 if init_norm else math.log(2.0)
    return Constants(G=G, L=a * a / 4.0 + lam, mu=lam, F0=F0, radius=radius,
                     regime="strongly_convex" if lam > 0 else "convex", init_norm=init_norm, weight_decay=lam,
                     source="analytic: binary logistic loss, ||x|| <= %g%s" % (x_norm, " (+bias)" if bias else ""))


def softmax_constants(*, n_classes: int, lam: float = 0.0, radius: float = math.inf, x_norm: float = 1.0,
                      bias: bool = False, init_norm: float = 0.0) -> Constants:
    """Multinomial logistic (softmax cross-entropy) regression, ``W`` of shape ``(k, d)``.

    The gradient is ``(p - e_y) x^T`` with ``||p - e_y|| <= sqrt(2)``, so ``G = sqrt(2) x_norm + lam R``;
    the Hessian is ``(diag p - p p^T) (x) x x^T`` whose largest eigenvalue is at most ``1/2`` times
    ``||x||^2`` (the softmax Jacobian's spectral norm is below 1/2), so ``L = x_norm^2 / 2 + lam``.
    ``F0 = ln k`` at ``W = 0``; for ``||W||_F <= init_norm = r``, ``-log p_y <= ln k + max_j (W_j - W_y) x
    <= ln k + sqrt(2) a r``, plus ``lam r^2 / 2``.
    """
    check_int("n_classes", n_classes, low=2)
    check_positive("lam", lam, allow_zero=True)
    check_positive("x_norm", x_norm)
    check_positive("init_norm", init_norm, allow_zero=True)
    a = _feature_norm(x_norm, bias)
    F0 = math.log(n_classes) + math.sqrt(2.0) * a * init_norm + 0.5 * lam * init_norm**2
    return Constants(G=math.sqrt(2.0) * a + lam * radius, L=a * a / 2.0 + lam, mu=lam, F0=F0,
                     radius=radius, regime="strongly_convex" if lam > 0 else "convex", init_norm=init_norm,
                     weight_decay=lam,
                     source=f"analytic: softmax cross-entropy, {n_classes} classes, ||x|| <= {x_norm:g}")


def sigmoid_loss_constants(*, x_norm: float = 1.0, lam_nc: float = 0.0, radius: float = math.inf) -> Constants:
    """The nonconvex sigmoid loss ``1 / (1 + exp(s <w, x>))`` (digest 003 P5).

    ``|sigmoid'| <= 1/4`` gives ``G = x_norm / 4``; ``|sigmoid''| <= 1/(6 sqrt 3)`` gives
    ``L = x_norm^2 / (6 sqrt 3)``. The optional nonconvex regulariser ``lam_nc sum_i w_i^2 / (1 + w_i^2)``
    adds ``2 lam_nc`` to ``L`` (its second derivative is at most 2 in absolute value) and ``2 lam_nc * radius``
    to ``G`` (its gradient ``2 w_i / (1 + w_i^2)^2`` is at most ``2|w_i|`` coordinate-wise). ``F0 = 1/2`` at
    ``w0 = 0``.
    """
    check_positive("x_norm", x_norm)
    check_positive("lam_nc", lam_nc, allow_zero=True)
    G = x_norm / 4.0 + (2.0 * lam_nc * radius if lam_nc else 0.0)
    return Constants(G=G, L=x_norm**2 / (6.0 * math.sqrt(3.0)) + 2.0 * lam_nc, mu=0.0, F0=0.5, radius=radius,
                     regime="nonconvex", weight_decay=0.0, source="analytic: sigmoid loss")


def estimate_constants(flat: Any, x: torch.Tensor, y: torch.Tensor, *, radius: float, weight_decay: float = 0.0,
                       n_points: int = 16, n_samples: int = 128, probe: float = 1e-2,
                       generator: torch.Generator, center: torch.Tensor | None = None) -> Constants:
    """Probe ``G`` and ``L`` of a neural network's per-sample loss by sampling parameters in a ball.

    This is what the paper's experiments do (digest 003 Table 2 / B.2: "we estimate the constants by
    sampling uniformly from the parameter space with radius R"; the predecessor code uses finite differences
    with Gaussian perturbations of std 0.01). It looks at the data, so the resulting certificate is **not**
    a certificate: ``certified=False`` and methods built on it report ``mode="none"`` with the note
    ``"constants estimated from data: not certified"``. The estimates are lower bounds on the true sup.

    Parameters
    ----------
    flat:
        :class:`~unlearnkit.models.FlatParams`.
    x, y:
        Samples to probe (a subset of the training data).
    radius:
        Sample parameters uniformly from the ball of this radius around ``center`` (default 0).
    n_points:
        Number of parameter vectors sampled.
    n_samples:
        Number of data samples used at each point (first ``n_samples`` rows).
    probe:
        Standard deviation of the finite-difference perturbation for ``L``.
    """
    check_positive("radius", radius)
    check_int("n_points", n_points, low=1)
    check_int("n_samples", n_samples, low=1)
    check_positive("probe", probe)
    d = flat.d
    dev = x.device
    c = torch.zeros(d, device=dev) if center is None else center.to(dev)
    xs, ys = x[:n_samples], y[:n_samples]
    G = 0.0
    L = 0.0
    for _ in range(n_points):
        u = torch.randn(d, generator=generator, device=generator.device).to(dev)
        r = radius * float(torch.rand((), generator=generator, device=generator.device)) ** (1.0 / d)
        w = c + u / u.norm() * r
        g = flat.per_sample_grads(w, xs, ys) + weight_decay * w
        G = max(G, float(g.norm(dim=1).max()))
        v = torch.randn(d, generator=generator, device=generator.device).to(dev) * probe
        g2 = flat.per_sample_grads(w + v, xs, ys) + weight_decay * (w + v)
        L = max(L, float(((g2 - g).norm(dim=1) / v.norm()).max()))
    return Constants(G=max(G, 1e-12), L=max(L, weight_decay, 1e-12), mu=0.0, F0=math.log(2.0), radius=radius,
                     regime="nonconvex", certified=False, weight_decay=weight_decay, source=f"estimated ({n_points} points): {NOT_CERTIFIED_NOTE}")
