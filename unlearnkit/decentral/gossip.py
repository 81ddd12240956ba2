"""D-PSGD: decentralized SGD with parameter gossip, every client simulated at once.

Digest 001, section 2.1 (Lian et al. 2017, the training that the Newton/Fisher paper unlearns from). In
stacked form, with ``Theta`` the ``(N, d)`` matrix of client parameters and ``G`` their stochastic
gradients,

    ``order="dpsgd"``:  Theta <- W @ Theta - lr * G(Theta)      (gradient at the pre-mix model, Algorithm 0)
    ``order="atc"``:    Theta <- W @ (Theta - lr * G(Theta))    (adapt-then-combine)

With ``local_steps = s > 1`` the client first takes ``s`` SGD steps, ``Y = sgd^s(Theta)``, and the
update is ``W @ Theta - (Theta - Y)`` ("dpsgd") or ``W @ Y`` ("atc"); ``s = 1`` gives the lines above.
The digest's proposal for "one local epoch per round" is exactly this with ``s`` = batches per epoch.

Peers (decentralizepy, BlueFog; ``research/peers.md`` B.3) run one process per client and exchange models
over ZMQ or MPI. Here the whole network is one ``(N, d)`` tensor: all local gradients come from one
``torch.func.vmap`` call with each client's own minibatch, and mixing is one (dense or sparse) matmul, on
CPU or GPU. :func:`gossip_step_loop` is the same maths client by client, kept as the reference the
vectorised engine is tested against and benchmarked with (``python -m unlearnkit bench gossip``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import torch
from torch import Tensor
from tqdm.auto import tqdm

from .._validate import check_choice, check_finite_params, check_generator, check_int, check_positive
from ..core import MAX_STEPS, Callback, Cost, Stopwatch, TrainedState, emit
from ..privacy.trace import flow
from ..graphs.mixing import MIXING_RULES
from ._engine import (ClientSampler, MixingSource, batched_loss_and_grad, client_indices_of, consensus_distance,
                      init_stack)


@dataclass(frozen=True, kw_only=True)
class GossipConfig:
    """D-PSGD settings.

    Attributes
    ----------
    rounds: communication rounds (>= 1).
    lr: step size (> 0).
    batch_size: per-client minibatch size, drawn with replacement from the client's data.
    local_steps: SGD steps each client takes per round (>= 1).
    order: ``"dpsgd"`` (gradient at the pre-mix model, Lian et al.) or ``"atc"`` (adapt then combine).
    weight_decay: L2 weight added to every client's loss (``weight_decay / 2 * ||theta||^2``).
    rule: mixing rule used when the network is a graph or a schedule.
    sparse: store ``W`` sparse (worth it for large sparse graphs).
    eval_every: evaluate test accuracy of the network average every this many rounds (0 = never).
    """

    rounds: int
    lr: float
    batch_size: int = 32
    local_steps: int = 1
    order: str = "dpsgd"
    weight_decay: float = 0.0
    rule: str = "metropolis"
    sparse: bool = False
    eval_every: int = 0

    def __post_init__(self) -> None:
        check_int("rounds", self.rounds, low=1, high=MAX_STEPS)
        check_positive("lr", self.lr)
        check_int("batch_size", self.batch_size, low=1)
        check_int("local_steps", self.local_steps, low=1, high=MAX_STEPS)
        check_choice("order", self.order, ("dpsgd", "atc"))
        check_positive("weight_decay", self.weight_decay, allow_zero=True)
        check_choice("rule", self.rule, MIXING_RULES)
        check_int("eval_every", self.eval_every, low=0)


def _local_sgd(flat: Any, theta: Tensor, batches: list[tuple[Tensor, Tensor]], lr: float, wd: float):
    losses = []
    for xs, ys in batches:
        loss, g = batched_loss_and_grad(flat, theta, xs, ys, weight_decay=wd)
        theta = theta - lr * g
        losses.append(loss)
    return theta, torch.stack(losses).mean(0)


def gossip_step(flat: Any, thetas: Tensor, batches: list[tuple[Tensor, Tensor]], W: Tensor, *, lr: float,
                order: str = "dpsgd", weight_decay: float = 0.0) -> tuple[Tensor, Tensor]:
    """One D-PSGD round for all clients at once (vectorised).

    Parameters
    ----------
    thetas: ``(N, d)`` client parameters.
    batches: ``local_steps`` pairs ``(xs, ys)`` with ``xs`` of shape ``(N, b, *input_shape)``.
    W: ``(N, N)`` mixing matrix (dense or sparse tensor).

    Returns
    -------
    (new_thetas, losses): the ``(N, d)`` parameters after the round and each client's mean minibatch loss.
    """
    y, losses = _local_sgd(flat, thetas, batches, lr, weight_decay)
    if order == "atc":
        return MixingSource.mix(W, y), losses
    return MixingSource.mix(W, thetas) - (thetas - y), losses


def gossip_step_loop(flat: Any, thetas: Tensor, batches: list[tuple[Tensor, Tensor]], W: Any, *, lr: float,
                     order: str = "dpsgd", weight_decay: float = 0.0) -> tuple[Tensor, Tensor]:
    """The same round as :func:`gossip_step`, one client at a time, as a per-process simulator would do it:
    each client computes its own gradient, then averages the vectors it receives from its neighbours.
    Reference implementation for tests and the benchmark; use :func:`gossip_step` for real work."""
    Wd = W.to_dense() if getattr(W, "layout", torch.strided) != torch.strided else torch.as_tensor(W)
    Wn = Wd.detach().cpu().numpy()
    n = thetas.shape[0]
    ys, losses = [], []
    for i in range(n):
        yi, li_sum = thetas[i], 0.0
        for xs, yb in batches:
            li, gi = flat.value_and_grad(yi, xs[i], yb[i], weight_decay=weight_decay)
            yi = yi - lr * gi
            li_sum = li_sum + li
        ys.append(yi)
        losses.append(li_sum / len(batches))
    src = ys if order == "atc" else [thetas[j] for j in range(n)]
    out = []
    for i in range(n):
        acc = torch.zeros_like(thetas[i])
        for j in np.flatnonzero(Wn[i]).tolist():
            # a Python float holds the float32/float64 weight exactly: same product as the 0-d tensor, cheaper
            acc = acc + float(Wn[i, j]) * src[j]
        out.append(acc if order == "atc" else acc - (thetas[i] - ys[i]))
    return torch.stack(out), torch.stack(losses)


def run_gossip(flat: Any, federation: Any, network: Any, config: GossipConfig, *, generator: torch.Generator,
               init: Optional[Tensor] = None, callback: Optional[Callback] = None, progress: bool = False,
               engine: str = "vectorized") -> TrainedState:
    """Train every client by D-PSGD over ``network`` (digest 001, Algorithm 0).

    Parameters
    ----------
    flat: the model's :class:`~unlearnkit.models.FlatParams` view.
    federation: a :class:`~unlearnkit.data.Federation` (``.dataset``, ``.client_indices``).
    network: a graph, a fixed ``W``, a :class:`~unlearnkit.graphs.DynamicTopology`, a list of ``W_t`` or
        a callable ``t -> W_t`` (see :class:`~unlearnkit.decentral._engine.MixingSource`).
    config: :class:`GossipConfig`.
    generator: the ``torch.Generator`` every minibatch is drawn from.
    init: ``(d,)`` shared start (default ``flat.init()``) or ``(N, d)`` per-client starts.
    callback: receives ``Event("round", t, values={loss, consensus})`` after each round and
        ``Event("eval", t, values={accuracy, ...})`` at evaluations.
    engine: ``"vectorized"`` (default) or ``"loop"`` (the per-client reference; same minibatches).

    Returns
    -------
    TrainedState
        ``params`` is the final ``(N, d)`` stack; ``history`` has one dict per round (``round``, ``loss``
        = mean client minibatch loss, ``consensus``, and at evaluations ``accuracy`` of the network average
        and ``client_accuracy_mean`` / ``client_accuracy_min`` over clients; :func:`client_accuracies`
        gives the per-client vector); ``extras["client_losses"]`` is the ``(rounds, N)`` loss array and
        ``extras["mixing"]`` the :class:`MixingSource`.
    """
    if not isinstance(config, GossipConfig):
        raise ValueError(f"config must be a GossipConfig, got {type(config).__name__}")
    check_choice("engine", engine, ("vectorized", "loop"))
    check_generator(generator, where="run_gossip")
    dataset, client_idx = client_indices_of(federation)
    device = dataset.x_train.device
    n = len(client_idx)
    thetas = init_stack(flat, n, init, device)
    # W in the parameters' dtype: float64 parameters (exactness tests, Newton's oracle) must mix in float64
    mixing = MixingSource(network, rule=config.rule, sparse=config.sparse, device=device, dtype=thetas.dtype)
    if mixing.n != n:
        raise ValueError(f"the network has N={mixing.n} clients but the federation has {n}")
    sampler = ClientSampler(dataset, client_idx, config.batch_size, generator=generator)
    step = gossip_step if engine == "vectorized" else gossip_step_loop

    history: list[dict[str, float]] = []
    client_losses = np.zeros((config.rounds, n))
    messages = 0
    bar = None
    if progress:
        bar = tqdm(total=config.rounds, desc="D-PSGD", leave=False)
    flow("gossip.rounds", int(config.rounds))
    with Stopwatch() as sw:
        for t in range(config.rounds):
            batches = [sampler.sample()[:2] for _ in range(config.local_steps)]
            # a matrix kept sparse (millions of clients) runs through its kernel; otherwise the exact matmul
            W = mixing.kernel(t) if mixing.large and engine == "vectorized" else mixing.matrix(t)
            thetas, losses = step(flat, thetas, batches, W, lr=config.lr, order=config.order,
                                  weight_decay=config.weight_decay)
            thetas = thetas.detach()
            messages += mixing.messages(t)
            client_losses[t] = losses.detach().cpu().numpy()
            row = {"round": t + 1, "loss": float(client_losses[t].mean()), "consensus": consensus_distance(thetas)}
            if config.eval_every and ((t + 1) % config.eval_every == 0 or t + 1 == config.rounds):
                row.update(evaluate_params(flat, thetas, dataset))
                emit(callback, "eval", t + 1, **{k: v for k, v in row.items() if k != "round"})
            check_finite_params([row["loss"], row["consensus"]], where="run_gossip", setting=config, step=t + 1,
                                what="client losses or models")
            history.append(row)
            emit(callback, "round", t + 1, loss=row["loss"], consensus=row["consensus"])
            if bar is not None:
                bar.update(1)
                bar.set_postfix(loss=f"{row['loss']:.3f}")
    if bar is not None:
        bar.close()
    check_finite_params(thetas, where="run_gossip", setting=config, step=config.rounds)
    cost = Cost(grad_evals=config.rounds * config.local_steps * n * config.batch_size, messages=messages,
                seconds=sw.seconds)
    return TrainedState(flat=flat, params=thetas, dataset=dataset,
                        train_indices=np.sort(np.concatenate(client_idx)), config=config,
                        federation=federation, network=network, cost=cost, history=history,
                        extras={"client_losses": client_losses, "mixing": mixing})


def client_accuracies(flat: Any, thetas: Tensor, x: Tensor, y: Tensor) -> np.ndarray:
    """Test accuracy of every client's model, ``(N,)``."""
    with torch.no_grad():
        return torch.stack([(flat.predict(th, x) == y).float().mean() for th in thetas]).cpu().numpy()


def evaluate_params(flat: Any, thetas: Tensor, dataset: Any) -> dict[str, float]:
    with torch.no_grad():
        avg = (flat.predict(thetas.mean(0), dataset.x_test) == dataset.y_test).float().mean()
    per = client_accuracies(flat, thetas, dataset.x_test, dataset.y_test)
    return {"accuracy": float(avg), "client_accuracy_mean": float(per.mean()),
            "client_accuracy_min": float(per.min())}


def simulate_averaging(network: Any, values: Any, rounds: int, *, rule: str = "metropolis") -> np.ndarray:
    """Pure gossip averaging ``x <- W_t x`` of one number (or vector) per client, for pictures.

    Returns the ``(rounds + 1, N, ...)`` trajectory, row 0 being ``values``. Every row has the same mean
    (``W`` is doubly stochastic) and the spread shrinks like ``slem(W)^t``.
    """
    rounds = check_int("rounds", rounds, low=0)
    mixing = MixingSource(network, rule=rule, dtype=torch.float64)
    x = np.asarray(values, dtype=float)
    if x.shape[0] != mixing.n:
        raise ValueError(f"values has {x.shape[0]} entries but the network has N={mixing.n} clients")
    out = [x]
    for t in range(rounds):
        x = mixing.numpy(t) @ x
        out.append(x)
    return np.stack(out)
