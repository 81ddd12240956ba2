"""One gossip round ``X <- W X`` for an ``(N, d)`` stack of client vectors, with the kernel chosen by shape.

A gossip round touches every parameter once; how close it gets to one memory pass over ``X`` depends on the
kernel, not on the maths:

- ``"dense"``: ``W @ X`` with a dense ``W``: ``2 N^2 d`` flops; the fastest for small, dense networks.
- ``"circulant"``: ``W`` is a circulant band (every row has the same weights at the same offsets modulo
  ``N``: the ring, the exponential graph), or the same on a 2-D grid that wraps both ways (the torus, with
  clients in row-major order on its default ``rows x cols`` shape). Then
  ``(W X)_i = sum_s w_s X_{(i + s) mod N}`` is a handful of shifted in-place ``add_`` calls on row slices,
  done block by block (blocks of about 1 MiB) so that the rows a block reads stay in cache and ``X`` comes
  from memory about once. A ring whose two neighbours share one weight ``a`` (Metropolis, max-degree, lazy)
  needs one pass fewer: ``lerp(x_i, lerp(x_{i-1}, x_{i+1}, 1/2), 2a)``, two in-cache calls per block.
- ``"csr"``: any other sparse ``W``: SciPy's row-by-row CSR product on the CPU (each output row is finished
  in cache before the next), ``torch.sparse.mm`` on a CSR tensor elsewhere or when ``X`` needs gradients.

>>> import numpy as np, torch
>>> from unlearnkit.graphs import edge_list, sparse_mixing_matrix
>>> k = GossipKernel(sparse_mixing_matrix(edge_list("ring", 6), 6), kind="circulant")
>>> k.kind, tuple(k(torch.eye(6, device="cpu")).sum(0).tolist()) == (1.0,) * 6
('circulant', True)
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch
from scipy.sparse._sparsetools import csr_matvecs
from torch import Tensor

from .._validate import check_choice


MIX_KERNELS = ("auto", "dense", "circulant", "csr")


def _circulant(W: sp.csr_matrix, rows: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(row_shifts, col_shifts, weights)`` when ``W``, with client ``v`` at cell ``(v // cols, v % cols)`` of a
    ``rows x cols`` grid that wraps around both ways, holds the same weights at the same 2-D offsets in every
    row (``rows = 1``: a 1-D circulant, the ring; the default grid shape: the torus)."""
    n = W.shape[0]
    counts = np.diff(W.indptr)
    k = int(counts[0])
    if k == 0 or np.any(counts != k) or n % rows:
        return None
    cols = n // rows
    v, u = np.arange(n)[:, None], W.indices.reshape(n, k)
    off = ((u // cols - v // cols) % rows) * cols + (u % cols - v % cols) % cols
    order = np.argsort(off, axis=1, kind="stable")
    off = np.take_along_axis(off, order, axis=1)
    val = np.take_along_axis(W.data.reshape(n, k), order, axis=1)
    # weights equal to a few ulps: a diagonal ``1 - sum`` rounds differently from row to row
    if np.array_equal(off, np.broadcast_to(off[0], off.shape)) and np.abs(val - val[0]).max() <= 1e-15:
        return off[0] // cols, off[0] % cols, val[0].astype(float)
    return None


def _ring_lerp_weight(offsets: list[tuple[int, int, float]], grid: tuple[int, int]) -> float | None:
    """``2a`` when the circulant stencil is a ring (one grid row, offsets ``-1, 0, +1``) whose two neighbour
    weights are both ``a`` and whose self-weight is ``1 - 2a`` (Metropolis, max-degree and lazy rings), else None."""
    r, c = grid
    by = {(si, sj % c): w for si, sj, w in offsets}
    if r != 1 or c < 3 or set(by) != {(0, 0), (0, 1), (0, c - 1)}:
        return None
    a, b, self_w = by[(0, 1)], by[(0, c - 1)], by[(0, 0)]
    if abs(a - b) > 1e-15 or abs(self_w + 2 * a - 1) > 1e-12:
        return None
    return 2 * a


def _pieces(start: int, length: int, size: int) -> list[tuple[int, int, int]]:
    """``(dst_offset, src_start, count)`` pieces of the cyclic range ``start .. start + length`` mod ``size``."""
    start %= size
    first = min(length, size - start)
    return [(0, start, first)] + ([(first, 0, length - first)] if first < length else [])


class GossipKernel:
    """``X <- W X`` for a fixed mixing matrix ``W``, with the kernel picked from ``W``'s structure and size.

    Parameters
    ----------
    W:
        The ``(N, N)`` mixing matrix: a ``scipy.sparse`` matrix, a numpy array or a (dense or sparse) tensor.
        It is not validated here (:func:`~unlearnkit.graphs.validate_mixing` does that).
    kind:
        ``"auto"`` (default), ``"dense"``, ``"circulant"`` or ``"csr"`` (module docstring). ``"auto"`` takes
        ``"dense"`` when ``W`` has more than ``N^2 / 8`` entries or
        ``N <= 16``, else ``"circulant"`` when ``W`` is one, else ``"csr"``.
    device, dtype:
        Where and in which precision the rounds run (the dtype of the ``X`` it will be given).
    block_bytes:
        Size of the row blocks of the circulant kernel on the CPU (default 1 MiB: in cache, few Python calls).

    Attributes
    ----------
    kind: the kernel in use. n: ``N``. nnz: stored entries of ``W``. lerp_weight: ``2a`` when the circulant
    kernel is a ring whose neighbours share one weight ``a`` (two ``lerp`` calls per block), else None.
    """

    def __init__(self, W: Any, *, kind: str = "auto", device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.float32, block_bytes: int = 1 << 20) -> None:
        check_choice("kind", kind, MIX_KERNELS)
        if isinstance(W, Tensor):
            W = W.to_dense() if W.layout != torch.strided else W
            W = W.detach().cpu().double().numpy()
        csr = sp.csr_matrix(W, dtype=float)
        csr.sort_indices()
        if csr.ndim != 2 or csr.shape[0] != csr.shape[1]:
            raise ValueError(f"W must be a square (N, N) matrix, got shape {csr.shape}")
        self.n, self.nnz = csr.shape[0], csr.nnz
        self.device, self.dtype, self.block_bytes = torch.device(device), dtype, int(block_bytes)
        circ, self.lerp_weight = None, None
        if kind in ("auto", "circulant"):
            grid = max(r for r in range(1, math.isqrt(self.n) + 1) if self.n % r == 0)  # the torus's default
            for rows in dict.fromkeys((1, grid)):
                circ = _circulant(csr, rows)
                if circ is not None:
                    self.grid = (rows, self.n // rows)
                    break
        if kind == "circulant" and circ is None:
            raise ValueError("kind='circulant' but W is not circulant (rows differ in offsets or weights)")
        if kind == "auto":
            dense = self.nnz > self.n * self.n / 8 or self.n <= 16
            kind = "dense" if dense else ("circulant" if circ is not None else "csr")
        self.kind = kind
        if kind == "circulant":
            self.offsets = [(int(a), int(b), float(w)) for a, b, w in zip(*circ)]
            self.lerp_weight = _ring_lerp_weight(self.offsets, self.grid)
        elif kind == "dense":
            self._dense = torch.as_tensor(csr.toarray(), dtype=dtype, device=self.device)
        else:
            self._csr = csr.astype(np.float64 if dtype == torch.float64 else np.float32)
            self._torch_csr: Tensor | None = None

    def __repr__(self) -> str:
        return f"GossipKernel(kind={self.kind!r}, n={self.n}, nnz={self.nnz})"

    def __call__(self, X: Tensor, *, out: Tensor | None = None) -> Tensor:
        """``W @ X`` for ``X`` of shape ``(N, d)`` (or ``(N,)``).

        Parameters
        ----------
        X: the client vectors.
        out: optional ``(N, d)`` contiguous tensor (not ``X``) to write the result into: reusing one
            buffer across rounds (``Y = k(X, out=Y); X, Y = Y, X``) saves the page faults of a fresh
            ``N x d`` allocation every round, which on the CPU cost as much as the round itself.

        Returns
        -------
        torch.Tensor
            ``W @ X`` (``out`` when given).
        """
        if X.shape[0] != self.n:
            raise ValueError(f"X has {X.shape[0]} rows but W is {self.n}x{self.n}")
        if X.ndim == 1:
            return self(X[:, None])[:, 0]
        if out is not None and (out.shape != X.shape or not out.is_contiguous() or out.data_ptr() == X.data_ptr()):
            raise ValueError(f"out must be a contiguous {tuple(X.shape)} tensor distinct from X")
        grad = X.requires_grad
        if self.kind == "dense":
            return self._dense.to(X.dtype) @ X if out is None or grad else torch.matmul(self._dense.to(X.dtype), X, out=out)
        cpu = X.device.type == "cpu" and not grad
        if self.kind == "csr" and cpu and X.dtype in (torch.float32, torch.float64):
            return self._csr_apply(X.contiguous(), torch.empty_like(X) if out is None else out)
        if self.kind == "csr":
            if self._torch_csr is None:
                with warnings.catch_warnings():  # "CSR support is in beta"
                    warnings.simplefilter("ignore", UserWarning)
                    self._torch_csr = torch.sparse_csr_tensor(
                        torch.as_tensor(self._csr.indptr, dtype=torch.int64, device=X.device),
                        torch.as_tensor(self._csr.indices, dtype=torch.int64, device=X.device),
                        torch.as_tensor(self._csr.data, dtype=X.dtype, device=X.device), self._csr.shape)
            Y = torch.sparse.mm(self._torch_csr.to(X.dtype), X)
            return Y if out is None or grad else out.copy_(Y)
        if grad:  # the autograd graph of many slices is slow: one roll per shift instead
            r, c = self.grid
            X3 = X.reshape(r, c, -1)
            return sum(w * torch.roll(X3, (-a, -b), dims=(0, 1)) for a, b, w in self.offsets).reshape(X.shape)
        if self.lerp_weight is not None and self.n >= 3:
            return self._ring_apply(X.contiguous(), torch.empty_like(X) if out is None else out)
        return self._circulant_apply(X.contiguous(), torch.empty_like(X) if out is None else out)

    def _rows_per_block(self, X: Tensor) -> int:
        if X.device.type != "cpu":
            return X.shape[0]
        return max(1, self.block_bytes // max(1, X.shape[1] * X.element_size()))

    def _csr_apply(self, X: Tensor, out: Tensor) -> Tensor:
        """SciPy's CSR kernel block by block: zero a block of output rows (in cache), then accumulate."""

        A = self._csr if self._csr.dtype == (np.float64 if X.dtype == torch.float64 else np.float32) else \
            self._csr.astype(np.float64 if X.dtype == torch.float64 else np.float32)
        x, y = X.detach().numpy().reshape(-1), out.detach().numpy()
        n, d = X.shape
        rows = self._rows_per_block(X)
        for a in range(0, n, rows):
            b = min(n, a + rows)
            yb = y[a:b]
            yb.fill(0)
            csr_matvecs(b - a, n, d, A.indptr[a:b + 1], A.indices, A.data, x, yb.reshape(-1))
        return out

    def _ring_apply(self, X: Tensor, out: Tensor) -> Tensor:
        """A ring whose two neighbours share one weight ``a`` (the self-weight ``1 - 2a``): per block of rows,
        ``lerp(x_i, (x_{i-1} + x_{i+1}) / 2, 2a)`` as two in-cache ``lerp`` calls, one fewer pass than three
        weighted adds."""
        n, t = self.n, self.lerp_weight
        nb = self._rows_per_block(X)
        for a in range(1, n - 1, nb):
            b = min(n - 1, a + nb)
            o = out[a:b]
            torch.lerp(X[a - 1:b - 1], X[a + 1:b + 1], 0.5, out=o)
            torch.lerp(X[a:b], o, t, out=o)
        for i, (p, q) in ((0, (n - 1, 1)), (n - 1, (n - 2, 0))):  # the two rows whose neighbours wrap around
            o = out[i:i + 1]
            torch.lerp(X[p:p + 1], X[q:q + 1], 0.5, out=o)
            torch.lerp(X[i:i + 1], o, t, out=o)
        return out

    def _circulant_apply(self, X: Tensor, out: Tensor) -> Tensor:
        """Blocks of grid cells (about ``block_bytes`` each); in a block, one in-place ``add_`` per offset and
        wrap-around piece, so the rows a block reads stay in cache."""
        r, c = self.grid
        d = X.shape[1]
        X3, O3 = X.view(r, c, d), out.view(r, c, d)
        cells = self._rows_per_block(X)
        cb = min(c, cells)  # columns per block, then grid rows per block
        rb = max(1, min(r, cells // cb))
        for i0 in range(0, r, rb):
            ni = min(rb, r - i0)
            for j0 in range(0, c, cb):
                nj = min(cb, c - j0)
                o = O3[i0:i0 + ni, j0:j0 + nj]
                for k, (si, sj, w) in enumerate(self.offsets):
                    for di, ai, li in _pieces(i0 + si, ni, r):
                        for dj, aj, lj in _pieces(j0 + sj, nj, c):
                            dst, src = o[di:di + li, dj:dj + lj], X3[ai:ai + li, aj:aj + lj]
                            if k == 0:
                                torch.mul(src, w, out=dst)
                            else:
                                dst.add_(src, alpha=w)
        return out
