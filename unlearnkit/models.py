"""Models and the flat-parameter view that certified unlearning works in.

Certified unlearning reasons about *one vector* of parameters: it projects it onto a ball, adds isotropic
Gaussian noise to all of its d coordinates, and measures its distance to the retrained model. ``FlatParams``
turns any ``torch.nn.Module`` into that view with ``torch.func``: a loss ``loss(theta, x, y)``, its gradient,
per-sample gradients (``vmap``), Hessian-vector products (forward-over-reverse) and, for a whole network of
clients at once, gradients for an ``(n_clients, d)`` stack of parameter vectors in one ``vmap`` call.

Models here never use BatchNorm: its running statistics are a side channel that remembers the forget set.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch.func import functional_call, grad, grad_and_value, jvp, vmap

from ._validate import check_choice, check_int, check_positive


# ----------------------------------------------------------------------------------------------------------
# Architectures
# ----------------------------------------------------------------------------------------------------------

def _flat_dim(input_shape: Sequence[int]) -> int:
    d = 1
    for s in input_shape:
        d *= int(s)
    return d


def logreg(input_shape: Sequence[int], n_classes: int, *, bias: bool = True) -> nn.Module:
    """Multinomial logistic regression (softmax over a linear map).

    With ``n_classes == 1`` it is *binary* logistic regression with one logit (use ``loss="logistic"`` and
    labels in {0, 1}); that is the case whose Lipschitz and smoothness constants the convex theory uses.
    Strong convexity comes from the L2 weight (``weight_decay``) added in the loss, not from the model.
    """
    check_int("n_classes", n_classes, low=1)
    return nn.Sequential(nn.Flatten(), nn.Linear(_flat_dim(input_shape), n_classes, bias=bias))


def mlp(
    input_shape: Sequence[int],
    n_classes: int,
    *,
    hidden: Sequence[int] = (64,),
    activation: str = "relu",
) -> nn.Module:
    """A fully connected network ``input -> hidden... -> n_classes`` with ReLU, tanh or GELU."""
    check_choice("activation", activation, ("relu", "tanh", "gelu"))
    act = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU}[activation]
    layers: list[nn.Module] = [nn.Flatten()]
    width = _flat_dim(input_shape)
    for h in hidden:
        check_int("hidden", h, low=1)
        layers += [nn.Linear(width, int(h)), act()]
        width = int(h)
    layers.append(nn.Linear(width, n_classes))
    return nn.Sequential(*layers)


def tiny_mlp(input_shape: Sequence[int], n_classes: int, *, hidden: int = 32) -> nn.Module:
    """The one-hidden-layer net of the noisy fine-tuning paper (digest 004, section 4), scaled to our data."""
    return mlp(input_shape, n_classes, hidden=(hidden,), activation="relu")


class _GlobalAvgPool(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x.mean(dim=(-2, -1))


def cnn(
    input_shape: Sequence[int],
    n_classes: int,
    *,
    channels: tuple[int, int] = (32, 64),
    norm: str = "group",
    groups: int = 8,
) -> nn.Module:
    """Small CNN: conv(32) -> avgpool -> conv(64) -> avgpool -> global average pool -> dense.

    ``norm="group"`` puts GroupNorm after each convolution; ``norm="none"`` uses none. BatchNorm is not
    offered on purpose: its running mean and variance are computed from the training data, forget set
    included, and would survive any unlearning of the weights.
    """
    check_choice("norm", norm, ("group", "none"))
    if len(input_shape) != 3:
        raise ValueError(f"input_shape={tuple(input_shape)!r} must be (channels, height, width) for a CNN")
    c_in = int(input_shape[0])
    c1, c2 = channels

    def block(cin: int, cout: int) -> list[nn.Module]:
        mods: list[nn.Module] = [nn.Conv2d(cin, cout, 3, padding=1)]
        if norm == "group":
            mods.append(nn.GroupNorm(min(groups, cout), cout))
        mods.append(nn.ReLU())
        return mods

    return nn.Sequential(
        *block(c_in, c1),
        nn.AvgPool2d(2, ceil_mode=True),
        *block(c1, c2),
        nn.AvgPool2d(2, ceil_mode=True),
        _GlobalAvgPool(),
        nn.Linear(c2, n_classes),
    )


def make_model(name: str, input_shape: Sequence[int], n_classes: int, *, generator: torch.Generator | None = None,
               **kwargs) -> nn.Module:
    """Build a model by name (``"logreg"``, ``"mlp"``, ``"tiny_mlp"``, ``"cnn"``), initialised from ``generator``.

    Initialisation draws from the given generator (not torch's global RNG), so the same seed gives the
    same model.
    """
    builders: dict[str, Callable[..., nn.Module]] = {"logreg": logreg, "mlp": mlp, "tiny_mlp": tiny_mlp, "cnn": cnn}
    check_choice("model", name, tuple(builders))
    model = builders[name](input_shape, n_classes, **kwargs)
    if generator is not None:
        init_from_generator(model, generator)
    return model


def init_from_generator(model: nn.Module, generator: torch.Generator) -> None:
    """PyTorch's default (Kaiming-uniform) init, drawn from an explicit generator."""
    with torch.no_grad():
        for mod in model.modules():
            if isinstance(mod, (nn.Linear, nn.Conv2d)):
                fan_in = mod.weight[0].numel()
                bound = 1.0 / fan_in**0.5
                mod.weight.copy_(
                    (torch.rand(mod.weight.shape, generator=generator, device=generator.device) * 2 - 1)
                    .to(mod.weight.device) * bound
                )
                if mod.bias is not None:
                    mod.bias.copy_(
                        (torch.rand(mod.bias.shape, generator=generator, device=generator.device) * 2 - 1)
                        .to(mod.bias.device) * bound
                    )


# ----------------------------------------------------------------------------------------------------------
# Losses
# ----------------------------------------------------------------------------------------------------------

def _cross_entropy(logits: Tensor, y: Tensor, reduction: str) -> Tensor:
    return F.cross_entropy(logits, y.long(), reduction=reduction)


def _logistic(logits: Tensor, y: Tensor, reduction: str) -> Tensor:
    # binary logistic loss log(1 + exp(-s z)) with labels y in {0,1}, one logit per sample
    return F.binary_cross_entropy_with_logits(logits.reshape(-1), y.to(logits.dtype).reshape(-1), reduction=reduction)


LOSSES: dict[str, Callable[[Tensor, Tensor, str], Tensor]] = {
    "cross_entropy": _cross_entropy,
    "logistic": _logistic,
}


# ----------------------------------------------------------------------------------------------------------
# Flat parameters
# ----------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Slot:
    name: str
    shape: torch.Size
    start: int
    stop: int


class FlatParams:
    """A module seen as a function of one flat parameter vector ``theta`` of length ``d``.

    Parameters
    ----------
    module:
        Any ``nn.Module`` without buffers that depend on data (no BatchNorm).
    loss:
        ``"cross_entropy"`` (multi-class, integer labels) or ``"logistic"`` (binary, one logit, labels 0/1).

    Every loss below is the *mean* over the batch plus ``weight_decay / 2 * ||theta||^2`` (so that
    ``weight_decay`` is exactly the strong-convexity constant lambda that the convex theory uses).

    Examples
    --------
    >>> import torch
    >>> from unlearnkit.models import FlatParams, logreg
    >>> fp = FlatParams(logreg((4,), 3))
    >>> theta = fp.init()
    >>> x, y = torch.randn(5, 4), torch.tensor([0, 1, 2, 0, 1])
    >>> fp.grad(theta, x, y).shape == theta.shape
    True
    """

    def __init__(self, module: nn.Module, *, loss: str = "cross_entropy") -> None:
        check_choice("loss", loss, tuple(LOSSES))
        for mod in module.modules():
            if isinstance(mod, nn.modules.batchnorm._BatchNorm):
                raise ValueError(
                    "module contains BatchNorm, whose running statistics remember the forget set; "
                    "use GroupNorm or no normalisation"
                )
        self.module = module
        self.loss_name = loss
        self._loss_fn = LOSSES[loss]
        slots, start = [], 0
        for name, p in module.named_parameters():
            n = p.numel()
            slots.append(_Slot(name, p.shape, start, start + n))
            start += n
        self._slots: tuple[_Slot, ...] = tuple(slots)
        self.d: int = start
        self._buffers = dict(module.named_buffers())

    # -- conversions ---------------------------------------------------------------------------------------
    def init(self) -> Tensor:
        """The module's current parameters as one detached flat vector (a copy)."""
        return torch.cat([p.detach().reshape(-1) for p in self.module.parameters()]).clone()

    def unflatten(self, theta: Tensor) -> dict[str, Tensor]:
        """Views of ``theta`` shaped as the module's named parameters."""
        if theta.shape[-1] != self.d:
            raise ValueError(f"theta has {theta.shape[-1]} entries but the model has d={self.d} parameters")
        return {s.name: theta[s.start:s.stop].view(s.shape) for s in self._slots}

    def load_into(self, theta: Tensor, module: nn.Module | None = None) -> nn.Module:
        """Copy ``theta`` into ``module`` (default: the wrapped module) in place and return it."""
        module = module or self.module
        with torch.no_grad():
            for (_, p), s in zip(module.named_parameters(), self._slots):
                p.copy_(theta[s.start:s.stop].view(s.shape))
        return module

    def to(self, device) -> "FlatParams":
        self.module.to(device)
        self._buffers = dict(self.module.named_buffers())
        return self

    # -- functional forward and loss -----------------------------------------------------------------------
    def forward(self, theta: Tensor, x: Tensor) -> Tensor:
        """Logits of the model with parameters ``theta`` on inputs ``x`` (no module state is touched)."""
        return functional_call(self.module, (self.unflatten(theta), self._buffers), (x,))

    def loss(self, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0) -> Tensor:
        """Mean loss over the batch plus ``weight_decay / 2 * ||theta||^2``."""
        value = self._loss_fn(self.forward(theta, x), y, "mean")
        if weight_decay:
            value = value + 0.5 * weight_decay * theta.pow(2).sum()
        return value

    def sample_losses(self, theta: Tensor, x: Tensor, y: Tensor) -> Tensor:
        """Per-sample losses (no regulariser), shape ``(n,)``; used by membership inference."""
        return self._loss_fn(self.forward(theta, x), y, "none").reshape(-1)

    def predict(self, theta: Tensor, x: Tensor, *, batch_size: int = 4096) -> Tensor:
        """Predicted labels, evaluated in chunks to bound memory."""
        out = []
        with torch.no_grad():
            for i in range(0, x.shape[0], batch_size):
                logits = self.forward(theta, x[i:i + batch_size])
                if self.loss_name == "logistic":
                    out.append((logits.reshape(-1) > 0).long())
                else:
                    out.append(logits.argmax(dim=-1))
        return torch.cat(out) if out else torch.empty(0, dtype=torch.long, device=x.device)

    # -- derivatives ---------------------------------------------------------------------------------------
    def grad(self, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0) -> Tensor:
        """Gradient of :meth:`loss` with respect to ``theta``."""
        if _plain_autograd_ok(theta):
            return _eager_value_and_grad(lambda t: self.loss(t, x, y, weight_decay=weight_decay), theta)[1]
        return grad(lambda t: self.loss(t, x, y, weight_decay=weight_decay))(theta)

    def value_and_grad(self, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0):
        """``(loss, grad)`` in one pass."""
        if _plain_autograd_ok(theta):
            return _eager_value_and_grad(lambda t: self.loss(t, x, y, weight_decay=weight_decay), theta)

        g, v = grad_and_value(lambda t: self.loss(t, x, y, weight_decay=weight_decay))(theta)
        return v, g

    def per_sample_grads(self, theta: Tensor, x: Tensor, y: Tensor, *, chunk_size: int | None = None) -> Tensor:
        """Gradients of each sample's loss (no regulariser), shape ``(n, d)``, by ``vmap`` over the batch."""

        def one(xi: Tensor, yi: Tensor) -> Tensor:
            return grad(lambda t: self._loss_fn(self.forward(t, xi.unsqueeze(0)), yi.unsqueeze(0), "mean"))(theta)

        return vmap(one, chunk_size=chunk_size)(x, y)

    def hvp(self, theta: Tensor, x: Tensor, y: Tensor, v: Tensor, *, weight_decay: float = 0.0) -> Tensor:
        """Hessian-vector product ``H(theta) v`` of :meth:`loss` (forward-over-reverse, no d x d matrix)."""
        g = lambda t: self.grad(t, x, y, weight_decay=weight_decay)  # noqa: E731
        return jvp(g, (theta,), (v,))[1]

    def hessian(self, theta: Tensor, x: Tensor, y: Tensor, *, weight_decay: float = 0.0) -> Tensor:
        """The dense ``d x d`` Hessian (small models only: it costs d Hessian-vector products)."""
        if self.d > 20000:
            raise ValueError(f"hessian: d={self.d} is too large for a dense Hessian; use hvp or a Fisher")
        if _plain_autograd_ok(theta):
            H = _linear_model_hessian(self, theta, x, y)
            if H is not None:
                return H + weight_decay * torch.eye(self.d, dtype=H.dtype, device=H.device) if weight_decay else H
        eye = torch.eye(self.d, dtype=theta.dtype, device=theta.device)
        return vmap(lambda v: self.hvp(theta, x, y, v, weight_decay=weight_decay))(eye)

    def batched_grad(self, thetas: Tensor, xs: Tensor, ys: Tensor, *, weight_decay: float = 0.0) -> Tensor:
        """Gradients for many parameter vectors at once, each on its own minibatch.

        ``thetas`` is ``(N, d)``, ``xs`` is ``(N, b, *input_shape)`` and ``ys`` is ``(N, b)``: one row per
        client. One ``vmap`` call steps the whole network.
        """
        return vmap(lambda t, x, y: self.grad(t, x, y, weight_decay=weight_decay))(thetas, xs, ys)


def _linear_model_hessian(flat: FlatParams, theta: Tensor, x: Tensor, y: Tensor) -> Tensor | None:
    """The Hessian of the mean loss of a single ``Linear`` layer (optionally after ``Flatten``) in closed form, or
    None for any other model.

    Softmax regression: ``(1/n) sum_s (diag(p_s) - p_s p_s^T) kron (u_s u_s^T)`` with ``u_s = (x_s, 1)`` (the 1 only
    with a bias); binary logistic: ``(1/n) sum_s p_s (1 - p_s) u_s u_s^T``. One matrix product over the samples
    instead of ``d`` Hessian-vector products through autograd (the same matrix to round-off).
    """
    layers = list(flat.module) if isinstance(flat.module, nn.Sequential) else []
    linear = [m for m in layers if isinstance(m, nn.Linear)]
    if len(linear) != 1 or any(not isinstance(m, (nn.Linear, nn.Flatten)) for m in layers) \
            or flat.loss_name not in ("cross_entropy", "logistic") or layers[-1] is not linear[0]:
        return None
    if any(isinstance(m, nn.Flatten) and (m.start_dim, m.end_dim) != (1, -1) for m in layers):
        return None
    lin = linear[0]
    u = x.reshape(x.shape[0], -1).to(theta.dtype)
    if u.shape[1] != lin.in_features:
        return None
    if lin.bias is not None:
        u = torch.cat([u, torch.ones(u.shape[0], 1, dtype=u.dtype, device=u.device)], dim=1)
    n, f, c = u.shape[0], u.shape[1], lin.out_features
    with torch.no_grad():
        z = flat.forward(theta, x)
        if flat.loss_name == "logistic":
            p = torch.sigmoid(z.reshape(-1))
            return (u * (p * (1 - p))[:, None]).T @ u / n
        p = torch.softmax(z, dim=1)
        A = torch.diag_embed(p) - p[:, :, None] * p[:, None, :]  # (n, c, c)
        H = torch.einsum("sab,sj,sk->ajbk", A, u, u).reshape(c * f, c * f) / n  # rows (class, feature)
    # the flat layout: the weight row by row (class, feature), then the bias (one entry per class)
    idx = torch.arange(c * f, device=H.device).reshape(c, f)
    order = idx[:, :lin.in_features].reshape(-1)
    if lin.bias is not None:
        order = torch.cat([order, idx[:, -1]])
    return H[order][:, order]


def _plain_autograd_ok(theta: Tensor) -> bool:
    """True when a gradient may skip ``torch.func``: no functorch transform (vmap, jvp, grad) is active and
    ``theta`` is not itself being differentiated.

    Why: ``torch.func.grad`` touches ``torch._dynamo`` on every call, so the first gradient of a session imports
    it (about 2 s on 2 CPU cores, before any notebook's first training step). Plain ``torch.autograd.grad``
    with ``create_graph=True`` runs the same backward kernels as ``torch.func.grad`` (which also builds the
    graph), so the numbers are bitwise the same (``tests/foundation/test_startup_cache.py``).
    """
    return torch._C._functorch.peek_interpreter_stack() is None and not theta.requires_grad


def _eager_value_and_grad(fn: Callable[[Tensor], Tensor], theta: Tensor) -> tuple[Tensor, Tensor]:
    t = theta.detach().requires_grad_(True)
    with torch.enable_grad():
        value = fn(t)
        (g,) = torch.autograd.grad(value, t, create_graph=True)
    return value.detach(), g.detach()


def project_l2_ball(theta: Tensor, center: Tensor | None = None, radius: float = float("inf")) -> Tensor:
    """Euclidean projection of ``theta`` onto the ball ``B(center, radius)``.

    Works on a single vector ``(d,)`` or a stack ``(N, d)`` (each row projected). ``radius=inf`` is the
    identity.
    """
    if radius == float("inf"):
        return theta
    check_positive("radius", radius, allow_zero=True)
    c = torch.zeros_like(theta) if center is None else center
    diff = theta - c
    norm = diff.norm(dim=-1, keepdim=True)
    scale = torch.clamp(radius / norm.clamp_min(1e-30), max=1.0)
    return c + diff * scale
