"""Splitting a dataset among clients, forget requests, and a BadNets-style backdoor.

A :class:`Federation` is a list of index sets into the training split, one per client. Forget requests are
:class:`unlearnkit.core.Request` objects: some samples of one client, a whole class, or a whole
client.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Optional, Sequence

import numpy as np
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive, check_probability
from ..core import Request
from .datasets import Dataset


@dataclass(frozen=True)
class Federation:
    """Per-client index sets into ``dataset``'s training split (disjoint, covering what was assigned)."""

    dataset: Dataset
    client_indices: tuple[np.ndarray, ...]
    scheme: str = "iid"

    @property
    def n_clients(self) -> int:
        return len(self.client_indices)

    @property
    def sizes(self) -> np.ndarray:
        return np.array([len(ix) for ix in self.client_indices])

    def client_of(self, index: int) -> int:
        """The client holding training sample ``index``."""
        for c, ix in enumerate(self.client_indices):
            if np.isin(index, ix):
                return c
        raise ValueError(f"index={index} is not held by any client")

    def client_data(self, client: int) -> tuple[Tensor, Tensor]:
        check_int("client", client, low=0, high=self.n_clients - 1)
        return self.dataset.train_subset(self.client_indices[client])

    def label_histogram(self) -> np.ndarray:
        """``(n_clients, n_classes)`` counts, for plotting how non-IID the split is."""
        y = self.dataset.y_train.cpu().numpy()
        return np.stack([np.bincount(y[ix], minlength=self.dataset.n_classes) for ix in self.client_indices])

    def owners(self) -> Optional[np.ndarray]:
        """``(n_train,)`` int64: the client holding each training sample, ``-1`` for none; ``None`` when some
        sample is held by two clients (then only a per-client search answers). ``O(n_train)``, no loop over clients."""
        sizes = np.array([np.asarray(ix).size for ix in self.client_indices], dtype=np.int64)
        held = np.concatenate([np.asarray(ix, dtype=np.int64) for ix in self.client_indices]) if sizes.sum() else \
            np.empty(0, dtype=np.int64)
        n = max(int(self.dataset.n_train), int(held.max()) + 1 if held.size else 0)
        counts = np.bincount(held, minlength=n)
        if counts.size and counts.max() > 1:
            return None
        owner = np.full(n, -1, dtype=np.int64)
        owner[held] = np.repeat(np.arange(len(sizes), dtype=np.int64), sizes)
        return owner

    def without(self, request: Request) -> "Federation":
        """The federation after deleting the request's samples from every client (only the clients holding one
        are searched when every sample has one owner: a few requesters among ``10^5`` clients stay cheap)."""
        owner = self.owners()
        if owner is None:
            return Federation(self.dataset, tuple(request.retain(ix) for ix in self.client_indices), self.scheme)
        ids = np.asarray(request.indices, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < owner.size)]
        touched = set(np.unique(owner[ids]).tolist())
        return Federation(self.dataset, tuple(request.retain(ix) if c in touched else np.asarray(ix, dtype=np.int64)
                                              for c, ix in enumerate(self.client_indices)), self.scheme)

    def __repr__(self) -> str:
        return f"Federation({self.n_clients} clients, scheme={self.scheme!r}, sizes={self.sizes.tolist()})"


def partition(dataset: Dataset, n_clients: int, scheme: str = "iid", *, alpha: float = 0.5,
              shards_per_client: int = 2, seed: int = 0, min_size: int = 1) -> Federation:
    """Split the training set among ``n_clients`` clients.

    Parameters
    ----------
    scheme:
        ``"iid"`` (a random equal split), ``"dirichlet"`` (per class, proportions drawn from
        Dirichlet(alpha): small alpha = very non-IID; Hsu et al. 2019), or ``"shards"`` (sort by label, cut into
        ``n_clients * shards_per_client`` shards, give each client ``shards_per_client``; McMahan et al. 2017).
    alpha:
        Dirichlet concentration (> 0), used by ``"dirichlet"``.
    min_size:
        Every client gets at least this many samples (Dirichlet draws are repeated until it holds, up to 100
        tries).
    """
    n_clients = check_int("n_clients", n_clients, low=1, high=dataset.n_train)
    check_choice("scheme", scheme, ("iid", "dirichlet", "shards"))
    check_positive("alpha", alpha)
    check_int("shards_per_client", shards_per_client, low=1)
    rng = np.random.default_rng(seed)
    n = dataset.n_train
    y = dataset.y_train.cpu().numpy()
    if scheme == "iid":
        perm = rng.permutation(n)
        parts = np.array_split(perm, n_clients)
    elif scheme == "shards":
        n_shards = n_clients * shards_per_client
        if n_shards > n:
            raise ValueError(f"shards_per_client={shards_per_client} gives {n_shards} shards for only {n} samples")
        order = np.lexsort((rng.random(n), y))
        shards = np.array_split(order, n_shards)
        assign = rng.permutation(n_shards)
        parts = [np.concatenate([shards[s] for s in assign[c::n_clients]]) for c in range(n_clients)]
    else:
        for _ in range(100):
            parts_l: list[list[int]] = [[] for _ in range(n_clients)]
            for c in range(dataset.n_classes):
                idx = np.flatnonzero(y == c)
                rng.shuffle(idx)
                props = rng.dirichlet(np.full(n_clients, alpha))
                cuts = (np.cumsum(props) * len(idx)).astype(int)[:-1]
                for k, chunk in enumerate(np.split(idx, cuts)):
                    parts_l[k].extend(chunk.tolist())
            if min(len(p) for p in parts_l) >= min_size:
                break
        else:
            raise ValueError(f"alpha={alpha} is too small to give all {n_clients} clients >= {min_size} samples")
        parts = [np.array(p, dtype=np.int64) for p in parts_l]
    return Federation(dataset, tuple(np.sort(np.asarray(p, dtype=np.int64)) for p in parts), scheme)


def forget_samples(federation: Federation, client: int = 0, *, m: int | None = None, fraction: float | None = None,
                   seed: int = 0) -> Request:
    """Forget ``m`` random samples (or a ``fraction``) of ``client``'s data."""
    check_int("client", client, low=0, high=federation.n_clients - 1)
    held = federation.client_indices[client]
    if (m is None) == (fraction is None):
        raise ValueError("forget_samples: give exactly one of m or fraction")
    if fraction is not None:
        check_probability("fraction", fraction, allow_zero=False)
        m = max(1, int(round(fraction * len(held))))
    m = check_int("m", m, low=1, high=len(held))
    rng = np.random.default_rng(seed)
    return Request("samples", rng.choice(held, size=m, replace=False), client=client)


def forget_class(dataset: Dataset, label: int, indices: np.ndarray | None = None, *, client: int | None = None) -> Request:
    """Forget every training sample of class ``label`` (restricted to ``indices`` when given)."""
    check_int("label", label, low=0, high=dataset.n_classes - 1)
    y = dataset.y_train.cpu().numpy()
    pool = np.arange(dataset.n_train) if indices is None else np.asarray(indices)
    chosen = pool[y[pool] == label]
    if chosen.size == 0:
        raise ValueError(f"label={label} has no training samples among the given indices")
    return Request("class", chosen, client=client, label=int(label))


def forget_client(federation: Federation, client: int) -> Request:
    """Forget everything ``client`` holds (the client leaves)."""
    check_int("client", client, low=0, high=federation.n_clients - 1)
    return Request("client", federation.client_indices[client], client=client)


@dataclass(frozen=True)
class Backdoor:
    """A planted BadNets backdoor: the poisoned dataset and the triggered test set to measure its success."""

    dataset: Dataset
    indices: np.ndarray
    target: int
    x_test_triggered: Tensor
    y_test_triggered: Tensor
    patch: int
    value: float

    def request(self, client: int | None = None) -> Request:
        """The forget request that removes exactly the poisoned samples."""
        return Request("samples", self.indices, client=client)


def stamp_trigger(x: Tensor, patch: int, value: float) -> Tensor:
    """A copy of image batch ``x`` (n, C, H, W) with a ``patch x patch`` square of ``value`` in the
    bottom-right corner (Gu et al. 2017, BadNets)."""
    if x.dim() != 4:
        raise ValueError(f"stamp_trigger needs images shaped (n, C, H, W), got {tuple(x.shape)}")
    out = x.clone()
    out[..., -patch:, -patch:] = value
    return out


def add_backdoor(dataset: Dataset, indices: Sequence[int] | np.ndarray, *, target: int = 0, patch: int = 2,
                 value: float | None = None) -> Backdoor:
    """Stamp a trigger on the training samples ``indices`` and relabel them ``target``.

    ``indices`` are usually m samples of one client (``federation.client_indices[u][:m]``). The triggered
    test set holds every test image whose true label is not ``target``, triggered and labelled ``target``:
    the fraction the model classifies as ``target`` is the attack success rate. ``value`` defaults to the
    top of the dataset's public feature range (white; ``info["feature_range"]``), else the largest pixel
    value of the data.
    """
    if len(dataset.input_shape) != 3:
        raise ValueError(f"add_backdoor needs image data, got input_shape={dataset.input_shape}")
    check_int("target", target, low=0, high=dataset.n_classes - 1)
    h = min(dataset.input_shape[1:])
    check_int("patch", patch, low=1, high=h)
    idx = np.unique(np.asarray(indices, dtype=np.int64))
    if idx.size == 0 or idx[0] < 0 or idx[-1] >= dataset.n_train:
        raise ValueError(f"indices must be non-empty training indices in [0, {dataset.n_train - 1}]")
    if value is None:  # public when the loader records its range: the trigger does not read the training rows
        rng = (dataset.info or {}).get("feature_range")
        value = float(rng[1]) if rng is not None else float(dataset.x_train.max())
    value = float(value)
    x_tr = dataset.x_train.clone()
    y_tr = dataset.y_train.clone()
    t_idx = torch.as_tensor(idx, device=x_tr.device)
    x_tr[t_idx] = stamp_trigger(x_tr[t_idx], patch, value)
    y_tr[t_idx] = target
    keep = dataset.y_test != target
    x_trig = stamp_trigger(dataset.x_test[keep], patch, value)
    y_trig = torch.full((x_trig.shape[0],), target, dtype=torch.int64, device=x_trig.device)
    poisoned = dataset.with_train(x_tr, y_tr, backdoor={"target": target, "patch": patch, "n_poisoned": int(idx.size)})
    return Backdoor(poisoned, idx, target, x_trig, y_trig, patch, value)


def without_rows(dataset: Dataset, rows: Sequence[int]) -> Dataset:
    """``dataset`` with the training rows ``rows`` removed, the others in order: D minus D_f from raw data.

    ``info["row_ids"]`` keeps each remaining row's index in ``dataset`` (its identity across the two worlds).
    """

    keep = np.setdiff1d(np.arange(dataset.n_train), np.asarray(rows, dtype=np.int64))
    idx = torch.as_tensor(keep, device=dataset.x_train.device)
    ids = np.asarray((dataset.info or {}).get("row_ids", np.arange(dataset.n_train)))[keep]
    return replace(dataset, x_train=dataset.x_train[idx], y_train=dataset.y_train[idx],
                   info={**(dataset.info or {}), "row_ids": ids})


def renumbered(client_indices: Sequence[np.ndarray], rows: Sequence[int], n_train: int) -> tuple[np.ndarray, ...]:
    """Each client's remaining rows after ``rows`` are removed from ``n_train``, in the new numbering of
    :func:`without_rows` (every remaining row stays at its client; a client may end up empty)."""
    removed = np.asarray(rows, dtype=np.int64)
    keep = np.setdiff1d(np.arange(n_train), removed)
    return tuple(np.searchsorted(keep, np.setdiff1d(np.asarray(ix, dtype=np.int64), removed))
                 for ix in client_indices)

