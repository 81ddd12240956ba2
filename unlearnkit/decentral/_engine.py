"""Shared machinery of the decentralized simulators: per-client minibatches for all clients at once,
mixing matrices as torch tensors per round, a batched loss-and-gradient, the consensus distance.

Everything is vectorised over clients: parameters are one ``(N, d)`` tensor, a round's minibatches are one
``(N, b, *input_shape)`` tensor, and one ``torch.func.vmap`` call returns every client's loss and gradient.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Sequence

import networkx as nx
import numpy as np
import scipy.sparse as sp
import torch
from torch import Tensor
from torch.func import grad_and_value, vmap

from .._validate import check_int
from ..graphs.dynamic import DynamicTopology, StaticSchedule
from ..graphs.mixing import mixing_matrix, validate_mixing
from ..graphs.sparse import sparse_mixing_matrix
from ..graphs.topology import MAX_CLIENTS
from .mixer import GossipKernel


def client_indices_of(federation: Any, *, may_be_empty: Optional[int] = None) -> tuple[Any, list[np.ndarray]]:
    """``(dataset, client_indices)`` from a :class:`~unlearnkit.data.Federation` (or any object with
    ``.dataset`` and ``.client_indices``); only client ``may_be_empty`` (one excluded from a run) may hold
    no sample."""
    try:
        dataset, idx = federation.dataset, federation.client_indices
    except AttributeError:
        raise ValueError("federation must have .dataset and .client_indices (use unlearnkit.data.partition)") from None
    idx = [np.asarray(ix, dtype=np.int64) for ix in idx]
    if len(idx) < 2:
        raise ValueError(f"federation has {len(idx)} client(s): a network needs at least 2 (expected N >= 2)")
    for c, ix in enumerate(idx):
        if ix.size == 0 and c != may_be_empty:
            raise ValueError(f"client {c} holds no training samples; every client needs at least one")
    return dataset, idx


class ClientSampler:
    """Draws one minibatch per client, for all clients at once, with replacement.

    Each call consumes exactly one ``torch.rand((N, b))`` from ``generator``, whatever the client sizes, so two
    runs seeded alike see the same minibatches: the vectorised engine and the per-client loop, or an
    original run and a retrain run that ignores some client (coupled minibatches, digest 002 section 1.4).
    """

    def __init__(self, dataset: Any, client_indices: Sequence[np.ndarray], batch_size: int, *,
                 generator: torch.Generator) -> None:
        self.batch_size = check_int("batch_size", batch_size, low=1)
        if not isinstance(generator, torch.Generator):
            raise ValueError(f"generator must be a torch.Generator (unlearnkit.make_generator(seed)), "
                             f"got {type(generator).__name__}")
        self.generator = generator
        self.dataset = dataset
        self.device = dataset.x_train.device
        sizes = [len(ix) for ix in client_indices]
        self.n_clients = len(sizes)
        self.sizes = torch.tensor(sizes, dtype=torch.float64, device="cpu")  # CPU index tables: see sample()
        table = np.zeros((self.n_clients, max(sizes)), dtype=np.int64)
        for c, ix in enumerate(client_indices):
            table[c, :len(ix)] = ix
        self.table = torch.as_tensor(table, device="cpu")

    def sample_indices(self) -> Tensor:
        """``(N, b)`` training-set indices, row ``i`` drawn uniformly from client ``i``'s data."""
        r = torch.rand((self.n_clients, self.batch_size), generator=self.generator,
                       device=self.generator.device, dtype=torch.float64).cpu()
        local = torch.clamp((r * self.sizes[:, None]).long(), max=self.table.shape[1] - 1)
        return torch.gather(self.table, 1, local)

    def sample(self) -> tuple[Tensor, Tensor, Tensor]:
        """``(xs, ys, idx)`` with ``xs`` of shape ``(N, b, *input_shape)`` on the dataset's device."""
        idx = self.sample_indices()
        flat = idx.reshape(-1).to(self.device)
        xs = self.dataset.x_train[flat].reshape(self.n_clients, self.batch_size, *self.dataset.x_train.shape[1:])
        ys = self.dataset.y_train[flat].reshape(self.n_clients, self.batch_size)
        return xs, ys, idx


class MixingSource:
    """The mixing matrix of every round, as a torch tensor on the parameters' device.

    ``network`` may be a ``networkx.Graph`` (mixed with ``rule``), a fixed ``(N, N)`` array or tensor, a
    :class:`~unlearnkit.graphs.DynamicTopology` (``W_t = schedule.mixing(t, rule)``), a sequence of matrices
    (round ``t`` uses ``Ws[t % len(Ws)]``), or a callable ``t -> W``. Matrices are validated once when fixed,
    and per round otherwise (symmetric, doubly stochastic, non-negative; a round may be disconnected).
    ``sparse=True`` stores each matrix as sparse COO, so ``W @ Theta`` costs ``O(nnz * d)``.

    A fixed ``scipy.sparse`` matrix (:func:`~unlearnkit.graphs.sparse_mixing_matrix`), or a graph of more than
    ``MAX_CLIENTS`` clients with ``sparse=True``, stays sparse throughout (validated in ``O(nnz)``, never an
    ``N x N`` array): :meth:`numpy` returns it as CSR, :meth:`matrix` as a torch CSR tensor, and
    :meth:`kernel` gives the :class:`~unlearnkit.decentral.mixer.GossipKernel` that runs its rounds.
    """

    def __init__(self, network: Any, *, rule: str = "metropolis", sparse: bool = False,
                 device: torch.device | str = "cpu", dtype: torch.dtype = torch.float32,
                 require_connected: bool = True) -> None:
        self.rule = rule
        self.sparse = bool(sparse)
        self.device = torch.device(device)
        self.dtype = dtype
        self.schedule: DynamicTopology | None = None
        self._fn: Callable[[int], Any] | None = None
        self._fixed: Tensor | None = None
        self._fixed_np: Any = None
        self._kernel: GossipKernel | None = None
        if isinstance(network, nx.Graph) and self.sparse and network.number_of_nodes() > MAX_CLIENTS:
            self.schedule = StaticSchedule(network, require_connected=require_connected)
            self._set_fixed(sparse_mixing_matrix(network, rule=rule, require_connected=require_connected))
        elif isinstance(network, nx.Graph):
            self.schedule = StaticSchedule(network, require_connected=require_connected)
            self._set_fixed(mixing_matrix(network, rule, require_connected=require_connected))
        elif isinstance(network, DynamicTopology):
            self.schedule = network
            self._fn = lambda t: network.mixing(t, rule)
        elif callable(network):
            self._fn = network
        elif isinstance(network, (list, tuple)) or (hasattr(network, "ndim") and network.ndim == 3):
            mats = [validate_mixing(w, require_connected=False) for w in network]
            if not mats:
                raise ValueError("network: an empty sequence of mixing matrices")
            self._fn = lambda t: mats[t % len(mats)]
        else:
            self._set_fixed(validate_mixing(network, require_connected=require_connected))
        self.n = self._fixed_np.shape[0] if self._fixed_np is not None else self.numpy(0).shape[0]

    @property
    def static(self) -> bool:
        return self._fixed is not None

    @property
    def large(self) -> bool:
        """True when the fixed matrix is kept sparse (``scipy.sparse``) throughout."""
        return sp.issparse(self._fixed_np)

    def _to_torch(self, W: Any) -> Tensor:
        if sp.issparse(W):
            W = W.tocsr()
            with warnings.catch_warnings():  # "CSR support is in beta"
                warnings.simplefilter("ignore", UserWarning)
                return torch.sparse_csr_tensor(torch.as_tensor(W.indptr, dtype=torch.int64, device=self.device),
                                               torch.as_tensor(W.indices, dtype=torch.int64, device=self.device),
                                               torch.as_tensor(W.data, dtype=self.dtype, device=self.device),
                                               W.shape)
        T = torch.as_tensor(W, dtype=self.dtype, device=self.device)
        return T.to_sparse() if self.sparse else T

    def _set_fixed(self, W: np.ndarray) -> None:
        self._fixed_np = W
        self._fixed = self._to_torch(W)

    def numpy(self, t: int) -> Any:
        """Round ``t``'s matrix as a validated float64 array (CSR when kept sparse)."""
        if self._fixed_np is not None:
            return self._fixed_np
        return validate_mixing(self._fn(t), require_connected=False)

    def matrix(self, t: int) -> Tensor:
        """Round ``t``'s matrix as a (dense or sparse) tensor."""
        if self._fixed is not None:
            return self._fixed
        return self._to_torch(self.numpy(t))

    def messages(self, t: int) -> int:
        """Model-sized messages sent in round ``t``: one per ordered pair ``i != j`` with ``W_ij > 0``."""
        W = self.numpy(t)
        if sp.issparse(W):
            return int(np.count_nonzero(W.data) - np.count_nonzero(W.diagonal()))
        return int(np.count_nonzero(W) - np.count_nonzero(np.diag(W)))

    def kernel(self, t: int) -> GossipKernel:
        """Round ``t``'s mixing as a :class:`~unlearnkit.decentral.mixer.GossipKernel` (built once when fixed)."""
        if self._fixed_np is not None:
            if self._kernel is None:
                self._kernel = GossipKernel(self._fixed_np, device=self.device, dtype=self.dtype)
            return self._kernel
        return GossipKernel(self.numpy(t), device=self.device, dtype=self.dtype)

    @staticmethod
    def mix(W: Any, X: Tensor) -> Tensor:
        """``W @ X`` for a dense or sparse (COO, CSR) ``W`` or a :class:`~unlearnkit.decentral.mixer.GossipKernel`."""
        if isinstance(W, GossipKernel):
            return W(X)
        return torch.sparse.mm(W, X) if W.layout != torch.strided else W @ X


def batched_loss_and_grad(flat: Any, thetas: Tensor, xs: Tensor, ys: Tensor, *,
                          weight_decay: float = 0.0) -> tuple[Tensor, Tensor]:
    """Every client's minibatch loss ``(N,)`` and gradient ``(N, d)`` in one ``vmap`` call
    (the same maths as :meth:`~unlearnkit.models.FlatParams.batched_grad`, plus the losses)."""

    def one(t: Tensor, x: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
        return grad_and_value(lambda th: flat.loss(th, x, y, weight_decay=weight_decay))(t)

    g, v = vmap(one)(thetas, xs, ys)
    return v, g


def consensus_distance(thetas: Tensor) -> float:
    """``(1/N) sum_i ||theta_i - theta_bar||^2``: 0 exactly when all clients agree."""
    return float((thetas - thetas.mean(dim=0, keepdim=True)).pow(2).sum(dim=1).mean())


def init_stack(flat: Any, n: int, init: Tensor | None, device: torch.device) -> Tensor:
    """``(N, d)`` starting parameters: ``init`` broadcast when it is ``(d,)``, else checked; default
    ``flat.init()`` on every client (identical initialisation, digest 001 section 2.1)."""
    theta0 = flat.init() if init is None else init
    theta0 = theta0.detach().to(device)
    if theta0.ndim == 1:
        if theta0.shape[0] != flat.d:
            raise ValueError(f"init has {theta0.shape[0]} entries but the model has d={flat.d}")
        return theta0.expand(n, -1).clone()
    if theta0.shape != (n, flat.d):
        raise ValueError(f"init has shape {tuple(theta0.shape)}; expected ({flat.d},) or ({n}, {flat.d})")
    return theta0.clone()
