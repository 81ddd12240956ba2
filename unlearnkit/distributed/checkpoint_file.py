"""One rank's checkpoint file of a resumable walk: written atomically, read with the safe loader, validated.

A checkpoint holds only what ``torch.load(weights_only=True)`` accepts (tensors, ints, floats, strings, lists,
dicts and ``None``; a generator state is its ``uint8`` tensor), so a crafted file cannot run code when a walk
resumes from it. Beside the state it records who wrote it (``world_size``, ``rank``, ``hop``, ``seed``), a
hash of the run's configuration (route, world size, seed, shape and dtype of the token) and a SHA-256 of
its content. :func:`read_checkpoint` checks all of it and raises :class:`CheckpointError`, naming the file,
the flag that asked for it and what is wrong, for a truncated or foreign file, a missing or extra key, a
wrong shape or dtype, a NaN or infinite parameter, a changed checksum or another run's configuration.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Sequence

import torch
from torch import Tensor


#: The layout version of a checkpoint file; a file of another version is refused.
CHECKPOINT_FORMAT = 1
#: The largest checkpoint file read (bytes): far above a walk's state, far below the machine's memory.
MAX_CHECKPOINT_BYTES = 2 * 1024 ** 3
_KEYS = ("format", "world_size", "rank", "hop", "seed", "config", "route", "theta", "noise", "hop_state",
         "hops", "log", "checksum")
_MESSAGE = {"kind": str, "direction": str, "src": int, "dst": int, "step": int, "nbytes": int, "time": float}


class CheckpointError(ValueError):
    """A checkpoint file cannot be resumed from; the message names the file, the flag and the problem."""


@dataclass(frozen=True)
class RunIdentity:
    """What a checkpoint must agree with to be resumed by this rank: the run's route, world size and seed,
    this rank, and the shape and dtype of the token ``theta``."""

    route: tuple[int, ...]
    world_size: int
    rank: int
    seed: int
    shape: tuple[int, ...]
    dtype: str

    def config_hash(self) -> str:
        """SHA-256 of the configuration every rank shares (route, world size, seed, token shape and dtype)."""
        text = json.dumps({"route": list(self.route), "world_size": self.world_size, "seed": self.seed,
                           "shape": list(self.shape), "dtype": self.dtype}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()


def _checksum(state: dict[str, Any]) -> str:
    """SHA-256 over every field but ``checksum``: tensors by dtype, shape and bytes, the rest as JSON."""
    h = hashlib.sha256()
    for key in _KEYS[:-1]:
        value = state.get(key)
        h.update(key.encode())
        if isinstance(value, Tensor):
            t = value.detach().cpu().contiguous()
            h.update(f"{t.dtype} {tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            h.update(json.dumps(value, sort_keys=True, default=repr).encode())
    return h.hexdigest()


def write_checkpoint(path: str | os.PathLike, who: RunIdentity, *, hop: int, theta: Optional[Tensor],
                     noise: Tensor, hop_state: Optional[Tensor], hops: Sequence[int],
                     log: Sequence[dict[str, Any]]) -> Path:
    """Write one rank's state at ``hop`` to ``path`` (a temporary file, then an atomic rename); return it."""
    state: dict[str, Any] = {
        "format": CHECKPOINT_FORMAT, "world_size": who.world_size, "rank": who.rank, "hop": int(hop),
        "seed": who.seed, "config": who.config_hash(), "route": list(who.route),
        "theta": None if theta is None else theta.detach().cpu().clone(),
        "noise": noise.detach().cpu().to(torch.uint8).clone(),
        "hop_state": None if hop_state is None else hop_state.detach().cpu().clone(),
        "hops": [int(t) for t in hops], "log": [dict(m) for m in log]}
    state["checksum"] = _checksum(state)
    final = Path(path)
    tmp = final.with_name(final.name + f".tmp{os.getpid()}")
    try:
        torch.save(state, tmp)
        os.replace(tmp, final)   # a crash leaves the old file or the new one, never half of one
    finally:
        tmp.unlink(missing_ok=True)
    return final


def _load(path: Path, flag: str) -> Any:
    where = f"checkpoint {path} (asked for by {flag})"
    try:
        st = os.stat(path)
    except OSError as exc:
        raise CheckpointError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise CheckpointError(f"{where} is not a regular file; remove it or start without {flag}")
    if st.st_size > MAX_CHECKPOINT_BYTES:
        raise CheckpointError(f"{where} is {st.st_size} bytes, over the {MAX_CHECKPOINT_BYTES}-byte limit of "
                              "a checkpoint; it was not written by a resumable walk")
    try:
        with warnings.catch_warnings():   # a foreign pickle protocol: refused below or loaded, either way quietly
            warnings.simplefilter("ignore")
            return torch.load(path, map_location="cpu", weights_only=True)
    except pickle.UnpicklingError as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(f"{where} holds objects the safe loader refuses (only tensors, numbers, strings, "
                              f"lists and dicts may appear; nothing in it was run): {first}") from None
    except Exception as exc:  # noqa: BLE001 - torch's loader raises many kinds on a damaged file
        raise CheckpointError(f"{where} is truncated or not a checkpoint ({type(exc).__name__}); delete it to "
                              f"fall back to an earlier one, or start without {flag}") from None


def _expect(cond: bool, where: str, what: str) -> None:
    if not cond:
        raise CheckpointError(f"{where}: {what}")


def _check_tensor(where: str, name: str, value: Any, *, dtype: Optional[torch.dtype] = None,
                  shape: Optional[tuple[int, ...]] = None, dims: Optional[int] = None) -> None:
    _expect(isinstance(value, Tensor), where, f"{name} is {type(value).__name__}, expected a tensor")
    if dtype is not None:
        _expect(value.dtype == dtype, where, f"{name} has dtype {value.dtype}, expected {dtype}")
    if shape is not None:
        _expect(tuple(value.shape) == shape, where, f"{name} has shape {tuple(value.shape)}, expected {shape}")
    if dims is not None:
        _expect(value.dim() == dims, where, f"{name} has {value.dim()} dimensions, expected {dims}")
    if value.is_floating_point() or value.is_complex():
        bad = int((~torch.isfinite(value)).sum())
        _expect(bad == 0, where, f"{name} holds {bad} NaN or infinite values of {value.numel()}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def read_checkpoint(path: str | os.PathLike, who: RunIdentity, hop: int, *, flag: str = "--resume",
                    noise_bytes: Optional[int] = None) -> dict[str, Any]:
    """Load ``path`` with the safe loader and check it is ``who``'s state at ``hop``; return the state dict.

    ``noise_bytes``: the length of this rank's noise-generator state, when known. Raises
    :class:`CheckpointError` (naming ``path``, ``flag`` and the mismatch) when anything does not fit.
    """
    path = Path(path)
    state = _load(path, flag)
    where = f"checkpoint {path} (asked for by {flag})"
    _expect(isinstance(state, dict), where, f"holds a {type(state).__name__}, expected a dict")
    missing, extra = [k for k in _KEYS if k not in state], sorted(map(str, set(state) - set(_KEYS)))
    _expect(not missing and not extra, where, f"missing keys {missing}, unexpected keys {extra}; expected "
                                              f"exactly {list(_KEYS)}")
    _expect(state["format"] == CHECKPOINT_FORMAT, where,
            f"format={state['format']!r}, expected {CHECKPOINT_FORMAT}")
    for key in ("world_size", "rank", "hop", "seed"):
        _expect(_is_int(state[key]), where, f"{key}={state[key]!r} is not an integer")
    _expect(state["world_size"] == who.world_size, where,
            f"written by a run of world size {state['world_size']}, but this run has world size "
            f"{who.world_size}; resume with {state['world_size']} ranks or start without {flag}")
    _expect(state["rank"] == who.rank, where, f"written by rank {state['rank']}, read by rank {who.rank}")
    _expect(state["hop"] == hop, where, f"records hop {state['hop']}, but its name says hop {hop}")
    _expect(state["seed"] == who.seed, where, f"written with seed={state['seed']}, this run has seed={who.seed}")
    _expect(isinstance(state["route"], list) and all(_is_int(v) for v in state["route"]), where,
            "route is not a list of integers")
    _expect(state["route"] == list(who.route) and state["config"] == who.config_hash(), where,
            f"written by another run (route of {len(state['route'])} hops, config hash "
            f"{str(state['config'])[:12]}); this run has a route of {len(who.route)} hops, config hash "
            f"{who.config_hash()[:12]}, world size {who.world_size}, seed {who.seed}")
    _expect(state["checksum"] == _checksum(state), where, "the checksum does not match the content (the file "
                                                          "was changed after it was written)")
    _expect(1 <= hop < len(who.route) + 1, where, f"hop={hop} is outside [1, {len(who.route)}]")
    holder = who.route[hop - 1] == who.rank
    if holder:
        _check_tensor(where, "theta", state["theta"], dtype=getattr(torch, who.dtype), shape=who.shape)
    else:
        _expect(state["theta"] is None, where, f"holds a token, but rank {who.rank} did not run hop {hop - 1}")
    _check_tensor(where, "noise", state["noise"], dtype=torch.uint8, dims=1)
    if noise_bytes is not None:
        _expect(state["noise"].numel() == noise_bytes, where,
                f"noise state has {state['noise'].numel()} bytes, expected {noise_bytes}")
    if state["hop_state"] is not None:
        _check_tensor(where, "hop_state", state["hop_state"], dtype=torch.uint8, dims=1)
    mine = [t for t in range(hop) if who.route[t] == who.rank]
    _expect(state["hops"] == mine, where, f"lists hops {state['hops'][:10]}, expected this rank's {mine[:10]}")
    _expect(isinstance(state["log"], list), where, "log is not a list")
    for i, m in enumerate(state["log"]):
        ok = isinstance(m, dict) and set(m) == set(_MESSAGE) and all(
            isinstance(m[k], t) and not isinstance(m[k], bool) for k, t in _MESSAGE.items())
        _expect(ok, where, f"log entry {i} is not a message {sorted(_MESSAGE)}: {m!r:.120}")
    return state
