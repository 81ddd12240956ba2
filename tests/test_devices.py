"""Every tensor unlearnkit creates takes its device from the data, parameters or generator it belongs to.

Why a static check: on a machine with a GPU, :func:`unlearnkit.device` picks CUDA, so the data and the
models live there; a tensor created with ``torch.zeros(d)`` (no ``device=``) lands on the CPU and the next
operation mixes devices (``RuntimeError: Expected all tensors to be on the same device``). Issue 17 found
exactly this in Newton's ``exact_minimizer`` (``theta = torch.zeros(flat.d, dtype=...)``): 12 tests failed on
an H100 and CI, which has no GPU, saw nothing. A generator draw without ``device=`` is the mirror bug: with a
CUDA generator it raises, with a CPU generator it silently produces CPU indices. So the check runs on the
source, with no GPU: it parses every module of ``unlearnkit/`` with :mod:`ast` and fails on a torch
tensor-creation call that fixes no device.

A call is fine when it

- passes ``device=`` (``x.device``, ``generator.device``, or an explicit ``"cpu"`` for a host-side table), or
- is a ``*_like`` / ``Tensor.new_*`` call (they inherit the device of an existing tensor; not listed below), or
- creates no random draw and is explicitly placed in the same expression by ``.cpu()``, ``.cuda()`` or a
  ``.to(<device or tensor>)`` (``torch.as_tensor(out).detach().cpu()``), or
- is in :data:`ALLOWED`, each entry with its reason.

A draw that passes ``generator=`` must always pass ``device=`` (``device=generator.device``), even when it
is moved afterwards: torch draws on the default device, which must match the generator's.
The dynamic twin, :func:`test_quick_paths_create_no_tensor_on_the_default_device`, runs real code with
torch's default device set to ``meta``, so a device-less tensor cannot silently land on the CPU.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parents[1] / "unlearnkit"

#: torch functions that create a tensor on the default device unless told otherwise.
CREATORS = frozenset({
    "zeros", "ones", "empty", "full", "eye", "arange", "range", "linspace", "logspace", "randn", "rand",
    "randint", "randperm", "tensor", "as_tensor", "asarray", "scalar_tensor", "empty_strided", "tril_indices",
    "triu_indices", "from_numpy", "normal",
})

#: justified exceptions: (module path relative to unlearnkit/, the call as ``ast.unparse`` writes it) -> why.
ALLOWED: dict[tuple[str, str], str] = {
    ("decentral/gossip.py", "torch.as_tensor(W)"):
        "gossip_step_loop is the per-client reference loop: W is turned into a NumPy array on the next line "
        "(Wd.detach().cpu().numpy()) and never meets a device tensor",
}

_PLACING = {"cpu", "cuda"}
_DTYPE_NAMES = {"float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16", "int32",
                "int64", "long", "int", "bool", "uint8", "complex64", "complex128"}


def _is_dtype(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in _DTYPE_NAMES


def _placed_in_chain(call: ast.Call, parents: dict[ast.AST, ast.AST]) -> bool:
    """Whether the expression that starts with ``call`` goes through ``.cpu()``, ``.cuda()`` or a ``.to(device)``."""
    node: ast.AST = call
    while True:
        parent = parents.get(node)
        if isinstance(parent, ast.Subscript) and parent.value is node:
            node = parent
            continue
        if not (isinstance(parent, ast.Attribute) and parent.value is node):
            return False
        call_of = parents.get(parent)
        if not (isinstance(call_of, ast.Call) and call_of.func is parent):
            return False  # an attribute that is not called (``.shape``): the chain ends here
        if parent.attr in _PLACING:
            return True
        if parent.attr == "to":
            args = [*call_of.args, *(k.value for k in call_of.keywords if k.arg != "dtype")]
            if any(not _is_dtype(a) for a in args):
                return True
        node = call_of


def violations(source: str, where: str = "<string>") -> list[tuple[int, str, str]]:
    """``(line, call, why)`` for each tensor-creation call in ``source`` that fixes no device."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    out = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "torch"
                and node.func.attr in CREATORS):
            continue
        kwargs = {k.arg for k in node.keywords}
        if "device" in kwargs:
            continue
        text = ast.unparse(node)
        if (where, text) in ALLOWED:
            continue
        if "generator" in kwargs:
            out.append((node.lineno, text, "a draw from a generator needs device=generator.device"))
        elif node.func.attr == "normal" and node.args and not all(
                isinstance(a, ast.Constant) for a in node.args[:2]):
            continue  # torch.normal(mean_tensor, std): the draw takes the device of its tensor arguments
        elif not _placed_in_chain(node, parents):
            out.append((node.lineno, text, "no device=: it lands on the CPU while the data may be on CUDA"))
    return out


def test_no_tensor_is_created_without_a_device():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        found += [f"unlearnkit/{rel}:{line}: {text}  ({why})" for line, text, why in violations(path.read_text(), rel)]
    assert not found, ("tensors created without a device (pass device=x.device / generator.device, or add a "
                       "justified entry to ALLOWED in tests/test_devices.py):\n" + "\n".join(found))


def test_every_allowed_exception_still_exists():
    """A stale allow-list entry hides nothing today but would silently excuse a new call with the same text."""
    for (rel, text), why in ALLOWED.items():
        assert why.strip(), f"ALLOWED[{rel!r}, {text!r}] needs a reason"
        tree = ast.parse((PACKAGE / rel).read_text())
        assert any(isinstance(n, ast.Call) and ast.unparse(n) == text for n in ast.walk(tree)), \
            f"ALLOWED names {text!r} in unlearnkit/{rel}, which no longer contains it: remove the entry"


@pytest.mark.parametrize("snippet, bad", [
    ("theta = torch.zeros(flat.d, dtype=x.dtype)", True),                       # the issue-17 bug
    ("theta = torch.zeros(flat.d, dtype=x.dtype, device=x.device)", False),
    ("i = torch.randint(0, n, (b,), generator=g).to(x.device)", True),          # draw on the wrong device
    ("i = torch.randint(0, n, (b,), generator=g, device=g.device).to(x.device)", False),
    ("z = torch.zeros_like(x)", False),
    ("z = x.new_zeros(3)", False),
    ("a = torch.as_tensor(out).detach().cpu().double()", False),
    ("a = torch.as_tensor(out).to(torch.float64)", True),                       # a dtype is not a device
    ("a = torch.as_tensor(pool)[pick].to(x.device)", False),
    ("w = torch.tensor(sizes, dtype=torch.float64)", True),
    ("n = torch.normal(mu, sigma)", False),
])
def test_the_check_tells_good_from_bad(snippet, bad):
    assert bool(violations(snippet)) is bad, snippet


def test_stopwatch_syncs_only_when_cuda_was_initialised(monkeypatch):
    """``Stopwatch`` waits on the GPU only when this process has used CUDA (issue 17): a CPU run on a GPU
    machine neither pays for a synchronisation nor creates a CUDA context."""
    import torch

    from unlearnkit.core import Stopwatch

    calls = []
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a, **k: calls.append(1))
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: False)
    with Stopwatch() as sw:
        pass
    assert calls == [] and sw.seconds >= 0.0
    monkeypatch.setattr(torch.cuda, "is_initialized", lambda: True)
    with Stopwatch():
        pass
    assert calls == [1, 1]


def test_quick_paths_create_no_tensor_on_the_default_device():
    """The dynamic twin of the static check, on a CPU-only machine.

    Everything is built on the CPU, then the unlearning runs with torch's default device set to ``meta``:
    a tensor created without ``device=`` lands on ``meta`` and the next operation with the CPU data raises,
    exactly as it would mix CPU and CUDA on a GPU machine. The results must equal a plain CPU run bit for
    bit. (Newton's ``exact_minimizer`` is the bug issue 17 found; the baselines draw minibatch indices from a
    generator; ``train_sgd`` draws its batches.)
    """
    import numpy as np
    import torch

    from unlearnkit import data, make_generator
    from unlearnkit.core import Request, TrainedState
    from unlearnkit.decentral.gossip import GossipConfig
    from unlearnkit.graphs import make_graph
    from unlearnkit.methods import (Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Newton,
                                    NewtonConfig)
    from unlearnkit.methods.newton.training import exact_minimizer
    from unlearnkit.models import FlatParams, logreg
    from unlearnkit.train import SGDConfig, train_sgd

    ds = data.load("synthetic", device="cpu", n_train=80, n_test=40, dim=3, seed=1)
    ds64 = ds.with_train(ds.x_train.double(), ds.y_train)  # Newton's exact oracle converges fast in float64
    fed = data.partition(ds64, 4, "iid", seed=0)
    flat64 = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    flat64.module.double()
    flat = FlatParams(logreg(ds.input_shape, 1), loss="logistic")
    parts = [fed.client_data(i) for i in range(4)]
    request = Request("samples", np.asarray(fed.client_indices[0][:3]), client=0)
    sgd = SGDConfig(steps=5, lr=0.1, batch_size=8)

    def run() -> list:
        x_star = exact_minimizer(flat64, parts, weight_decay=0.5)
        state = TrainedState(flat=flat64, params=x_star.expand(4, -1).clone(), dataset=ds64,
                             train_indices=np.arange(ds.n_train), network=make_graph("ring", 4), federation=fed,
                             config=GossipConfig(rounds=1, lr=0.1, batch_size=8, weight_decay=0.5))
        newton = Newton().unlearn(state, request, NewtonConfig(mode="none", scope="global"),
                                  generator=make_generator(0))
        central = train_sgd(flat, ds, None, sgd, generator=make_generator(1))
        ft = Finetune().unlearn(central, request, FinetuneConfig(steps=5), generator=make_generator(2))
        ga = GradientAscent().unlearn(central, request, GradientAscentConfig(max_steps=3),
                                      generator=make_generator(3))
        return [x_star, newton.params, central.params, ft.params, ga.params]

    reference = run()
    with torch.device("meta"):
        on_meta_default = run()
    for ref, got in zip(reference, on_meta_default):
        assert got.device.type == "cpu" and torch.equal(ref, got)
