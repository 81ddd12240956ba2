"""Baselines of the RR-DU paper's section 6 on the token walk (Lamri & Maniatakos; digest 000 section 2.7).

All run on the substrate's :func:`~unlearnkit.decentral.run_token` with ``local_steps`` consecutive local
steps per hop (digest P2: one step per hop cannot train these models in 100 hops):

- :class:`NetworkSGD`: Algorithm 2 (Network-SGD) on the complete graph, which trains the original model;
- :class:`RetrainWalk`: the same walk on D minus D_f from the original's initialisation (the exact reference);
- :class:`FinetuneWalk`: the walk over all clients on D minus D_f from the original model (digest P18);
- :class:`DDPWalk`: the DDP/NetDP baseline (Algorithm 3, calibrations of :func:`.certify.ddp_sigma`);
- :class:`DPSGDWalk`: DP-SGD (Abadi et al. 2016) on the walk, from the original model.

The unlearners share the package's calling shape ``unlearn(state, request, config, *, generator,
callback=None, progress=False)`` (plus ``monitor(theta) -> dict``, evaluated every ``eval_every`` hops).
The route is drawn from ``numpy.random.default_rng(config.route_seed)``; with ``route_seed=None`` that seed
is taken from ``generator``.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace as dc_replace
from typing import Any, Callable, Optional

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_choice, check_epsilon, check_instance, check_int, check_positive, check_range
from ...core import Callback, Certificate, NoisePoint, Plan, Request, Result, TrainedState
from ...core import checked_unlearn
from ...decentral.token import TokenConfig, run_token
from ...graphs.topology import complete
from ...graphs.walks import simple_walk, uniform_route
from ...privacy import get_noise_multiplier
from .certify import DDP_CALIBRATIONS, ddp_certify, ddp_sigma


Monitor = Optional[Callable[[Tensor], dict]]

#: the plan of a walk that issues no certificate (epsilon = infinity)
_NO_CERTIFICATE = Certificate.none("no certificate is issued (epsilon = infinity)")


@dataclass(frozen=True, kw_only=True)
class WalkConfig:
    """A token walk of ``hops`` hops with ``local_steps`` default steps per hop.

    Attributes
    ----------
    token:
        The default step (:class:`~unlearnkit.decentral.TokenConfig`: lr, batch size, ``s``, optimizer).
    hops, local_steps:
        Hops of the walk and local steps per hop.
    eval_every:
        Evaluate the ``monitor`` every this many hops (0: only at the end).
    route_seed:
        Seed of the numpy generator that draws the route (``None``: drawn from the torch generator).
    """

    token: TokenConfig
    hops: int = 100
    local_steps: int = 1
    eval_every: int = 0
    route_seed: Optional[int] = None

    def __post_init__(self) -> None:
        check_instance("token", self.token, TokenConfig)
        check_int("hops", self.hops, low=1)
        check_int("local_steps", self.local_steps, low=1)
        check_int("eval_every", self.eval_every, low=0)
        if self.route_seed is not None:
            check_int("route_seed", self.route_seed, low=0)


@dataclass(frozen=True, kw_only=True)
class DDPWalkConfig(WalkConfig):
    """:class:`WalkConfig` plus the DDP/NetDP noise: ``sigma`` (``None``: :func:`.certify.ddp_sigma` with
    ``calibration`` at ``(epsilon, delta)``, ``m`` deletions (``None``: the request's size) and ``T = hops``),
    clipping at ``L`` and projection onto ``B(theta0, R)`` (paper Algorithm 3; digest 3.5, P6)."""

    epsilon: float = 1.0
    delta: float = 1e-5
    L: float = 1.0
    R: float = 10.0
    calibration: str = "alg3"
    sigma: Optional[float] = None
    m: Optional[int] = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_positive("L", self.L)
        check_positive("R", self.R)
        check_choice("calibration", self.calibration, DDP_CALIBRATIONS)
        if self.sigma is not None:
            check_positive("sigma", self.sigma)
        if self.m is not None:
            check_int("m", self.m, low=1)


@dataclass(frozen=True, kw_only=True)
class DPSGDWalkConfig(WalkConfig):
    """:class:`WalkConfig` plus DP-SGD's target ``(epsilon, delta)`` and clipping norm ``C``."""

    epsilon: float = 1.0
    delta: float = 1e-5
    C: float = 5.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_positive("C", self.C)


# ----------------------------------------------------------------------------------------------------------
# Shared walk mechanics
# ----------------------------------------------------------------------------------------------------------

def route_rng(config: WalkConfig, generator: torch.Generator) -> np.random.Generator:
    """The numpy generator that draws a walk's route: seeded by ``config.route_seed``, else by ``generator``.

    Parameters
    ----------
    config : WalkConfig
        Any config with a ``route_seed`` (``None``: take the seed from ``generator``).
    generator : torch.Generator
        Draws the seed (one ``randint`` below ``2**62``) when ``config.route_seed`` is ``None``.

    Returns
    -------
    numpy.random.Generator
        ``numpy.random.default_rng(seed)``.
    """
    seed = config.route_seed
    if seed is None:
        seed = int(torch.randint(2**62, (), generator=generator, device=generator.device).item())
    return np.random.default_rng(seed)


def repeat_route(route: np.ndarray, k: int) -> np.ndarray:
    """``k`` consecutive local steps per hop (digest P2): the token stays ``k`` steps at each client.

    Parameters
    ----------
    route : array of int
        The client of every hop.
    k : int
        Local steps per hop, ``>= 1``.

    Returns
    -------
    numpy.ndarray of int64
        The client of every local step, ``len(route) * k`` of them.
    """
    return np.repeat(np.asarray(route, dtype=np.int64), k)


def monitored_default(monitor: Monitor, every: int, k: int, total: int):
    """A hop rule that takes the default step and evaluates ``monitor`` every ``every`` hops (of ``k`` steps).

    Parameters
    ----------
    monitor : callable or None
        ``theta -> dict`` of scalars, merged into the hop's event and history row; ``None``: never evaluated.
    every : int
        Evaluate after every this many hops (0: only after the last step).
    k : int
        Local steps per hop, ``>= 1``: a hop ends at a step number divisible by ``k``.
    total : int
        Local steps of the whole walk (the last one is always evaluated).

    Returns
    -------
    callable
        ``HopContext -> torch.Tensor``: the :meth:`~unlearnkit.decentral.HopContext.default` step's
        parameters, for :func:`~unlearnkit.decentral.run_token`'s ``hop_rule``.
    """
    def rule(ctx: Any) -> Tensor:
        new = ctx.default()
        step = ctx.t + 1
        if monitor is not None and step % k == 0:
            hop = step // k
            if (every and hop % every == 0) or step == total:
                ctx.values.update(monitor(new))
        return new
    return rule


def hop_rows(history: list[dict], k: int) -> list[dict]:
    """One row per hop (the last local step of each) with the hop number.

    Parameters
    ----------
    history : list of dict
        One row per local step, as :func:`~unlearnkit.decentral.run_token` records them.
    k : int
        Local steps per hop, ``>= 1``.

    Returns
    -------
    list of dict
        Copies of every ``k``-th row, with ``"hop"`` set to the hop number (1-based).
    """
    rows = []
    for i in range(k - 1, len(history), k):
        row = dict(history[i])
        row["hop"] = (i + 1) // k
        rows.append(row)
    return rows


def _walk(flat: Any, federation: Any, route: np.ndarray, config: WalkConfig, token: TokenConfig, *,
          generator: torch.Generator, init: Optional[Tensor], monitor: Monitor, callback: Optional[Callback],
          progress: bool) -> TrainedState:
    route = repeat_route(route, config.local_steps)
    out = run_token(flat, federation, route, token, generator=generator, init=init, callback=callback,
                    hop_rule=monitored_default(monitor, config.eval_every, config.local_steps, len(route)),
                    progress=progress)
    out.history = hop_rows(out.history, config.local_steps)
    return out


def _simple_walk(flat: Any, federation: Any, config: WalkConfig, token: TokenConfig, *, generator: torch.Generator,
                 init: Optional[Tensor], monitor: Monitor, callback: Optional[Callback], progress: bool
                 ) -> TrainedState:
    """Algorithm 2's walk: a uniform *other* client each hop on the complete graph."""
    route = simple_walk(complete(federation.n_clients), config.hops, rng=route_rng(config, generator))
    return _walk(flat, federation, route, config, token, generator=generator, init=init, monitor=monitor,
                 callback=callback, progress=progress)


def _result(out: TrainedState, certificate: Any = None, **extras: Any) -> Result:
    return Result(params=out.params, certificate=certificate, history=out.history, cost=out.cost, extras=extras)


# ----------------------------------------------------------------------------------------------------------
# Training and the baselines
# ----------------------------------------------------------------------------------------------------------

class NetworkSGD:
    """Algorithm 2 (Network-SGD) on the complete graph: trains the original model (not an unlearner).

    The returned state keeps the initialisation as ``checkpoints[0]`` (what :class:`RetrainWalk` restarts
    from) and carries ``federation``.
    """

    name = "network_sgd"

    def train(self, flat: Any, federation: Any, config: WalkConfig, *, generator: torch.Generator,
              init: Optional[Tensor] = None, callback: Optional[Callback] = None, progress: bool = False,
              monitor: Monitor = None) -> TrainedState:
        out = _simple_walk(flat, federation, config, config.token, generator=generator, init=init, monitor=monitor,
                           callback=callback, progress=progress)
        if init is not None:
            out.checkpoints[0] = init
        return out


class _Monitored:
    """A walk unlearner with an optional ``monitor(theta) -> dict`` (e.g. accuracies), evaluated every
    ``config.eval_every`` hops and stored in that hop's history row and event."""

    def __init__(self, *, monitor: Monitor = None) -> None:
        self.monitor = monitor


class RetrainWalk(_Monitored):
    """Exact unlearning by retraining: Algorithm 2 on D minus D_f from ``state.checkpoints[0]`` (the original's
    initialisation; ``state.flat.init()`` when absent). Exact by definition: its certificate is ``epsilon = delta = 0``.

    Requests: samples or a class, of any clients (every client keeps data: the walk visits all of them)."""

    name = "retrain_walk"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: WalkConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Run the walk of Algorithm 2 on D minus D_f from the original initialisation.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : WalkConfig
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
            The retrained parameters, the exact certificate (``epsilon = delta = 0``), the history and the cost.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 2 (Network-SGD) run on D minus D_f, the certifier C(D minus D_f) = A(D minus D_f) of Definition
           3.3.
        """
        init = state.checkpoints.get(0)
        out = _simple_walk(state.flat, state.federation.without(request), config, config.token, generator=generator,
                           init=state.flat.init() if init is None else init, monitor=self.monitor, callback=callback,
                           progress=progress)
        return _result(out, self.certify(state, request, config).certificate)

    def certify(self, state: TrainedState, request: Request, config: WalkConfig) -> Plan:
        """Exact by definition: the certificate ``epsilon = delta = 0`` with no noise point.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : WalkConfig
            The run's settings.

        Returns
        -------
        Plan
            The exact certificate (``epsilon = delta = 0``) and no noise point.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 2 (Network-SGD): retraining is its own reference (epsilon = delta = 0).
        """
        return Plan(Certificate.exact("the walk retrained on D minus D_f is the reference itself"))


class FinetuneWalk(_Monitored):
    """Fine-tuning (digest P18): the walk of Algorithm 2 over *all* clients on D minus D_f from the original
    model, no noise and no projection (u trains on its retained data). RR-DU with ``p = 0`` is the other
    reading. No certificate.

    Requests: samples or a class, of any clients (every client keeps data: the walk visits all of them)."""

    name = "finetune_walk"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: WalkConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Run the walk of Algorithm 2 on D minus D_f from the trained model.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : WalkConfig
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
            The fine-tuned parameters, no certificate (``None``), the history and the cost.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 2 (Network-SGD) continued on D minus D_f, the fine-tuning baseline of Section 6.1 and Appendix D.3.
        """
        out = _simple_walk(state.flat, state.federation.without(request), config, config.token, generator=generator,
                           init=state.params, monitor=self.monitor, callback=callback, progress=progress)
        return _result(out)

    def certify(self, state: TrainedState, request: Request, config: WalkConfig) -> Plan:
        """A heuristic: no certificate (epsilon = infinity; ``unlearn`` reports ``None``), no noise point.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : WalkConfig
            The run's settings.

        Returns
        -------
        Plan
            No certificate (``mode="none"``) and no noise point.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Section 6.1 (the fine-tuning baseline, uncertified).
        """
        return Plan(_NO_CERTIFICATE)


class DDPWalk(_Monitored):
    """The DDP/NetDP baseline (paper Algorithm 3, digest 2.7): i.i.d. uniform clients, per-example clipping
    at ``L``, fresh ``N(0, sigma^2)`` on every step's gradient, projection onto ``B(theta0, R)``, continued from
    the original model on D minus D_f (otherwise nothing is forgotten). The certificate is the one the
    calibration claims (:func:`.certify.ddp_certify`, Prop. C.1) and **none holds** here:
    the original model was trained without noise, so the noisy steps on D_f the accounting describes never ran;
    no calibration is ``certified``. ``extras["sigma"]`` is the noise std.

    Requests: samples or a class (the calibrations are for m deleted samples; every client keeps data)."""

    name = "ddp_walk"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: DDPWalkConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Continue the clipped, noisy, projected walk from the trained model on D minus D_f (uniform route),
        with the noise of :meth:`certify`.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : DDPWalkConfig
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
            The parameters, the calibration's certificate (never ``certified``), the history, the cost and
            ``extras["sigma"]``.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 3 (Network-Private SGD, the DDP NetDP baseline) and Appendix B.2.
        """
        fed = state.federation.without(request)
        plan = self.certify(state, request, config)
        sigma = plan.point("ddp_walk.step").sigma
        token = dc_replace(config.token, noise_sigma=float(sigma), clip=float(config.L), radius=float(config.R),
                           center="init")
        route = uniform_route(fed.n_clients, config.hops, rng=route_rng(config, generator))
        out = _walk(state.flat, fed, route, config, token, generator=generator, init=state.params, monitor=self.monitor,
                    callback=callback, progress=progress)
        return _result(out, plan.certificate, sigma=sigma)

    def certify(self, state: TrainedState, request: Request, config: DDPWalkConfig) -> Plan:
        """The certificate the calibration claims (:func:`.certify.ddp_certify`; none is ``certified``) and the
        noisy steps, ``"ddp_walk.step"`` (std ``config.sigma`` or :func:`.certify.ddp_sigma`'s; no sensitivity
        is declared: the accounting describes noisy steps on D_f that never ran; not traced).

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : DDPWalkConfig
            The run's settings.

        Returns
        -------
        Plan
            The calibration's certificate and the noise point ``"ddp_walk.step"``.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 3, Theorem 3.5 and Lemma A.11 (the NetDP calibration).
        """
        fed = state.federation.without(request)
        m = request.m if config.m is None else config.m
        sigma = config.sigma if config.sigma is not None else ddp_sigma(
            config.calibration, epsilon=config.epsilon, delta=config.delta, L=config.L, m=m, T=config.hops,
            n_clients=fed.n_clients)
        cert = ddp_certify(config.calibration, sigma=sigma, epsilon=config.epsilon, delta=config.delta, L=config.L,
                           m=m, T=config.hops, n_clients=fed.n_clients)
        return Plan(cert, (NoisePoint("ddp_walk.step", None, sigma, count=config.hops * config.local_steps),))


class DPSGDWalk(_Monitored):
    """DP-SGD (Abadi et al. 2016) on the token walk from the original model on D minus D_f (digest 2.7).

    Per-example clipping at ``C`` and Gaussian noise with multiplier ``z`` from the sampled-Gaussian RDP
    accountant (:func:`unlearnkit.privacy.get_noise_multiplier`), rate ``s b / n_v`` and, conservatively,
    every one of the ``hops * local_steps`` steps counted. Minibatches are drawn with replacement, not
    Poisson-sampled: the accounting is the usual approximation, so no certificate is issued;
    ``extras["sigma"]`` is ``z``.

    Requests: samples or a class, of any clients (every client keeps data: the walk visits all of them).
    """

    name = "dpsgd_walk"
    request_kinds = ("samples", "class")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: DPSGDWalkConfig, *,
                generator: torch.Generator, callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Run DP-SGD on the walk from the trained model on D minus D_f, noise multiplier from :meth:`certify`.

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : DPSGDWalkConfig
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
            The parameters, no certificate (``None``), the history, the cost and ``extras["sigma"]`` (the noise
            multiplier ``z``).

        References
        ----------
        .. [1] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep Learning with
           Differential Privacy", CCS 2016, Algorithm 1 (DP-SGD), run along the walk of H. Lamri, M. Maniatakos, "Fully
           Decentralized Certified Unlearning", Algorithm 2.
        """
        fed = state.federation.without(request)
        batch = config.token.batch_size * config.token.local_batches
        z = self.certify(state, request, config).point("dpsgd_walk.step").sigma
        token = dc_replace(config.token, noise_sigma=z * config.C / batch, clip=float(config.C))
        out = _simple_walk(state.flat, fed, config, token, generator=generator, init=state.params, monitor=self.monitor,
                           callback=callback, progress=progress)
        return _result(out, None, sigma=z)

    def certify(self, state: TrainedState, request: Request, config: DPSGDWalkConfig) -> Plan:
        """No certificate is issued (``mode="none"``; ``unlearn`` reports ``None``: the minibatches are not
        Poisson-sampled) and the noisy steps ``"dpsgd_walk.step"``, whose ``sigma`` is the noise multiplier
        ``z`` of the RDP accountant (the std of the summed clipped gradients is ``z C``; not traced).

        Parameters
        ----------
        state : TrainedState
            The trained walk model, with its federation.
        request : Request
            What to forget.
        config : DPSGDWalkConfig
            The run's settings.

        Returns
        -------
        Plan
            No certificate (``mode="none"``) and the noise point ``"dpsgd_walk.step"``.

        References
        ----------
        .. [1] I. Mironov, K. Talwar, L. Zhang, "Renyi Differential Privacy of the Sampled Gaussian Mechanism", arXiv
           1908.10530, 2019, Section 3 (the RDP accountant of the noise multiplier).
        .. [2] M. Abadi, A. Chu, I. Goodfellow, H. B. McMahan, I. Mironov, K. Talwar, L. Zhang, "Deep Learning with
           Differential Privacy", CCS 2016, Algorithm 1.
        """

        fed = state.federation.without(request)
        batch = config.token.batch_size * config.token.local_batches
        n_min = int(min(len(ix) for ix in fed.client_indices))
        z = get_noise_multiplier(target_epsilon=config.epsilon, target_delta=config.delta,
                                 sample_rate=min(1.0, batch / n_min), steps=config.hops * config.local_steps)
        return Plan(_NO_CERTIFICATE, (NoisePoint("dpsgd_walk.step", None, z, count=config.hops * config.local_steps),))
