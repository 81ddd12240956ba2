"""Newton/Fisher certified unlearning in decentralized federated learning (Wu et al. 2026; digest 001).

Clients train by gossip (D-PSGD). A client ``c`` that must forget its samples ``U_c`` computes **one
Newton-style correction** from its own data (Algorithm 1, eqs. 2-3)::

    x_delta_c = 1/(n_c - m_c) * C_c^{-1} * sum_{xi in U_c} grad F(x_c, xi)

with ``C_c`` the retained-data curvature (exact Hessian, empirical/true/diagonal Fisher, or a matrix-free
CG solve: :mod:`unlearnkit.curvature`), adds Gaussian noise, and **floods** the result through the graph
(each client forwards it once, lines 6-12: :func:`unlearnkit.graphs.flood`); every client adds ``1/N`` of it
to its model. Class-wise removal is simultaneous sample-wise requests (Remark 2); client-wise removal
(section IV-C, eqs. 5-6) has the departing client collect every other client's curvature ``T_i`` and send
``1/(N-1) C^{-1} grad f_c``. An optional D-PSGD fine-tuning round on retained data follows (Remark 1;
post-processing).

Choices where the paper is ambiguous (each named, flagged and tested):

- ``clientwise_weight``: eq. (6) already *is* the global Newton step for ``f^{-c}``, so the receivers
  apply it with weight 1 (our default); the paper's "following the same procedure described in
  Algorithm 1" suggests ``1/N``, which under-corrects by ``N`` (digest P2). Both are offered.
- ``scope="global"`` and ``center_gradient=True`` turn Algorithm 1 into the exact Newton step of the
  retained global objective (digest 2.5); the paper's theory (Lemma 3) analyses that step, but its
  Algorithm 1 uses the local Hessian and the uncentered gradient (``scope="local"``, the default).
- The regularised loss ``F + lam/2 ||x||^2`` (Remark 3) is used throughout: per-sample gradients include
  ``lam * x`` and every curvature includes ``lam I``.
- Sequential requests (Fig. 1) use the *current* ``n_c`` and model (digest P17); each request is certified
  on its own (the paper does not discuss composition).
- ``mode="sound"`` certifies the **average model** ``x_s + correction + noise``, ``x_s`` the average of the
  models that are released (client-wise: the ``N - 1`` remaining clients, so the certified point is the one
  released); it needs the public ``grad_tol`` and clips each correction to a public bound. With
  ``release="local"`` (Algorithm 1) the local models' differences are released noise-free and not covered;
  ``release="average"`` releases the certified average at every client.

The certificates (paper and sound modes) are in :mod:`unlearnkit.methods.newton.certify`; networks other
than logistic regression get ``mode="none"`` (not certified; non-convex). Training (D-PSGD), the paper's
retraining baseline and the exact convex oracle are in :mod:`unlearnkit.methods.newton.training`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Mapping, Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from ...core import Callback, Cost, NoisePoint, Plan, Request, Result, Stopwatch, TrainedState, emit
from ...core import checked_unlearn
from ...data.federated import Federation
from ...decentral.gossip import run_gossip
from ...graphs.flood import Flood, flood, remove_client
from ...privacy.noise import gaussian_noise
from ...privacy.trace import record_release, recording_active
from .certify import step_bounds
from .config import NewtonConfig
from .plan import newton_plan, newton_terms
from .step_cache import noise_free_step
from .training import training_config


def _trace_average(x_bar: Tensor, x_delta: Mapping[int, Tensor], draws: dict, weight: float,
                   point: NoisePoint) -> None:
    """Record the released average ``x_s + weight sum_c (x_delta_c + nu_c)`` as one mechanism (replay check),
    under the plan's noise point ``"newton.average"`` (its std ``weight sqrt(sum_c sigma_c^2)``).

    ``draws[c] = (sigma_c, u_c)``: requester ``c``'s message noise is ``sigma_c u_c`` with ``u_c ~ N(0, I)``.
    """
    if not recording_active() or not draws:
        return
    value = x_bar + weight * sum(x_delta.values())
    sigma = point.sigma
    units = [u for _, u in draws.values()]
    z = units[0] if len(units) == 1 or sigma == 0 else sum(s * u for s, u in draws.values()) * (weight / sigma)
    record_release(point.name, value, sigma, z, sensitivity=point.sensitivity)


class Newton:
    """Newton/Fisher certified decentralized unlearning (Wu et al. 2026, Algorithm 1 and section IV-C).

    ``Newton().unlearn(state, request, config, generator=g)`` where ``state`` comes from
    :func:`train_dpsgd` (``params`` ``(N, d)``, ``federation``, ``network``). Returns a :class:`Result`
    whose ``extras["state"]`` is the state after the request (for sequential requests), ``extras["floods"]``
    the per-requester :class:`Flood` and ``extras["x_delta"]`` the noise-free corrections.

    Requests: samples (of one or several clients, each keeping data), a class, or a whole client (section IV-C).
    """

    name = "newton"
    request_kinds = ("samples", "class", "client")

    @checked_unlearn
    def unlearn(self, state: TrainedState, request: Request, config: NewtonConfig = NewtonConfig(), *,
                generator: torch.Generator, callback: Optional[Callback] = None, progress: bool = False) -> Result:
        """Serve one request: corrections, noise, floods, then the optional fine-tuning round.

        Parameters
        ----------
        state:
            From :func:`~unlearnkit.methods.newton.training.train_dpsgd`: ``params`` ``(N, d)``,
            ``federation``, ``network`` and the training ``GossipConfig``.
        request:
            Sample-wise, class-wise or client-wise (Wu et al. 2026, section IV).
        config:
            :class:`NewtonConfig`.
        generator:
            The message noise and the fine-tuning minibatches are drawn from it, in that order.
        callback, progress:
            Events (``"hop"``, ``"noise"``, ``"done"`` and the fine-tuning round's) and a progress bar for the
            fine-tuning round.

        Returns
        -------
        Result
            The ``(N', d)`` models after the request, the certificate (recomputed with what the run measured),
            the history and the cost.

        References
        ----------
        .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
           Learning", arXiv 2601.06436, 2026, Algorithm 1 (sample-wise), Section IV-C (client-wise removal) and Remark 1
           (the optional fine-tuning round).
        """
        # the plan (newton_plan, as certify returns it) before any work: it validates the request, and the run
        # checks after the step (measured gradient, CG convergence, clips) recompute it with what they measured
        terms = newton_terms(state, request, config)
        reqs, wd, weight, constants = terms.requesters, terms.weight_decay, terms.weight, terms.constants
        G, flat, fed, ds = state.network, state.flat, state.federation, state.dataset
        X = state.params
        N, d = X.shape
        train_cfg = training_config(state)
        client_kind = request.kind == "client"
        G_after = remove_client(G, request.client, rule=train_cfg.rule) if client_kind else G

        def xy(idx: np.ndarray) -> tuple[Tensor, Tensor]:
            x, y = ds.train_subset(idx)
            return x.to(device=X.device, dtype=X.dtype), y.to(X.device)

        # x_s: the average of the models that will be released (client-wise: the N - 1 remaining ones), the
        # point a sound certificate is about; scope="global" also computes the step there
        keep_rows = [i for i in range(N) if i != request.client] if client_kind else list(range(N))
        x_bar = X[keep_rows].mean(0)
        history: list[dict[str, float]] = []
        with Stopwatch() as sw:
            # the corrections, before clipping and noise: they do not depend on the privacy settings, so a
            # sweep over epsilon solves each system once (step_cache; the stored seconds count in the cost)
            step = noise_free_step(state, request, config, reqs=reqs, wd=wd, xy=xy, x_bar=x_bar)
            x_delta, fractions, local_seconds = step.x_delta, step.fractions, step.local_seconds
            evals, messages, converged = step.evals, step.messages, step.converged

            grad_norm, clipped = None, False
            if config.mode == "sound" and constants is not None:
                # check the public grad_tol on this run (the noise never depends on the measured value)
                parts_all = [xy(ix) for ix in fed.client_indices]
                grad_bar = sum(flat.grad(x_bar, x, y, weight_decay=wd) for x, y in parts_all) / N
                evals += sum(int(x.shape[0]) for x, _ in parts_all)
                grad_norm = float(grad_bar.norm())
                # clip every correction to its public bound: the first-order sensitivity then holds always
                # the same bounds the certificate assumes (a centred step: loss gradients only, L_loss)
                L_clip = min(constants.get("L_loss", constants["L"]), constants["L"]) if config.center_gradient \
                    else constants["L"]
                bounds = step_bounds(kind=request.kind, fractions=fractions, n_clients=N, L=L_clip,
                                     lam=constants["lam"], tau=float(config.grad_tol),
                                     center_gradient=config.center_gradient, damping=config.damping)
                for c, z in x_delta.items():
                    nz = float(z.norm())
                    if nz > bounds[c]:
                        x_delta[c], clipped = z * (bounds[c] / nz), True
            if grad_norm is not None or not converged or clipped:
                terms = newton_terms(state, request, config, measured_grad=grad_norm, converged=converged,
                                      clipped=clipped)
            plan, sigmas = terms.plan, terms.sigmas
            cert = plan.certificate

            new = X.clone()
            if config.release == "average":
                new[:] = x_bar  # every client starts from x_s (the flood of every released model, counted below)
            floods: dict[int, Flood] = {}
            draws: dict[int, tuple[float, Tensor]] = {}
            for c, z in x_delta.items():
                s = sigmas[c]
                # a standard normal in torch's default dtype, scaled in the model's dtype, and no draw at
                # sigma = 0: the random stream (and the numbers) of every earlier run, float64 ones included
                unit = gaussian_noise(torch.empty(0, device=X.device), 1.0, generator, shape=(d,)).to(X.dtype) \
                    if s > 0 else torch.zeros_like(z)
                draws[c] = (s, unit)
                noise = unit * s
                msg = z + noise
                fl = flood(G, c)
                floods[c] = fl
                messages += fl.messages
                if callback is None:  # every client adds the same vector once: one update of all rows
                    new += weight * msg  # Algorithm 1 line 11, the requester included (self-delivery)
                for i, hop in sorted(fl.hops.items(), key=lambda kv: kv[1]) if callback is not None else ():
                    new[i] += weight * msg
                    emit(callback, "hop", hop, node=i, source=c)
                history.append({"client": c, "m": fractions[c][0], "n": fractions[c][1], "sigma": s,
                                "seconds": local_seconds.get(c, float("nan")),
                                "step_norm": float(z.norm()), "noise_norm": float(noise.norm()),
                                "messages": fl.messages, "hops": fl.rounds})
                emit(callback, "noise", len(history), node=c, sigma=s, step_norm=float(z.norm()),
                     noise_norm=float(noise.norm()))

            if config.release == "average":
                _trace_average(x_bar, x_delta, draws, weight, plan.point("newton.average"))
                messages += len(keep_rows) * flood(G_after, 0).messages  # one flood per released model
            if client_kind:
                new = new[keep_rows]
                fed_after = Federation(ds, tuple(fed.client_indices[i] for i in keep_rows), fed.scheme)
            else:
                fed_after = fed.without(request)
            ft_state = None
            if config.finetune_rounds:
                # Remark 1: standard D-PSGD on retained data only (post-processing of the certified output)
                ft_state = run_gossip(flat, fed_after, G_after, replace(train_cfg, rounds=config.finetune_rounds),
                                      generator=generator, init=new, callback=callback, progress=progress)
                new = ft_state.params
                evals += ft_state.cost.grad_evals
                messages += ft_state.cost.messages
        # a reused step still costs its solve: the stored solve time replaces the lookup's
        seconds = sw.seconds + (step.seconds if step.cached else 0.0)
        cost = Cost(grad_evals=evals, messages=messages, seconds=seconds)
        # requesters compute their corrections in parallel on their own devices: the network waits for the
        # slowest one, not for the sum this single-process simulation spends
        par = (seconds - sum(local_seconds.values()) + max(local_seconds.values())) if local_seconds else seconds
        train_idx = np.sort(np.concatenate([np.asarray(ix) for ix in fed_after.client_indices]))
        extras = {**state.extras, **(ft_state.extras if ft_state is not None else {})}
        new_state = state.replace(params=new, federation=fed_after, network=G_after, train_indices=train_idx,
                                  extras=extras)
        emit(callback, "done", 0, messages=messages, grad_evals=evals)
        return Result(params=new, certificate=cert, history=history, cost=cost,
                      extras={"state": new_state, "floods": floods, "x_delta": x_delta, "sigmas": sigmas,
                              "weight": weight, "grad_norm": grad_norm, "clipped": clipped,
                              "start": x_bar, "constants": constants, "parallel_seconds": par, "step_cached": step.cached,
                              "removed_client": request.client if client_kind else None})

    def certify(self, state: TrainedState, request: Request, config: NewtonConfig = NewtonConfig()) -> Plan:
        """The certificate and noise point of :meth:`unlearn` (:func:`~.plan.newton_plan`), before the Newton step.

        Computed from the request, the federation and the model's constants with the run checks taken as
        passed. :meth:`unlearn` recomputes it with what the run measured, which withdraws or weakens it: a
        measured ``||grad f(x_s)||`` above ``grad_tol`` withdraws it (``mode="none"``, the noise stays
        calibrated to ``grad_tol``); an unconverged CG solve or a clipped correction makes the step
        approximate, so only the first-order sensitivity holds (the noise is recalibrated to it). The issued
        certificate also records the measured gradient in ``constants["measured_grad"]``.

        Parameters
        ----------
        state : TrainedState
            The trained model.
        request : Request
            What to forget.
        config : NewtonConfig, optional
            The run's settings (default ``NewtonConfig()``).

        Returns
        -------
        Plan
            As :func:`~unlearnkit.methods.newton.plan.newton_plan`.

        References
        ----------
        .. [1] H. Wu, Y. Tao, A. Zhou, S. Chen, F. Dressler, D. Yu, "Certified Unlearning in Decentralized Federated
           Learning", arXiv 2601.06436, 2026, Theorem 1, Lemma 3 and Algorithm 1.
        """
        return newton_plan(state, request, config)

    def unlearn_sequence(self, state: TrainedState, requests: Sequence[Request],
                         config: NewtonConfig = NewtonConfig(), *, generator: torch.Generator,
                         callback: Optional[Callback] = None, progress: bool = False) -> list[Result]:
        """Serve requests one after another (Fig. 1: three sequential requests), each from the state the previous
        one left (current ``n_c``, current model; digest P17). Each result carries its own certificate."""
        out = []
        for req in requests:
            res = self.unlearn(state, req, config, generator=generator, callback=callback, progress=progress)
            out.append(res)
            state = res.extras["state"]
        return out
