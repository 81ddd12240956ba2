"""RR-DU: randomized-restart decentralized unlearning by a random walk (Lamri & Maniatakos; digest 000).

A single token carries the model around N clients. After a deletion request by client ``u`` the walk runs
``T_unlearn`` more hops (paper Algorithm 4, main-text Algorithm 1):

- **routing** (digest section 2.3): at every hop, independently of where the token is, go to ``u`` with
  probability ``p``, else to a uniform client of ``V \\ {u}`` (``routing="rrdu_complete"``, the paper's rule,
  which jumps regardless of edges, pitfall P1). ``routing="walk_with_restart"`` is the graph-respecting
  variant: with probability ``p`` teleport to ``u``, else move to a uniform neighbour (its certificate is
  *not* proved in the paper).
- **at u**: one noisy corrective step, projected onto the trust ball ``B(theta_ref, rho)`` around the
  original model: ``theta <- Pi(theta + eta (g_u + Z))`` with ``Z ~ N(0, sigma^2 I_d)`` fresh each visit.
  Three alignment variants (``RRDUConfig.variant``; digest 2.6 and pitfall P3):

  * ``"exact"``: ``g_u = -grad l_{u\\f}(theta)`` (full retained-data gradient at u). With ``p = 1/N`` the
    expected update is exactly ``-eta grad L_{\\f}`` (paper eq. 13): no bias.
  * ``"lightweight"``: ``g_u = (m/n_u) grad l(theta; B_f)``, gradient *ascent* on the forget set (the
    paper's experiments). Its expected update is off the retraining gradient by
    ``(1/N) ||(m/n_u) grad l_f + grad l_{u\\f}||``, i.e. O(L/N), *not* the O(L m/n_u) that eq. (14) and
    Lemma C.7 claim (the retained-data descent at u is missing).
  * ``"corrected"``: ``g_u = -grad l(theta; B_u) + (m/n_u) grad l(theta; B_f)`` with ``B_u`` drawn from
    all of D_u; its mean is ``-((n_u - m)/n_u) grad l_{u\\f}``, so the bias is at most ``L m/n_u``: the
    direction for which the paper's O(L m/n_u) claim does hold. Not in the paper.

- **elsewhere**: noiseless descent averaging ``s`` minibatches, projected onto Theta only (default R^d),
  so the iterate may leave the trust ball between visits (pitfall P9; ``project_all=True`` keeps it in).

The theory is for SGD; ``optimizer="adam"`` is the paper's *experimental* setting (Adam, lr 0.005, its
state travelling with the token, reset when unlearning starts; the noisy gradient enters as
``-(g_u + Z)``). The certificate does **not** cover it beyond post-processing of the noisy release
(pitfall P7). ``local_steps`` sets the work per hop (pitfall P2: one step per hop cannot train MNIST in 100
hops; the paper is silent).

The baselines of the paper's section 6 are in :mod:`unlearnkit.methods.rrdu.baselines`, the accountants in
:mod:`unlearnkit.methods.rrdu.accountants`, and the backdoor experiment (``python -m unlearnkit run rrdu``, ``ddp``,
``dp_sgd_walk``) in :mod:`unlearnkit.experiments.rrdu.lab`.

Measured on the quick profile (digits, one seed; ``tests/methods/rrdu/test_rrdu_backdoor.py``): without noise and
projection (the paper's Table 3 setting) RR-DU at p = 0.1 removes the backdoor (ASR 0.06, retraining 0.00)
and p = 1 collapses the model (clean 0.10, as the paper's 10.10); with the epsilon = 1 noise under Adam the
backdoor largely stays (ASR 0.66): the noise inflates Adam's second-moment estimate and slows every later
step, a side of pitfall P7 the paper's MNIST/CIFAR numbers do not show.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from ..._validate import check_choice, check_epsilon, check_int, check_positive, check_probability, check_range
from ...core import Callback, Cost, Plan, Request, Result, TrainedState, emit
from ...core import MAX_STEPS, checked_unlearn
from ...decentral.token import TokenConfig, run_token
from ...models import project_l2_ball
from ...privacy.trace import record_release, recording_active, transcript
from .accountants import ACCOUNTANTS, NoisyStartAccountant, accountant_plan, rrdu_plan
from .ledger import SoundObserverLedger
from .noisy import training_rho
from .sound import rrdu_u_sensitivity
from .walk import VARIANTS, WalkData, make_route


ROUTINGS = ("rrdu_complete", "walk_with_restart")
OPTIMIZERS = ("sgd", "adam")


# ----------------------------------------------------------------------------------------------------------
# Configuration
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class RRDUConfig:
    """Hyperparameters of RR-DU (paper Algorithm 4; defaults follow digest 000's appendix where they exist).

    Attributes
    ----------
    T_unlearn:
        Number of unlearning hops ``T_unlearn`` (paper: 100).
    p:
        Routing probability towards ``u``; ``None`` means ``1/N`` (the paper's recommendation). ``p = 0`` is
        fine-tuning without u (Table 3's first row), ``p = 1`` is "continuous unlearning".
    s:
        Minibatches averaged per non-u step (paper: 4).
    batch_size:
        Minibatch size (paper: 64), also the size of ``B_f`` and ``B_u`` at u.
    u_batch:
        ``None``: the lightweight/corrected step uses a minibatch ``B_f`` (Algorithm 4); ``"full"``: the whole
        forget set (main-text Algorithm 1).
    lr:
        Step size ``eta`` (constant; paper: Adam with 0.005).
    sigma:
        Noise std added to the *gradient* at u. ``None`` means "calibrate from ``epsilon``, ``delta`` with
        ``accountant``" (:func:`unlearnkit.methods.rrdu.certify.rrdu_sigma`).
    epsilon, delta, accountant, C_A, sens_factor:
        Target guarantee and accountant (``"A"``..``"D"``, see :mod:`.certify`; the per-visit
        sensitivity is ``sens_factor * clip_L``, pitfall P11). The sound ones need a start from
        :class:`~.noisy.NoisyWalkTraining`: ``"S"`` (:mod:`.sound`, capped visit count, exact GDP) and ``"M"``
        (:mod:`.mixture`, exact Gaussian composition averaged over the visit count; complete-graph routing).
    composition:
        How accountant ``"S"`` calibrates ``sigma``: ``"gaussian"`` (exact GDP composition of the plain
        Gaussians) or ``"rdp"`` (the former Prop. A.8 calibration, kept as the comparison).
    clip_L:
        Per-example clipping norm at u (the paper's L; MNIST 0.5, CIFAR 0.2). ``inf`` disables clipping (no
        certificate then: the sensitivity is unbounded).
    rho:
        Trust radius around ``theta_ref`` (= the original model; MNIST 10.82, CIFAR 56.30).
    variant:
        The alignment step at u: ``"exact"``, ``"lightweight"`` (paper's experiments) or ``"corrected"``; see
        the module docstring. (Not ``mode``: that name means paper/sound/none across the package.)
    optimizer:
        ``"sgd"`` (what the theory assumes) or ``"adam"`` (the paper's experiments; not certified).
    local_steps:
        Descent steps per non-u hop (each averaging ``s`` minibatches).
    routing:
        ``"rrdu_complete"`` (paper) or ``"walk_with_restart"`` (graph-respecting; needs a network).
    noise, project:
        Switch the noise and the trust-ball projection off (Table 3's p-sweep runs "no projection, no noise").
    project_all:
        Also project non-u steps onto the trust ball (analysis-consistent, pitfall P9).
    theta_radius:
        Radius of the feasible set Theta (a ball around the origin); ``inf`` = R^d (digest P8).
    eval_every:
        Call the ``monitor`` every this many hops (0: only at the end).
    """

    T_unlearn: int = 100
    p: Optional[float] = None
    s: int = 4
    batch_size: int = 64
    u_batch: Optional[str] = None
    lr: float = 0.05
    sigma: Optional[float] = None
    epsilon: float = 1.0
    delta: float = 1e-5
    accountant: str = "C"
    composition: str = "gaussian"
    C_A: float = 1.0
    sens_factor: float = 2.0
    clip_L: float = 0.5
    rho: float = 10.0
    variant: str = "lightweight"
    optimizer: str = "sgd"
    adam_betas: tuple[float, float] = (0.9, 0.999)
    local_steps: int = 1
    routing: str = "rrdu_complete"
    noise: bool = True
    project: bool = True
    project_all: bool = False
    theta_radius: float = math.inf
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_int("T_unlearn", self.T_unlearn, low=1)
        if self.p is not None:
            check_probability("p", self.p)
        check_int("s", self.s, low=1)
        check_int("batch_size", self.batch_size, low=1)
        if self.u_batch is not None:
            check_choice("u_batch", self.u_batch, (None, "full"))
        check_positive("lr", self.lr)
        if self.sigma is not None:
            check_positive("sigma", self.sigma, allow_zero=True)
        check_epsilon("epsilon", self.epsilon)
        check_range("delta", self.delta, 0.0, 1.0, low_open=True, high_open=True)
        check_choice("accountant", self.accountant, tuple(ACCOUNTANTS))
        check_choice("composition", self.composition, ("gaussian", "rdp"))
        check_positive("C_A", self.C_A)
        check_positive("sens_factor", self.sens_factor)
        if not (self.clip_L == math.inf):
            check_positive("clip_L", self.clip_L)
        check_positive("rho", self.rho) if self.rho != math.inf else None
        check_choice("variant", self.variant, VARIANTS)
        check_choice("optimizer", self.optimizer, OPTIMIZERS)
        for i, b in enumerate(self.adam_betas):
            check_range(f"adam_betas[{i}]", b, 0.0, 1.0, high_open=True)
        check_int("local_steps", self.local_steps, low=1, high=MAX_STEPS)
        check_choice("routing", self.routing, ROUTINGS)
        if self.theta_radius != math.inf:
            check_positive("theta_radius", self.theta_radius)
        check_int("eval_every", self.eval_every, low=0)

    def routing_p(self, n_clients: int) -> float:
        """``p``, with the paper's default ``1/N``."""
        return 1.0 / n_clients if self.p is None else float(self.p)


# ----------------------------------------------------------------------------------------------------------
# Gradients
# ----------------------------------------------------------------------------------------------------------

def u_direction(ctx: Any, data: WalkData, cfg: RRDUConfig) -> Tensor:
    """``g_u`` of the corrective step at u (paper Algorithm 4; the update is ``theta + eta (g_u + Z)``).

    Drawn through the token's :class:`~unlearnkit.decentral.HopContext` (per-example clipping at ``clip_L``).

    Parameters
    ----------
    ctx : HopContext
        The token's hop context (gradients with clipping, minibatch sampling).
    data : WalkData
        The walk's data split at ``u`` (``retained``, ``forget``, ``m``, ``n_u``).
    cfg : RRDUConfig
        The run (``variant``, ``u_batch``, ``batch_size``, ``clip_L``).

    Returns
    -------
    torch.Tensor
        ``g_u``, a flat direction shaped like the parameters.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Algorithm 4.
    """
    ratio = data.m / data.n_u
    full = cfg.u_batch == "full"
    forget = data.forget.cpu().numpy()
    if cfg.variant == "exact":
        x, y = data.x[data.retained], data.y[data.retained]
        return -ctx.gradient(x, y, clip=cfg.clip_L)
    xf, yf = (data.x[data.forget], data.y[data.forget]) if full else ctx.sample(indices=forget, size=cfg.batch_size)
    g = ratio * ctx.gradient(xf, yf, clip=cfg.clip_L)
    if cfg.variant == "corrected":
        own = torch.cat([data.retained, data.forget])
        xu, yu = (data.x[own], data.y[own]) if full else ctx.sample(indices=own.cpu().numpy(), size=cfg.batch_size)
        g = g - ctx.gradient(xu, yu, clip=cfg.clip_L)
    return g


# ----------------------------------------------------------------------------------------------------------
# The algorithm
# ----------------------------------------------------------------------------------------------------------

def token_config(cfg: RRDUConfig) -> TokenConfig:
    """The :class:`~unlearnkit.decentral.TokenConfig` of RR-DU's descent hops (s minibatches, Theta ball).

    Parameters
    ----------
    cfg : RRDUConfig
        The run.

    Returns
    -------
    TokenConfig
        Step size, batch size, ``s`` local batches, optimizer and trust ball of the descent hops.
    """
    return TokenConfig(lr=cfg.lr, batch_size=cfg.batch_size, local_batches=cfg.s, optimizer=cfg.optimizer,
                       betas=cfg.adam_betas, radius=cfg.theta_radius, center="origin")


def walk_unlearn(flat: Any, theta0: Tensor, data: WalkData, cfg: RRDUConfig, *, sigma: float,
                  generator: torch.Generator, federation: Any, theta_ref: Optional[Tensor] = None,
                  route: Optional[np.ndarray] = None, network: Any = None, callback: Optional[Callback] = None,
                  monitor: Optional[Callable[[Tensor], dict]] = None, optimizer: Any = None,
                  progress: bool = False) -> tuple[Tensor, list[dict], Cost, np.ndarray]:
    """Run ``cfg.T_unlearn`` hops of RR-DU from ``theta0`` (paper Algorithm 4) and return
    ``(theta, history, cost, route)``.

    The token is the substrate's :func:`~unlearnkit.decentral.run_token` walking ``route`` (default: drawn
    by :func:`make_route` from a numpy generator seeded from ``generator``), with a hop rule that makes the
    noisy, trust-ball-projected corrective step at ``u`` and ``cfg.local_steps`` descent steps (each
    averaging ``s`` minibatches) elsewhere. ``federation`` is the partition *after* the deletion (u keeps
    its retained data). ``sigma`` is the gradient-noise std (already calibrated).

    Each hop emits ``Event("hop", t, node, noisy=0|1, noise_norm, step_norm, dist_ref, ...)``:
    ``step_norm`` is the pre-projection step length and ``dist_ref = ||theta - theta_ref||`` after the hop;
    ``monitor(theta) -> dict`` (e.g. accuracies) is evaluated every ``cfg.eval_every`` hops and at the end,
    stored in that hop's history row and event.

    Parameters
    ----------
    flat : FlatParams
        The model as a function of its flat parameters.
    theta0 : torch.Tensor
        Flat parameters to start from.
    data : WalkData
        The walk's data split.
    cfg : RRDUConfig
        The run.
    sigma : float
        Gradient-noise std of the u-steps, ``>= 0``.
    generator : torch.Generator
        Source of noise, minibatches and (without ``route``) the route's seed.
    federation : Federation
        The partition after the deletion.
    theta_ref : torch.Tensor, optional
        Centre of the trust ball and reference of ``dist_ref``; default a copy of ``theta0``.
    route : numpy.ndarray, optional
        The client of every hop; drawn when ``None``.
    network : object, optional
        The network, for ``routing="walk_with_restart"``.
    callback : Callback, optional
        Receives the hop events.
    monitor : callable, optional
        ``monitor(theta) -> dict``, evaluated every ``cfg.eval_every`` hops and at the end.
    optimizer : TokenOptimizer, optional
        Passed to :func:`~unlearnkit.decentral.run_token` for the descent hops.
    progress : bool, default False
        Show a progress bar.

    Returns
    -------
    tuple of (torch.Tensor, list of dict, Cost, numpy.ndarray)
        ``(theta, history, cost, route)``.

    References
    ----------
    Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Algorithm 4.
    """
    u = data.u
    p = cfg.routing_p(data.n_clients)
    theta0 = transcript("rrdu.start", theta0)  # the start the observer saw (the replay's transcript)
    theta_ref = theta0.detach().clone() if theta_ref is None else theta_ref
    sens_u = rrdu_u_sensitivity(cfg.variant, L=_finite_L(cfg), m=data.m, n_u=data.n_u)
    rho = cfg.rho if cfg.project else math.inf
    if route is None:
        seed = int(torch.randint(2**62, (), generator=generator, device=generator.device).item())
        route = make_route(data, p, cfg.T_unlearn, routing=cfg.routing, rng=np.random.default_rng(seed),
                           network=network)

    def rule(ctx: Any) -> Tensor:
        if ctx.node == u:
            ctx.theta = transcript("rrdu.theta", ctx.theta)
            g = u_direction(ctx, data, cfg)
            noise_norm = 0.0
            if cfg.noise and sigma > 0:
                z = ctx.noise(sigma)
                noise_norm = float(z.norm())
                record_release("rrdu.u_step", g, sigma, z / sigma, sensitivity=sens_u)
                g = g + z
            new = ctx.step(-g, center=theta_ref, radius=rho)
            ctx.values.update(noisy=1.0, noise_norm=noise_norm)
        else:
            start = ctx.theta
            for _ in range(cfg.local_steps):
                x, y = ctx.sample()
                ctx.theta = ctx.optimizer.step(ctx.theta, ctx.gradient(x, y))
            new = ctx.theta
            ctx.values.update(noisy=0.0, noise_norm=0.0, step_norm=float((new - start).norm()))
            if cfg.project_all:
                new = project_l2_ball(new, theta_ref, rho)
        new = project_l2_ball(new, None, cfg.theta_radius)
        ctx.values["dist_ref"] = float((new - theta_ref).norm())
        t = ctx.t + 1
        if monitor is not None and ((cfg.eval_every and t % cfg.eval_every == 0) or t == len(route)):
            ctx.values.update(monitor(new))
        return new

    out = run_token(flat, federation, route, token_config(cfg), generator=generator, init=theta0, hop_rule=rule,
                    optimizer=optimizer, callback=callback, progress=progress)
    cost = Cost(grad_evals=out.cost.grad_evals, messages=len(route), seconds=out.cost.seconds)
    if sens_u == 0 and recording_active():  # the u-steps read no D_f: the release post-processes the start
        record_release("rrdu.release", out.params, 0.0, torch.zeros_like(out.params), sensitivity=0.0)
    return out.params, out.history, cost, np.asarray(route)


class RRDU:
    """RR-DU (paper Algorithm 4) with the shared calling shape
    ``unlearn(state, request, config, *, generator, callback=None, progress=False)``.

    ``state`` must carry ``federation`` (and ``network`` for ``walk_with_restart``); ``request.client`` is
    ``u``. The noise and the certificate come from the accountant named in the config
    (:data:`~unlearnkit.methods.rrdu.accountants.ACCOUNTANTS`), through :meth:`certify` before any hop; with ``optimizer="adam"``, ``clip_L = inf``
    or ``noise=False`` the certificate is ``mode="none"`` (epsilon = inf) and its note says why.

    Two optional constructor arguments: ``monitor(theta) -> dict`` is evaluated every ``config.eval_every``
    hops (and at the end) and stored in that hop's history row and event; ``route`` fixes the client of every
    hop (e.g. a previewed walk), otherwise it is drawn by :func:`make_route` from a seed taken from
    ``generator``.

    Requests: samples or a class of one client ``request.client``, who keeps at least one sample (the walk's u-steps
    descend on u's retained data; the sound accountants certify any D_f inside D_u); a whole client is refused.
    """

    name = "rrdu"
    request_kinds = ("samples", "class")
    client_scope = "part"

    def __init__(self, *, monitor: Optional[Callable[[Tensor], dict]] = None,
                 route: Optional[Sequence[int]] = None) -> None:
        self.monitor = monitor
        self.route = route

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: RRDUConfig, *, generator: torch.Generator,
                callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Unlearn ``request`` by ``config.T_unlearn`` hops of RR-DU (:func:`walk_unlearn`) with the noise of
        :meth:`certify`; accountant ``"S"`` on a drawn route is re-certified on its realised u-visits.

        Parameters
        ----------
        state : TrainedState
            The trained model, with ``federation`` (and ``network`` for ``walk_with_restart``).
        request : Request
            Samples or a class of one client ``request.client``.
        config : RRDUConfig
            The run.
        generator : torch.Generator
            Source of noise, minibatches and the route.
        callback : Callback, optional
            Receives the hop events.
        progress : bool, default False
            Show a progress bar.

        Returns
        -------
        Result
            The unlearned parameters, the certificate, the history, the cost and extras (``path``, ``sigma``, ``u``,
            ``p``, and ``observer_epsilons`` for the noisy-start accountants).

        References
        ----------
        Lamri & Maniatakos, "Fully Decentralized Certified Unlearning" (digest 000), Algorithm 4.
        """
        route, monitor = self.route, self.monitor
        plan, data, p = accountant_plan(state, request, config, route)
        sigma = plan.point("rrdu.u_step").sigma
        theta, history, cost, path = walk_unlearn(state.flat, state.params, data, config, sigma=sigma,
                                                   generator=generator, federation=state.federation.without(request),
                                                   route=None if route is None else np.asarray(route),
                                                   network=state.network, callback=callback, monitor=monitor,
                                                   progress=progress)
        accountant = ACCOUNTANTS[config.accountant]
        cert = plan.certificate
        if route is None and isinstance(accountant, NoisyStartAccountant):
            # the route was drawn by the walk: the certificate of its realised u-visits replaces the a-priori one
            cert = accountant_plan(state, request, config, path)[0].certificate
        emit(callback, "done", config.T_unlearn, None, sigma=sigma)
        extras = {"path": path.tolist(), "sigma": sigma, "u": data.u, "p": p}
        if accountant.noisy_start:  # the sound per-observer ledger of this walk (realised route)
            sens = rrdu_u_sensitivity(config.variant, L=_finite_L(config), m=data.m, n_u=data.n_u)
            led = SoundObserverLedger(path, n_clients=data.n_clients, u=data.u, sigma=sigma if config.noise else 0.0,
                                      sensitivity=sens, train_rho=training_rho(state, data.u))
            extras["observer_epsilons"] = led.epsilons(config.delta).tolist()
        return Result(params=theta, certificate=cert, history=history, cost=cost, extras=extras)

    def certify(self, state: TrainedState, request: Request, config: RRDUConfig) -> Plan:
        """The certificate and noise point of :meth:`unlearn` (:func:`~.accountants.rrdu_plan`), before any hop.

        With ``route`` set the route is taken as given, so the certificate is the one :meth:`unlearn` issues for
        every accountant. Without it the route is drawn inside :meth:`unlearn`: accountants ``"A"`` .. ``"D"``
        and ``"M"`` do not read it (the same certificate), while ``"S"`` composes the realised u-visits, so this
        reports its a-priori certificate at the visit cap (its note says so) and :meth:`unlearn` the realised one.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : RRDUConfig
            The run.

        Returns
        -------
        Plan
            The certificate and the ``"rrdu.u_step"`` noise point.

        References
        ----------
        .. [1] H. Lamri, M. Maniatakos, "Fully Decentralized Certified Unlearning", arXiv 2512.08443 (CVPR 2026),
           Algorithm 4, Theorem 5.1 and Corollary 5.2.
        .. [2] J. Dong, A. Roth, W. J. Su, "Gaussian Differential Privacy", J. R. Stat. Soc. B 2022, Corollaries 2.13
           and 3.3 (accountants "S" and "M").
        """
        return rrdu_plan(state, request, config, self.route)


def _finite_L(cfg: RRDUConfig) -> float:
    return 1.0 if cfg.clip_L == math.inf else float(cfg.clip_L)
