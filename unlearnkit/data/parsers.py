"""Parsers for MNIST's IDX files and CIFAR-10's python batches, which refuse malformed input and never run code.

Every malformed input (not gzip, truncated, a bad header, a folder where a file should be, a pickle that is
not a CIFAR batch, wrong shapes or types, labels out of range, counts that differ) raises one
:class:`DatasetCorruptError` whose message names the file and what is wrong. CIFAR-10's batches are pickles:
they are read with :class:`SafeUnpickler`, which admits only the three numpy globals an array needs, so a
crafted archive cannot execute code on load.
"""

from __future__ import annotations

import gzip
import math
import os
import pickle
import stat
import struct
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np


class DatasetCorruptError(ValueError):
    """A dataset file is malformed: its message names the file and what is wrong (re-download it)."""


def _reconstruct():
    try:  # numpy >= 2
        from numpy._core.multiarray import _reconstruct as fn
    except ImportError:  # pragma: no cover - numpy 1.x
        from numpy.core.multiarray import _reconstruct as fn
    return fn


# (module, name) -> the object; resolved here, so find_class never imports anything a pickle names
_ALLOWED = {
    ("numpy.core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy._core.multiarray", "_reconstruct"): _reconstruct,
    ("numpy", "ndarray"): lambda: np.ndarray,
    ("numpy", "dtype"): lambda: np.dtype,
}


class SafeUnpickler(pickle.Unpickler):
    """An unpickler that admits only numpy's array reconstruction (``_reconstruct``, ``ndarray``, ``dtype``).

    Any other global (``os.system``, ``builtins.eval``, ...) raises :class:`DatasetCorruptError` naming the
    file and the refused global, before anything is called.
    """

    def __init__(self, file: BinaryIO, *, source: str = "<pickle>", **kwargs: Any) -> None:
        super().__init__(file, **kwargs)
        self.source = source

    def find_class(self, module: str, name: str) -> Any:
        resolve = _ALLOWED.get((module, name))
        if resolve is None:
            raise DatasetCorruptError(
                f"{self.source}: refused to load the global {module}.{name} (a CIFAR-10 batch needs only numpy's "
                "array reconstruction; this file is corrupt or crafted, do not use it)")
        return resolve()

    def persistent_load(self, pid: Any) -> Any:
        raise DatasetCorruptError(f"{self.source}: refused a persistent id in the pickle (not a CIFAR-10 batch)")


def check_labels(source: str, labels: np.ndarray, n: int, n_classes: int = 10) -> np.ndarray:
    """Labels as int64 after checking they are 1-D integers in ``0..n_classes-1``, one per image (``n``)."""
    labels = np.asarray(labels)
    if labels.dtype.kind not in "iu" or labels.ndim != 1:
        raise DatasetCorruptError(f"{source}: labels must be a 1-D array of integers, got dtype {labels.dtype} "
                                  f"and shape {labels.shape}")
    if labels.shape[0] != n:
        raise DatasetCorruptError(f"{source}: {labels.shape[0]} labels for {n} images (the counts must match)")
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise DatasetCorruptError(f"{source}: labels must lie in 0..{n_classes - 1}, found "
                                  f"{int(labels.min())}..{int(labels.max())}")
    return labels.astype(np.int64)


# --------------------------------------------------------------------------------------------------------
# IDX (MNIST)
# --------------------------------------------------------------------------------------------------------

_IDX_DTYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: np.dtype(">i2"), 0x0C: np.dtype(">i4"),
               0x0D: np.dtype(">f4"), 0x0E: np.dtype(">f8")}


#: The most data bytes an IDX file may declare (MNIST's largest file holds 47 MB): a header or a gzip stream
#: asking for more is refused before it is read, so a crafted file cannot exhaust the memory.
IDX_MAX_BYTES = 64 * 1024 ** 2


def _open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading after checking it is a regular file (a pipe or device is never read)."""
    if path.is_dir():
        raise DatasetCorruptError(f"{path} is a folder, not a file: put the dataset's file there")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))   # a FIFO must not block the open
    except OSError as exc:
        raise DatasetCorruptError(f"{path} could not be read ({exc})") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise DatasetCorruptError(f"{path} is not a regular file (a pipe, device or socket): put the dataset's "
                                  "file there")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _read_idx_stream(fh: BinaryIO, path: Path, raw_size: int | None) -> np.ndarray:
    head = fh.read(4)
    if len(head) < 4 or head[0] != 0 or head[1] != 0:
        raise DatasetCorruptError(f"{path} is not an IDX file (bad magic number)")
    code, ndim = head[2], head[3]
    if code not in _IDX_DTYPES:
        raise DatasetCorruptError(f"{path}: unknown IDX type code 0x{code:02x} (valid: "
                                  f"{', '.join(f'0x{c:02x}' for c in _IDX_DTYPES)})")
    dims_raw = fh.read(4 * ndim)
    if len(dims_raw) < 4 * ndim:
        raise DatasetCorruptError(f"{path}: truncated header ({ndim} dimensions need {4 + 4 * ndim} bytes, "
                                  f"the file holds {4 + len(dims_raw)})")
    dims = struct.unpack(f">{ndim}I", dims_raw)
    dtype = np.dtype(_IDX_DTYPES[code])
    expected = math.prod(dims)
    n_bytes = expected * dtype.itemsize
    # an empty axis still needs every other axis representable: the largest array the limit could hold
    if n_bytes > IDX_MAX_BYTES or math.prod(d for d in dims if d) * dtype.itemsize > IDX_MAX_BYTES:
        raise DatasetCorruptError(f"{path}: header says {dims} ({n_bytes} bytes), over the limit of "
                                  f"{IDX_MAX_BYTES} bytes an IDX file may hold")
    if raw_size is not None and raw_size - (4 + 4 * ndim) != n_bytes:   # uncompressed: checked before reading
        held = raw_size - (4 + 4 * ndim)
        raise DatasetCorruptError(f"{path}: header says {dims} ({expected} values) but the file holds "
                                  f"{held // dtype.itemsize}" + (" (truncated)" if held < n_bytes else ""))
    body = fh.read(n_bytes + 1)                  # at most one byte past the declared size, whatever follows
    if len(body) != n_bytes:
        held = (f"{len(body) // dtype.itemsize} (truncated)" if len(body) < n_bytes
                else "more data than that (not read further)")
        raise DatasetCorruptError(f"{path}: header says {dims} ({expected} values) but the file holds {held}")
    data = np.frombuffer(body, dtype=dtype)
    return data.reshape(dims).astype(dtype.newbyteorder("="))


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Parse an IDX file (optionally gzip-compressed), the format of MNIST's files.

    The header is two zero bytes, a type code, the number of dimensions, then one big-endian uint32 per
    dimension; the data follow in C order. Raises :class:`DatasetCorruptError` on anything else, on a path
    that is not a regular file, and on a file that declares or holds more than :data:`IDX_MAX_BYTES` (the
    gzip stream is decompressed only up to one byte past the size its header declares).
    """
    path = Path(path)
    with _open_regular(path) as raw:
        try:
            if path.suffix == ".gz":
                with gzip.GzipFile(fileobj=raw, mode="rb") as fh:
                    return _read_idx_stream(fh, path, None)
            return _read_idx_stream(raw, path, os.fstat(raw.fileno()).st_size)
        except gzip.BadGzipFile as exc:
            raise DatasetCorruptError(f"{path} is not a gzip file ({exc}): re-download it") from None
        except EOFError:
            raise DatasetCorruptError(f"{path} is truncated (the gzip stream ends early): re-download it") from None
        except zlib.error as exc:
            raise DatasetCorruptError(f"{path} is a damaged gzip file ({exc}): re-download it") from None
        except OSError as exc:
            raise DatasetCorruptError(f"{path} could not be read ({exc})") from None


# --------------------------------------------------------------------------------------------------------
# CIFAR-10 python batches
# --------------------------------------------------------------------------------------------------------

_PICKLE_ERRORS = (pickle.UnpicklingError, EOFError, AttributeError, TypeError, IndexError, KeyError, struct.error,
                  UnicodeDecodeError, OverflowError, MemoryError, ImportError, ValueError)


def read_cifar10_batch(fileobj: BinaryIO, *, source: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Parse one pickled CIFAR-10 python batch: ``(images (n, 3, 32, 32) uint8, labels (n,) int64)``.

    The pickle is read with :class:`SafeUnpickler` (no code runs); ``source`` names the file in errors.
    """
    source = source or str(getattr(fileobj, "name", "<CIFAR-10 batch>"))
    try:
        batch = SafeUnpickler(fileobj, source=source, encoding="bytes").load()
    except DatasetCorruptError:
        raise
    except _PICKLE_ERRORS as exc:
        raise DatasetCorruptError(f"{source} is not a readable CIFAR-10 batch (not a pickle, or truncated: "
                                  f"{type(exc).__name__}: {exc})") from None
    if not isinstance(batch, dict):
        raise DatasetCorruptError(f"{source} is not a CIFAR-10 batch: expected a dict, got {type(batch).__name__}")
    data = batch.get(b"data", batch.get("data"))
    labels = batch.get(b"labels", batch.get("labels"))
    if data is None or labels is None:
        raise DatasetCorruptError(f"{source} is not a CIFAR-10 batch: it has no 'data' and 'labels' entries")
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8:
        kind = f"an array of {data.dtype}" if isinstance(data, np.ndarray) else type(data).__name__
        raise DatasetCorruptError(f"{source}: 'data' must be a uint8 array, got {kind}")
    if not ((data.ndim == 2 and data.shape[1] == 3072) or (data.ndim == 4 and data.shape[1:] == (3, 32, 32))):
        raise DatasetCorruptError(f"{source}: 'data' must have shape (n, 3072) or (n, 3, 32, 32), got {data.shape}")
    if isinstance(labels, (list, tuple)):
        if any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in labels):
            raise DatasetCorruptError(f"{source}: 'labels' must be a list of integers, got other values in it")
        if any(not 0 <= int(v) < 10 for v in labels):
            raise DatasetCorruptError(f"{source}: labels must lie in 0..9, found {min(labels)}..{max(labels)}")
        labels = np.asarray(labels, dtype=np.int64).reshape(len(labels))
    elif not isinstance(labels, np.ndarray):
        raise DatasetCorruptError(f"{source}: 'labels' must be a list of integers, got {type(labels).__name__}")
    return data.reshape(-1, 3, 32, 32), check_labels(source, labels, data.shape[0])

