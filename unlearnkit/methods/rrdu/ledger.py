"""The sound per-observer ledger of one realised RR-DU walk (beyond what the paper proves).

:class:`~.certify.ObserverLedger` charges only the per-visit gradient part (accountants B/C): it ignores the
start-model gap and is a diagnostic. :class:`SoundObserverLedger` is its sound counterpart, for RR-DU run from a
start trained by :class:`~.noisy.NoisyWalkTraining` (accountants ``"S"``/``"M"``).

Argument and threat model
-------------------------
- **Observer** ``v != u`` sees the models it receives after the request (``"own_visits"``); the row
  ``every_model`` is the observer of every model, the final one included (what a published final model gives
  everybody). Everything ``v`` receives is a post-processing of the training's release at ``u`` and of the noisy
  u-steps made *before* ``v``'s last receipt of the token, so only those are charged to ``v``.
- **Route.** The route is drawn independently of the data with the same law in both worlds (RR-DU's complete-graph
  routing). Conditional on the realised route, the view is an adaptive composition of plain Gaussians: the
  training's steps at ``u`` (``mu_train^2 = 2 train_rho``, :func:`.sound.noisy_walk_rho`) and ``k_v`` u-steps of
  sensitivity ``Delta`` (:func:`.sound.rrdu_u_sensitivity`) and noise ``sigma``. Its exact privacy curve is
  ``mu_v``-GDP with ``mu_v^2 = 2 train_rho + k_v (Delta/sigma)^2`` (Dong, Roth & Su 2022, Cor. 3.3), read at
  ``delta`` by :func:`unlearnkit.privacy.gaussian_composition_epsilon`. A bound that holds for every route holds
  for the joint output (route, view). This is the realised-route reading; accountant ``"M"``
  (:mod:`.mixture`) is the a-priori one, averaged over the route.
- **Not covered.** A noise-free start (``train_rho=None``): the ledger then has no certificate (``inf``), since
  the start gap is not covered; a route chosen from the data.

Pure maths: numpy and :mod:`unlearnkit.privacy`.
"""

from __future__ import annotations

import math
from typing import Optional, Sequence

import numpy as np

from ..._validate import check_int, check_positive, check_range
from ...privacy import gaussian_composition_epsilon


class SoundObserverLedger:
    """Per-observer sound epsilons of one realised RR-DU path (module docstring).

    Parameters
    ----------
    path:
        The client of every unlearning hop (the realised route).
    n_clients, u:
        Number of clients and the unlearning client.
    sigma:
        Noise std of the u-steps' gradient (0 with ``sensitivity = 0``: the exact variant).
    sensitivity:
        Sensitivity of one u-step against the certifier (:func:`.sound.rrdu_u_sensitivity`).
    train_rho:
        RDP slope of the noisy training at ``u`` (:func:`.noisy.training_rho`); ``None``: a noise-free start,
        no certificate.
    """

    def __init__(self, path: Sequence[int], *, n_clients: int, u: int, sigma: float, sensitivity: float,
                 train_rho: Optional[float]) -> None:
        self.n_clients = check_int("n_clients", n_clients, low=2)
        self.u = check_int("u", u, low=0, high=n_clients - 1)
        self.sigma = check_positive("sigma", sigma, allow_zero=True)
        self.sensitivity = check_positive("sensitivity", sensitivity, allow_zero=True)
        self.train_rho = None if train_rho is None else check_positive("train_rho", train_rho, allow_zero=True)
        path = np.asarray(path, dtype=np.int64).reshape(-1)
        if path.size and (path.min() < 0 or path.max() >= n_clients):
            raise ValueError(f"path holds clients outside [0, {n_clients - 1}]")
        # k_v: noisy u-visits before v's last receipt of the token (what reaches v's view)
        seen = np.zeros(n_clients, dtype=np.int64)
        visits = 0
        for node in path:
            if node == self.u:
                visits += 1
            else:
                seen[node] = visits
        self.visits_seen = seen
        self.visits_seen[self.u] = 0
        self.total_visits = visits

    def mu(self, k: int) -> float:
        """``mu`` of an observer that saw ``k`` noisy u-visits (``inf`` without a noisy start)."""
        if self.train_rho is None:
            return math.inf
        step = 0.0 if self.sensitivity == 0 or k == 0 else (
            math.inf if self.sigma == 0 else self.sensitivity / self.sigma)
        return math.sqrt(2 * self.train_rho + k * step**2)

    def epsilons(self, delta: float) -> np.ndarray:
        """Per-client epsilon at ``delta`` (``nan`` at ``u``, who is not an adversary)."""
        check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        out = np.array([gaussian_composition_epsilon([self.mu(int(k))], delta) for k in self.visits_seen])
        out[self.u] = np.nan
        return out

    def every_model_epsilon(self, delta: float) -> float:
        """Epsilon of the observer of every model (all ``total_visits``), e.g. once the final model is published."""
        check_range("delta", delta, 0.0, 1.0, low_open=True, high_open=True)
        return gaussian_composition_epsilon([self.mu(self.total_visits)], delta)
