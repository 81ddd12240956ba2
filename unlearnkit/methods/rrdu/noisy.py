"""The sound DDP baseline: train the original model with the network-DP noise.

:class:`NoisyWalkTraining` trains on i.i.d. uniform clients (Algorithm 3's routing) with per-example clipping
at ``L``, fresh ``N(0, sigma^2 I)`` on *every* local step at every client and projection onto
``B(theta0, R)``; it records the noisy steps made at each client. :class:`NoisyDDP` is the unlearner:
deletion is post-processing of a private training, so it returns the trained model (``continue_hops = 0``) or
continues the same noisy walk on D minus D_f, and certifies with the training's own guarantee
(:func:`.sound.noisy_walk_certify`, threat model in :mod:`.sound`). The paper calibrations of
:class:`~.baselines.DDPWalk` (a noise-free original) stay as labelled paper modes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_epsilon, check_instance, check_int, check_positive, check_range
from ...core import Callback, Certificate, Cost, Plan, Request, Result, TrainedState
from ...core import MAX_STEPS, checked_unlearn
from ...decentral.token import TokenConfig, run_token
from ...graphs.walks import uniform_route
from .baselines import Monitor, hop_rows, monitored_default, repeat_route, route_rng
from .sound import noisy_walk_certify, noisy_walk_rho, noisy_walk_sigma


NOISY_TRAINING_KEY = "noisy_training"
"""``TrainedState.extras`` key of the noisy training's record (sigma, L, noisy steps per client, ...)."""


@dataclass(frozen=True, kw_only=True)
class NoisyWalkConfig:
    """A noisy token walk: ``hops`` i.i.d. uniform clients, ``local_steps`` noisy steps each.

    ``sigma`` is the gradient-noise std (``None``: :func:`.sound.noisy_walk_sigma` at ``(epsilon, delta)``);
    per-example gradients are clipped at ``L``; every step is projected onto ``B(theta0, R)``. ``token``
    gives the step size, batch size and ``s``; its optimizer must be ``"sgd"``.
    """

    token: TokenConfig
    hops: int = 100
    local_steps: int = 1
    epsilon: float = 1.0
    delta: float = 1e-5
    L: float = 1.0
    R: float = 10.0
    sigma: Optional[float] = None
    route_seed: Optional[int] = None
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_instance("token", self.token, TokenConfig)
        if self.route_seed is not None:
            check_int("route_seed", self.route_seed, low=0)
        check_int("hops", self.hops, low=1)
        check_int("local_steps", self.local_steps, low=1, high=MAX_STEPS)
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_positive("L", self.L)
        check_positive("R", self.R)
        if self.sigma is not None:
            check_positive("sigma", self.sigma)
        check_int("eval_every", self.eval_every, low=0)
        if self.token.optimizer != "sgd":
            raise ValueError(f"token.optimizer={self.token.optimizer!r} is not supported: expected 'sgd'")

    def resolved_sigma(self, n_clients: int) -> float:
        if self.sigma is not None:
            return float(self.sigma)
        return noisy_walk_sigma(epsilon=self.epsilon, delta=self.delta, L=self.L, hops=self.hops,
                                n_clients=n_clients, local_steps=self.local_steps)


def _noisy_walk(flat: Any, federation: Any, config: NoisyWalkConfig, sigma: float, *, generator: torch.Generator,
                init: Optional[Tensor], monitor: Monitor, callback: Optional[Callback], progress: bool
                ) -> tuple[TrainedState, np.ndarray]:
    route = uniform_route(federation.n_clients, config.hops, rng=route_rng(config, generator))
    token = dc_replace(config.token, noise_sigma=float(sigma), clip=float(config.L), radius=float(config.R),
                       center="init")
    steps = repeat_route(route, config.local_steps)
    out = run_token(flat, federation, steps, token, generator=generator, init=init, callback=callback,
                    hop_rule=monitored_default(monitor, config.eval_every, config.local_steps, len(steps)),
                    progress=progress)
    out.history = hop_rows(out.history, config.local_steps)
    return out, route


def _record(route: np.ndarray, config: NoisyWalkConfig, sigma: float, n_clients: int, init: Tensor) -> dict:
    visits = np.bincount(np.asarray(route, dtype=np.int64), minlength=n_clients)
    return {"sigma": sigma, "L": config.L, "R": config.R, "hops": config.hops, "local_steps": config.local_steps,
            "u_steps": (visits * config.local_steps).tolist(), "delta": config.delta, "init": init.detach().clone()}


class NoisyWalkTraining:
    """Trains the original model by the noisy walk (the DDP baseline's training, every step noisy).

    The state's ``extras["noisy_training"]`` records sigma, L, R, the noisy steps per client (``u_steps``) and
    the initialisation; :class:`NoisyDDP` and RR-DU's accountant ``"S"`` read it.
    """

    name = "noisy_walk_training"

    def train(self, flat: Any, federation: Any, config: NoisyWalkConfig, *, generator: torch.Generator,
              init: Optional[Tensor] = None, callback: Optional[Callback] = None, progress: bool = False,
              monitor: Monitor = None) -> TrainedState:
        init = flat.init() if init is None else init
        sigma = config.resolved_sigma(federation.n_clients)
        out, route = _noisy_walk(flat, federation, config, sigma, generator=generator, init=init, monitor=monitor,
                                 callback=callback, progress=progress)
        out.checkpoints[0] = init
        out.config = config
        out.extras[NOISY_TRAINING_KEY] = _record(route, config, sigma, federation.n_clients, init)
        return out


@dataclass(frozen=True, kw_only=True)
class NoisyDDPConfig:
    """Deletion after :class:`NoisyWalkTraining`: ``continue_hops`` more hops of the same noisy walk on
    D minus D_f (0: return the trained model unchanged); ``delta`` of the reported certificate (``None``: the
    training's)."""

    continue_hops: int = 0
    delta: Optional[float] = None

    def __post_init__(self) -> None:
        check_int("continue_hops", self.continue_hops, low=0)
        if self.delta is not None:
            check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)


def training_certificate(state: TrainedState, request: Request, delta: Optional[float] = None) -> Certificate:
    """The training's sound certificate for ``request`` (client-level at ``request.client``), or a
    ``mode="none"`` certificate saying why there is none.

    The client ``u`` is ``request.client`` or the one client holding all of ``request.indices``; the epsilon
    composes the noisy steps the training made at ``u`` (:func:`~.sound.noisy_walk_certify`). A state not
    trained by :class:`NoisyWalkTraining`, or a request spanning several clients, gets ``mode="none"``.

    Parameters
    ----------
    state : TrainedState
        From :class:`NoisyWalkTraining` (its ``extras["noisy_training"]`` record).
    request : Request
        Samples, a class or a whole client.
    delta : float, optional
        Delta of the certificate; ``None``: the training's (``1e-5`` when there is no record).

    Returns
    -------
    Certificate
        ``mode="sound"`` with the exact-GDP epsilon of the ``u_steps`` Gaussian steps at ``u`` (sensitivity
        ``2 L``), or ``mode="none"`` with ``epsilon = inf`` and a note.

    References
    ----------
    .. [1] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollary 3.3 (the
       exact composition of the Gaussian steps at ``u``).
    .. [2] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
       Algorithm 3 (the noisy walk) and Proposition C.1 (network DP implies certified unlearning).
    """
    rec = state.extras.get(NOISY_TRAINING_KEY)
    if rec is None:
        return Certificate(epsilon=math.inf, delta=delta or 1e-5, mode="none", mechanism="none",
                           note="the state was not trained by NoisyWalkTraining: no training guarantee to inherit")
    delta = rec["delta"] if delta is None else delta
    clients = [request.client] if request.client is not None else sorted(
        {state.federation.client_of(int(i)) for i in np.asarray(request.indices).reshape(-1)})
    if len(clients) != 1:
        return Certificate(epsilon=math.inf, delta=delta, sigma=rec["sigma"], mode="none",
                           note=f"the request spans clients {clients}: the client-level bound covers one client")
    u = int(clients[0])
    return noisy_walk_certify(sigma=rec["sigma"], L=rec["L"], u_steps=int(rec["u_steps"][u]), delta=delta,
                              hops=rec["hops"], local_steps=rec["local_steps"], n_clients=len(rec["u_steps"]))


def training_rho(state: TrainedState, u: int) -> Optional[float]:
    """RDP slope of the noisy training at client ``u`` (``None`` when the state was trained without noise).

    Parameters
    ----------
    state : TrainedState
        The trained state; only one from :class:`NoisyWalkTraining` carries the record.
    u : int
        The client.

    Returns
    -------
    float or None
        ``rho = u_steps (2 L)^2 / (2 sigma^2)`` of :func:`~.sound.noisy_walk_rho` (RDP ``alpha rho`` at every
        order ``alpha``) for the noisy steps the training made at ``u``; ``None`` without a record.

    References
    ----------
    .. [1] I. Mironov, "Renyi Differential Privacy", CSF 2017, Proposition 7 (Gaussian RDP alpha Delta^2/(2 sigma^2))
       and Proposition 1 (composition).
    """
    rec = state.extras.get(NOISY_TRAINING_KEY)
    if rec is None:
        return None
    return noisy_walk_rho(sigma=rec["sigma"], L=rec["L"], u_steps=int(rec["u_steps"][u]))


class NoisyDDP:
    """The sound DDP baseline's deletion: nothing to do beyond the private training (or continue it).

    ``state`` must come from :class:`NoisyWalkTraining`; the certificate is the training's guarantee for
    ``request`` (:func:`training_certificate`), which continuing the noisy walk on D minus D_f keeps
    (post-processing). Any other state gets a ``mode="none"`` certificate.

    Requests: samples, a class or a whole client: the training's guarantee is client-level, for any change of
    one client's data (a request spanning several clients gets ``mode="none"``).
    """

    name = "noisy_ddp"
    request_kinds = ("samples", "class", "client")

    def __init__(self, *, monitor: Monitor = None) -> None:
        self.monitor = monitor

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: NoisyDDPConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Keep the trained model with the training's certificate, or continue the noisy walk on D minus D_f
        for ``config.continue_hops`` hops.

        Parameters
        ----------
        state : TrainedState
            From :class:`NoisyWalkTraining` (any other state gets ``mode="none"``).
        request : Request
            What to forget.
        config : NoisyDDPConfig
            The run's settings.
        generator : torch.Generator
            Source of the run's randomness (noise, minibatches, routes).
        callback : Callback, optional
            Receives the run's events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The parameters, the training's certificate for ``request``, the history, the cost and
            ``extras["continued_hops"]``.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 3 and Appendix B.2 (the noisy walk) and Proposition C.1 (network DP implies certified unlearning).
        """
        cert = self.certify(state, request, config).certificate
        if config.continue_hops == 0:
            return Result(params=state.params, certificate=cert, history=[], cost=Cost(),
                          extras={"continued_hops": 0})
        train_cfg = state.config if isinstance(state.config, NoisyWalkConfig) else None
        if train_cfg is None:
            raise ValueError("continue_hops > 0 needs a state trained by NoisyWalkTraining (state.config)")
        fed = state.federation.without(request)
        cfg = dc_replace(train_cfg, hops=config.continue_hops, route_seed=None)
        rec = state.extras[NOISY_TRAINING_KEY]
        # the projection centre is the trained model, itself a released output: post-processing
        out, _ = _noisy_walk(state.flat, fed, cfg, rec["sigma"], generator=generator,
                             init=state.params, monitor=self.monitor, callback=callback, progress=progress)
        return Result(params=out.params, certificate=cert, history=out.history, cost=out.cost,
                      extras={"continued_hops": config.continue_hops, "sigma": rec["sigma"]})

    def certify(self, state: TrainedState, request: Request, config: NoisyDDPConfig) -> Plan:
        """The training's guarantee for ``request`` (:func:`training_certificate`), which continuing the noisy walk
        keeps (post-processing): no noise point of its own, the noise certified is the training's.

        Parameters
        ----------
        state : TrainedState
            From :class:`NoisyWalkTraining` (any other state gets ``mode="none"``).
        request : Request
            What to forget.
        config : NoisyDDPConfig
            The run's settings.

        Returns
        -------
        Plan
            The training's certificate for ``request`` and no noise point.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Proposition C.1 (network DP implies certified unlearning; continuing on D minus D_f is post-processing).
        """
        return Plan(training_certificate(state, request, config.delta))
