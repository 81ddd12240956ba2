"""Datasets: the bundled digits (default, offline), synthetic convex data, and MNIST / CIFAR-10 parsers.

Nothing downloads unless asked. ``load("mnist")`` and ``load("cifar10")`` read the standard files from a local
folder with our own parsers (no torchvision: it has no CPU build here) and download them only with
``download=True``; offline or with files missing they raise :class:`DatasetUnavailableError`, whose message
says where to put the files. Downloads are checked against the published MD5 digests; malformed files raise
:class:`~unlearnkit.data.parsers.DatasetCorruptError` naming the file and what is wrong.
"""

from __future__ import annotations

import hashlib
import math
import os
import tarfile
import urllib.request
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import Tensor

from .._validate import check_choice, check_int, check_positive, check_probability
from ..runtime import device as resolve_device
from .parsers import DatasetCorruptError, check_labels, read_cifar10_batch, read_idx


DATASETS = ("digits", "synthetic", "mnist", "cifar10")


class DatasetUnavailableError(RuntimeError):
    """A dataset's files are not on disk and downloading was not requested (or is impossible offline)."""


@dataclass(frozen=True)
class Dataset:
    """A train/test split as tensors.

    Attributes
    ----------
    x_train, x_test:
        Features, shape ``(n, *input_shape)``, float32.
    y_train, y_test:
        Integer labels, shape ``(n,)``, int64.
    n_classes:
        Number of classes (2 for the synthetic binary problem).
    input_shape:
        Shape of one example, e.g. ``(1, 8, 8)`` for digits, ``(dim,)`` for synthetic data.
    info:
        Provenance (source, normalisation, constants known analytically).
    """

    name: str
    x_train: Tensor
    y_train: Tensor
    x_test: Tensor
    y_test: Tensor
    n_classes: int
    input_shape: tuple[int, ...]
    info: dict = field(default_factory=dict, compare=False)

    @property
    def n_train(self) -> int:
        return int(self.x_train.shape[0])

    @property
    def n_test(self) -> int:
        return int(self.x_test.shape[0])

    @property
    def device(self) -> torch.device:
        return self.x_train.device

    def train_subset(self, indices: Sequence[int] | np.ndarray | Tensor) -> tuple[Tensor, Tensor]:
        """``(x, y)`` of the given training indices."""
        idx = torch.as_tensor(np.array(indices, dtype=np.int64), device=self.x_train.device)
        return self.x_train[idx], self.y_train[idx]

    def to(self, device) -> "Dataset":
        device = torch.device(device)
        return replace(self, x_train=self.x_train.to(device), y_train=self.y_train.to(device),
                       x_test=self.x_test.to(device), y_test=self.y_test.to(device))

    def with_train(self, x_train: Tensor, y_train: Tensor, **info) -> "Dataset":
        """A copy with a different training split (e.g. a poisoned one)."""
        return replace(self, x_train=x_train, y_train=y_train, info={**self.info, **info})

    def __repr__(self) -> str:
        return (f"Dataset({self.name!r}, train={self.n_train}, test={self.n_test}, "
                f"input_shape={self.input_shape}, n_classes={self.n_classes}, device={self.device})")


# --------------------------------------------------------------------------------------------------------
# Where files live
# --------------------------------------------------------------------------------------------------------

def data_root(root: str | os.PathLike | None = None) -> Path:
    """The folder for downloaded datasets: ``root``, else ``$UNLEARNKIT_DATA``, else ``~/.cache/unlearnkit``."""
    if root is not None:
        return Path(root).expanduser()
    env = os.environ.get("UNLEARNKIT_DATA")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "unlearnkit"


_MNIST_FILES = {
    "x_train": "train-images-idx3-ubyte.gz",
    "y_train": "train-labels-idx1-ubyte.gz",
    "x_test": "t10k-images-idx3-ubyte.gz",
    "y_test": "t10k-labels-idx1-ubyte.gz",
}
_MNIST_MIRROR = "https://ossci-datasets.s3.amazonaws.com/mnist/"
_CIFAR_ARCHIVE = "cifar-10-python.tar.gz"
_CIFAR_URL = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
# the published MD5 digests (torchvision's and the datasets' pages)
_MD5 = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
    _CIFAR_ARCHIVE: "c58f30108f718f92721af3b95e74349a",
}


def available(root: str | os.PathLike | None = None) -> dict[str, bool]:
    """Which datasets can be loaded right now without a download."""
    base = data_root(root)
    mnist = all((base / "mnist" / f).exists() for f in _MNIST_FILES.values())
    cifar = (base / "cifar10" / _CIFAR_ARCHIVE).exists() or (base / "cifar10" / "cifar-10-batches-py").is_dir()
    return {"digits": True, "synthetic": True, "mnist": mnist, "cifar10": cifar}


def _fetch_url(url: str, dest: Path) -> None:
    """Stream ``url`` into ``dest`` (the only function here that touches the network)."""
    with urllib.request.urlopen(url, timeout=30) as resp, open(dest, "wb") as fh:
        while chunk := resp.read(1 << 20):
            fh.write(chunk)


def _md5(path: Path) -> str:
    h = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def _download(url: str, dest: Path, md5: str) -> None:
    """Download ``url`` to ``dest`` and check its MD5 against the published ``md5``; a mismatch deletes it."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_suffix(dest.suffix + ".part")
    try:
        _fetch_url(url, tmp)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise DatasetUnavailableError(
            f"could not download {url} ({exc}). Are you offline? Put the file at {dest} by hand "
            "and call load(...) again without download=True."
        ) from None
    got = _md5(tmp)
    if got != md5:
        tmp.unlink(missing_ok=True)
        raise DatasetCorruptError(f"the download of {url} for {dest} has MD5 {got}, expected the published {md5}: "
                                  "deleted it (a damaged or tampered download); try again")
    tmp.replace(dest)


# --------------------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------------------

def _tensors(x_tr, y_tr, x_te, y_te, device) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    f = lambda a: torch.as_tensor(np.ascontiguousarray(a), dtype=torch.float32, device=device)  # noqa: E731
    i = lambda a: torch.as_tensor(np.asarray(a), dtype=torch.int64, device=device)  # noqa: E731
    return f(x_tr), i(y_tr), f(x_te), i(y_te)


def _load_digits(device, seed: int, test_fraction: float = 0.25) -> Dataset:
    from sklearn.datasets import load_digits  # deferred: imports scipy.stats

    check_probability("test_fraction", test_fraction, allow_zero=False, allow_one=False)
    bunch = load_digits()
    x = (bunch.data.astype(np.float32) / 16.0).reshape(-1, 1, 8, 8)
    y = bunch.target.astype(np.int64)
    # a stratified split from an explicit generator, so the split is the same on every machine
    rng = np.random.default_rng(seed)
    test = np.zeros(len(y), dtype=bool)
    for c in range(10):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        n_test = int(round(test_fraction * len(idx)))
        if n_test == 0 or n_test == len(idx):
            side = "training" if n_test == len(idx) else "test"
            raise ValueError(f"test_fraction={test_fraction!r} leaves class {c} with no {side} rows ({len(idx)} "
                             f"samples, {n_test} to test): choose test_fraction in about "
                             f"[{0.5 / len(idx):.3f}, {1 - 0.5 / len(idx):.3f}] for the digits")
        test[idx[:n_test]] = True
    tr, te = np.flatnonzero(~test), np.flatnonzero(test)
    return Dataset("digits", *_tensors(x[tr], y[tr], x[te], y[te], device), n_classes=10, input_shape=(1, 8, 8),
                   info={"source": "scikit-learn load_digits (UCI optdigits test set), bundled, offline",
                         "scaling": "pixel / 16 -> [0, 1]", "feature_range": (0.0, 1.0), "seed": seed})


_MAX_SYNTHETIC = 50_000_000  # features of a synthetic dataset (400 MB in float64 while it is drawn)


def _load_synthetic(device, seed: int, n_train: int = 2000, n_test: int = 1000, dim: int = 20,
                    separation: float = 1.0, flip: float = 0.05) -> Dataset:
    """Two Gaussian classes, features scaled into the unit ball, a fraction ``flip`` of labels flipped.

    The scaling is public: every row (train and test) is divided by ``sqrt(dim) + 1.5 separation + 3`` and
    then clipped to norm 1 on its own, so no row's features depend on another row (a forget request removes
    rows without changing the rest).

    Every row satisfies ``||x|| <= 1``, so binary logistic loss has Lipschitz constant (in theta) at most 1
    and smoothness at most 1/4, known analytically (the convex theory of digests 003 and 001 needs them).
    """
    n_train = check_int("n_train", n_train, low=2)
    n_test = check_int("n_test", n_test, low=1)
    dim = check_int("dim", dim, low=1)
    if (n_train + n_test) * dim > _MAX_SYNTHETIC:  # refused before numpy tries to allocate it
        raise ValueError(f"n_train={n_train}, n_test={n_test}, dim={dim} is too large: (n_train + n_test) * dim = "
                         f"{(n_train + n_test) * dim:.3g} features, expected at most {_MAX_SYNTHETIC:.0e}")
    check_positive("separation", separation, allow_zero=True)
    check_probability("flip", flip, allow_one=False)
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(dim)
    direction /= np.linalg.norm(direction)
    n = n_train + n_test
    y = rng.integers(0, 2, size=n)
    x = rng.standard_normal((n, dim)) + np.outer(2 * y - 1, direction) * separation * 1.5
    flipped = rng.random(n) < flip
    y = np.where(flipped, 1 - y, y)
    # a public scale (sqrt(dim) plus the class offset plus 3: a row's norm exceeds it with probability about
    # 1e-4), then a per-row clip: no training statistic, so removing rows leaves every other row unchanged
    x /= math.sqrt(dim) + 1.5 * separation + 3.0
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1.0)
    return Dataset("synthetic", *_tensors(x[:n_train], y[:n_train], x[n_train:], y[n_train:], device),
                   n_classes=2, input_shape=(dim,),
                   info={"source": "Gaussian mixture, unlearnkit.data.load('synthetic')", "max_norm": 1.0,
                         "lipschitz_logistic": 1.0, "smoothness_logistic": 0.25, "seed": seed,
                         "separation": separation, "flip": flip})


def _load_mnist(device, root: Path, download: bool) -> Dataset:
    folder = root / "mnist"
    missing = [f for f in _MNIST_FILES.values() if not (folder / f).exists()]
    if missing and download:
        for f in missing:
            _download(_MNIST_MIRROR + f, folder / f, _MD5[f])
        missing = []
    if missing:
        raise DatasetUnavailableError(
            f"MNIST is not on disk: missing {', '.join(missing)} in {folder}. Either put the four standard "
            f"IDX .gz files ({', '.join(_MNIST_FILES.values())}) there (or set UNLEARNKIT_DATA to a folder "
            "with an mnist/ subfolder), or call load('mnist', download=True) when online (as on Binder)."
        )
    arrays = {k: read_idx(folder / f) for k, f in _MNIST_FILES.items()}
    for split in ("train", "test"):
        images, path = arrays[f"x_{split}"], folder / _MNIST_FILES[f"x_{split}"]
        if images.dtype != np.uint8 or images.ndim != 3 or images.shape[1:] != (28, 28) or not len(images):
            raise DatasetCorruptError(f"{path}: expected uint8 images of shape (n >= 1, 28, 28), got "
                                      f"{images.dtype} {images.shape}")
        arrays[f"y_{split}"] = check_labels(str(folder / _MNIST_FILES[f"y_{split}"]), arrays[f"y_{split}"],
                                            len(images))
    x_tr = arrays["x_train"].astype(np.float32)[:, None] / 255.0
    x_te = arrays["x_test"].astype(np.float32)[:, None] / 255.0
    return Dataset("mnist", *_tensors(x_tr, arrays["y_train"], x_te, arrays["y_test"], device), n_classes=10,
                   input_shape=(1, 28, 28), info={"source": str(folder), "scaling": "pixel / 255 -> [0, 1]",
                                                         "feature_range": (0.0, 1.0)})


def _read_cifar_batches(archive: Path, unpacked: Path, names: list[str]) -> tuple[dict, dict]:
    """The named batches from the unpacked folder (if present) or the archive; corrupt input is refused."""
    xs, ys = {}, {}
    if unpacked.is_dir():
        for name in names:
            path = unpacked / name
            if not path.is_file():
                raise DatasetCorruptError(f"{path} is {'a folder' if path.is_dir() else 'missing'}: the unpacked "
                                          "CIFAR-10 folder needs data_batch_1..5 and test_batch as files; re-download")
            with open(path, "rb") as fh:
                xs[name], ys[name] = read_cifar10_batch(fh, source=str(path))
        return xs, ys
    if archive.is_dir():
        raise DatasetCorruptError(f"{archive} is a folder, not a file: put the CIFAR-10 python archive there")
    try:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:
                name = Path(member.name).name
                if name not in names:
                    continue
                if not member.isfile():
                    raise DatasetCorruptError(f"{archive}: member {member.name} is not a regular file")
                with tar.extractfile(member) as fh:
                    xs[name], ys[name] = read_cifar10_batch(fh, source=f"{archive}:{member.name}")
    except (tarfile.TarError, EOFError, zlib.error, OSError) as exc:
        raise DatasetCorruptError(f"{archive} is not a readable tar.gz archive or is truncated "
                                  f"({type(exc).__name__}: {exc}); re-download it") from None
    missing = [n for n in names if n not in xs]
    if missing:
        raise DatasetCorruptError(f"{archive} lacks the batches {missing} (truncated or not CIFAR-10): re-download it")
    return xs, ys


def _load_cifar10(device, root: Path, download: bool) -> Dataset:
    folder = root / "cifar10"
    archive = folder / _CIFAR_ARCHIVE
    unpacked = folder / "cifar-10-batches-py"
    if not archive.exists() and not unpacked.is_dir():
        if not download:
            raise DatasetUnavailableError(
                f"CIFAR-10 is not on disk: expected {archive} (the python version, {_CIFAR_ARCHIVE}) or its "
                f"unpacked folder {unpacked}. Put it there (or set UNLEARNKIT_DATA), or call "
                "load('cifar10', download=True) when online (as on Binder)."
            )
        _download(_CIFAR_URL, archive, _MD5[_CIFAR_ARCHIVE])
    train_names = [f"data_batch_{i}" for i in range(1, 6)]
    xs, ys = _read_cifar_batches(archive, unpacked, [*train_names, "test_batch"])
    if not sum(len(ys[n]) for n in train_names) or not len(ys["test_batch"]):
        raise DatasetCorruptError(f"CIFAR-10 at {folder}: the training or the test batches hold no images")
    x_tr = np.concatenate([xs[n] for n in train_names]).astype(np.float32) / 255.0
    y_tr = np.concatenate([ys[n] for n in train_names])
    mean = x_tr.mean(axis=(0, 2, 3), keepdims=True)
    std = x_tr.std(axis=(0, 2, 3), keepdims=True)
    std = np.where(std > 1e-6, std, 1.0)  # a constant channel is centred, not divided by zero
    x_te = (xs["test_batch"].astype(np.float32) / 255.0 - mean) / std
    x_tr = (x_tr - mean) / std
    return Dataset("cifar10", *_tensors(x_tr, y_tr, x_te, ys["test_batch"], device), n_classes=10,
                   input_shape=(3, 32, 32), info={"source": str(folder),
                                                         "scaling": "per-channel standardised with the training "
                                                                    "split's mean and std (not public: no "
                                                                    "certified profile uses it)"})


def load(name: str = "digits", *, device=None, seed: int = 0, download: bool = False,
         root: str | os.PathLike | None = None, **kwargs) -> Dataset:
    """Load a dataset by name as tensors on ``device`` (default: :func:`unlearnkit.device`).

    Parameters
    ----------
    name:
        ``"digits"`` (default; scikit-learn's bundled 8x8 handwritten digits, offline), ``"synthetic"``
        (binary Gaussian mixture in the unit ball; kwargs ``n_train``, ``n_test``, ``dim``, ``separation``,
        ``flip``), ``"mnist"`` or ``"cifar10"`` (standard files from ``root``).
    seed:
        Seeds the digits train/test split and the synthetic data.
    download:
        Allow downloading MNIST / CIFAR-10 when they are not on disk.
    root:
        Folder holding ``mnist/`` and ``cifar10/`` (default ``$UNLEARNKIT_DATA`` or ``~/.cache/unlearnkit``).

    Raises
    ------
    DatasetUnavailableError
        MNIST or CIFAR-10 files are missing and ``download`` is False (or the download failed).
    """
    check_choice("name", name, DATASETS)
    check_int("seed", seed, low=0, high=2**63 - 1)  # numpy refuses negative seeds, torch those past 64 bits

    device = resolve_device(device)  # None: the default; "tpu" or a missing GPU: a clear ValueError now
    if name == "digits":
        return _load_digits(device, seed, **kwargs)
    if name == "synthetic":
        return _load_synthetic(device, seed, **kwargs)
    if kwargs:
        raise ValueError(f"load({name!r}) takes no extra options, got {sorted(kwargs)}")
    base = data_root(root)
    if name == "mnist":
        return _load_mnist(device, base, download)
    return _load_cifar10(device, base, download)
