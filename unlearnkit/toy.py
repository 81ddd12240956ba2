"""Two-dimensional toy problems with known constants, for watching D2D and R2D (notebook 03).

Each problem is a small dataset of 2-D points and a per-sample loss whose constants (G, L, mu, F0) are known
in closed form on the ball of radius ``radius`` (digest 003 P5), one per regime of "Descend or Rewind?":

- ``"strongly_convex"``: ridge-logistic loss ``log(1 + exp(-s <w, x>)) + lam/2 ||w||^2`` (contracting);
- ``"convex"``: the same logistic loss without the ridge term: the worst-case contraction factor is 1
  (semi-contracting), so the bound on the distance to retraining only shrinks linearly in K;
- ``"nonconvex"``: Gaussian wells ``1 - exp(-||w - x||^2 / (2 s^2))`` around every data point: the empirical
  loss has one basin per cluster, and deleting a cluster changes which basin SGD falls into (expansive).

Everything is NumPy and vectorised over a leading batch of parameter vectors, so a hundred coupled
simulations of a thousand steps take well under a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._validate import check_choice, check_int, check_positive
from .constants import Constants


TOY_REGIMES = ("strongly_convex", "convex", "nonconvex")


@dataclass(frozen=True)
class ToyProblem:
    """A 2-D dataset with a per-sample loss, its gradient and its constants.

    Attributes
    ----------
    regime:
        One of :data:`TOY_REGIMES`.
    X:
        Points ``(n, 2)``.
    s:
        Labels in {-1, +1} (strongly convex, convex) or unused zeros (nonconvex).
    forget:
        Indices of the forget set ``U`` (a cluster, so that forgetting visibly moves the optimum).
    w0:
        The shared, data-independent starting point.
    """

    regime: str
    X: np.ndarray
    s: np.ndarray
    forget: np.ndarray
    w0: np.ndarray
    lam: float
    width: float
    radius: float

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def retain(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.n), self.forget)

    def sample_losses(self, W: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Per-sample losses ``(..., k)`` at parameters ``W`` ``(..., 2)`` for samples ``idx``."""
        X = self.X if idx is None else self.X[idx]
        s = self.s if idx is None else self.s[idx]
        W = np.asarray(W, dtype=float)
        if self.regime == "nonconvex":
            d2 = ((W[..., None, :] - X) ** 2).sum(-1)
            return 1.0 - np.exp(-d2 / (2 * self.width**2))
        z = (W[..., None, :] * X).sum(-1)
        return np.logaddexp(0.0, -s * z) + 0.5 * self.lam * (W**2).sum(-1)[..., None]

    def loss(self, W: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
        """Empirical loss over ``idx`` (all samples when ``None``) at ``W`` of shape ``(..., 2)``."""
        return self.sample_losses(W, idx).mean(-1)

    def grad(self, W: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Minibatch gradients: ``W`` is ``(N, 2)``, ``idx`` is ``(N, b)`` sample indices -> ``(N, 2)``."""
        X = self.X[idx]  # (N, b, 2)
        s = self.s[idx]
        Wb = W[:, None, :]
        if self.regime == "nonconvex":
            diff = Wb - X
            e = np.exp(-(diff**2).sum(-1) / (2 * self.width**2))
            return (e[..., None] * diff).mean(1) / self.width**2
        z = (Wb * X).sum(-1)
        sig = 0.5 * (1.0 - np.tanh(0.5 * s * z))  # sigmoid(-s z), overflow-free
        return (-(s * sig)[..., None] * X).mean(1) + self.lam * W

    def constants(self) -> Constants:
        """Analytic constants on the ball of radius ``radius`` (data-independent bounds on ||x|| <= 1)."""
        R = self.radius
        if self.regime == "strongly_convex":
            w0n = float(np.linalg.norm(self.w0))
            return Constants(G=1.0 + self.lam * R, L=0.25 + self.lam, mu=self.lam,
                             F0=math.log1p(math.exp(w0n)) + 0.5 * self.lam * w0n**2, radius=R,
                             regime="strongly_convex", source="toy ridge-logistic, ||x|| <= 1")
        if self.regime == "convex":
            return Constants(G=1.0, L=0.25, mu=0.0, F0=math.log1p(math.exp(float(np.linalg.norm(self.w0)))),
                             radius=R, regime="convex", source="toy logistic, ||x|| <= 1")
        h = self.width
        return Constants(G=math.exp(-0.5) / h, L=1.0 / h**2, mu=0.0, F0=1.0, radius=R, regime="nonconvex",
                         source=f"toy Gaussian wells, width {h:g}")


def make_toy(regime: str, *, n: int = 60, m: int = 12, seed: int = 0, lam: float = 0.1, width: float = 0.6,
             radius: float = 3.0) -> ToyProblem:
    """Build the toy problem of ``regime`` with ``n`` points, the last cluster of ``m`` being the forget set."""
    check_choice("regime", regime, TOY_REGIMES)
    check_int("n", n, low=4)
    check_int("m", m, low=1, high=n - 2)
    check_positive("lam", lam)
    check_positive("width", width)
    check_positive("radius", radius)
    rng = np.random.default_rng(seed)
    k = n - m
    if regime == "nonconvex":
        # two retained clusters and the forget cluster sitting between them, closer to the start
        a = rng.normal([-1.2, 0.8], 0.25, size=(k // 2, 2))
        b = rng.normal([1.3, 0.9], 0.25, size=(k - k // 2, 2))
        u = rng.normal([0.2, -0.6], 0.2, size=(m, 2))
        X = np.vstack([a, b, u])
        s = np.zeros(n)
        w0 = np.array([0.3, -1.6])
    else:
        # unit-ball features; the forget cluster carries flipped-looking labels, pulling the optimum sideways
        ang = rng.uniform(-0.6, 0.6, size=k) + np.pi / 4
        r = rng.uniform(0.3, 1.0, size=k)
        Xr = np.stack([r * np.cos(ang), r * np.sin(ang)], 1)
        sr = np.where(rng.uniform(size=k) < 0.85, 1.0, -1.0)
        angu = rng.normal(np.pi / 4 + 1.2, 0.15, size=m)
        ru = rng.uniform(0.6, 1.0, size=m)
        Xu = np.stack([ru * np.cos(angu), ru * np.sin(angu)], 1)
        X, s = np.vstack([Xr, Xu]), np.concatenate([sr, -np.ones(m)])
        w0 = np.array([-1.5, 1.5])
    return ToyProblem(regime=regime, X=X, s=s, forget=np.arange(k, n), w0=w0,
                      lam=lam if regime == "strongly_convex" else 0.0, width=width, radius=radius)
