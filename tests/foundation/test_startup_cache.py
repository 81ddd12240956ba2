"""Start-up shortcuts never change a number.

- The in-session memo of trained worlds (:mod:`unlearnkit.experiments.memo`) hands out deep copies, so a
  memoised world is bitwise the world a fresh training run produces, and mutating one copy leaves the next
  untouched.
- ``FlatParams.grad`` skips ``torch.func`` (whose first call imports ``torch._dynamo``) outside functorch
  transforms; the plain-autograd path must give bitwise the gradients ``torch.func.grad`` gives, and the
  ``torch.func`` path must still be taken inside ``vmap``/``jvp``.
"""

from __future__ import annotations

import pytest
import torch
from torch.func import grad as func_grad
from torch.func import grad_and_value

from unlearnkit.evaluate import report
from unlearnkit.experiments import centralized_setup
from unlearnkit.experiments.centralized import CentralProfile
from unlearnkit.experiments.memo import clear_memo, memo_stats, memoized
from unlearnkit.models import FlatParams, cnn, logreg, mlp
from unlearnkit.train import SGDConfig

TINY = CentralProfile(train=SGDConfig(steps=40, lr=0.5, batch_size=32, weight_decay=1e-4, checkpoint_every=20))
KEYS = ("test_acc", "retain_acc", "forget_acc", "mia_auc")


def _same_world(a, b) -> None:
    (sa, ra), (sb, rb) = a, b
    assert torch.equal(sa.params, sb.params)
    assert sa.checkpoints.keys() == sb.checkpoints.keys()
    assert all(torch.equal(sa.checkpoints[k], sb.checkpoints[k]) for k in sa.checkpoints)
    assert (ra.indices == rb.indices).all()
    ma = report(sa.flat, sa.params, sa.dataset, ra)
    mb = report(sb.flat, sb.params, sb.dataset, rb)
    assert {k: ma[k] for k in KEYS} == {k: mb[k] for k in KEYS}


def test_memoised_world_is_bitwise_the_fresh_one(monkeypatch):
    clear_memo()
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    fresh = centralized_setup(TINY, seed=3)
    assert memo_stats()["entries"] == 0
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    first = centralized_setup(TINY, seed=3)
    first[0].params.add_(1.0)  # a caller mutating its copy must not reach the memo
    second = centralized_setup(TINY, seed=3)
    assert memo_stats() == {"hits": 1, "misses": 1, "entries": 1}
    _same_world(fresh, second)
    assert second[0].params is not first[0].params


def test_memo_keys_on_every_field_and_the_seed():
    clear_memo()
    centralized_setup(TINY, seed=0)
    centralized_setup(TINY, seed=1)
    other = CentralProfile(train=SGDConfig(steps=40, lr=0.25, batch_size=32, weight_decay=1e-4, checkpoint_every=20))
    centralized_setup(other, seed=0)
    assert memo_stats() == {"hits": 0, "misses": 3, "entries": 3}


def test_callback_bypasses_the_memo():
    clear_memo()
    centralized_setup(TINY, seed=0)
    events = []
    centralized_setup(TINY, seed=0, callback=events.append)
    assert events, "a caller with a callback gets training's events, so it must train afresh"
    assert memo_stats()["hits"] == 0


def test_memoized_returns_copies():
    clear_memo()
    built = []
    value = memoized("t", ("k",), lambda: built.append(1) or {"x": [1]})
    value["x"].append(2)
    assert memoized("t", ("k",), lambda: built.append(1) or {"x": [0]}) == {"x": [1]}
    assert built == [1]
    clear_memo()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("make,shape", [(lambda: logreg((16,), 5), (16,)),
                                        (lambda: mlp((16,), 5, hidden=(8, 6)), (16,)),
                                        (lambda: cnn((1, 6, 6), 5, channels=(4, 8), groups=2), (1, 6, 6))])
def test_plain_autograd_gradient_is_bitwise_torch_func(make, shape, dtype):
    g = torch.Generator(device="cpu").manual_seed(0)
    fp = FlatParams(make().to(dtype))
    theta = fp.init() + 0.1 * torch.randn(fp.d, generator=g, dtype=dtype, device="cpu")
    x = torch.randn(20, *shape, generator=g, dtype=dtype, device="cpu")
    y = torch.randint(0, 5, (20,), generator=g, device="cpu")
    for wd in (0.0, 0.01):
        want_g, want_v = grad_and_value(lambda t: fp.loss(t, x, y, weight_decay=wd))(theta)
        assert torch.equal(fp.grad(theta, x, y, weight_decay=wd), want_g)
        v, gr = fp.value_and_grad(theta, x, y, weight_decay=wd)
        assert torch.equal(gr, want_g) and torch.equal(v, want_v)
        assert not gr.requires_grad


def test_torch_func_path_kept_inside_transforms_and_for_differentiable_theta():
    fp = FlatParams(mlp((4,), 3, hidden=(5,)))
    g = torch.Generator(device="cpu").manual_seed(1)
    x = torch.randn(6, 4, generator=g, device="cpu")
    y = torch.randint(0, 3, (6,), generator=g, device="cpu")
    thetas = fp.init().repeat(2, 1)
    xs, ys = x.repeat(2, 1, 1), y.repeat(2, 1)
    batched = fp.batched_grad(thetas, xs, ys)  # vmap over grad: must not take the eager path
    assert torch.allclose(batched[0], fp.grad(thetas[0], x, y))
    v = torch.randn(fp.d, generator=g, device="cpu")
    hv = fp.hvp(thetas[0], x, y, v)  # jvp over grad
    assert hv.shape == (fp.d,) and torch.isfinite(hv).all()
    theta = thetas[0].clone().requires_grad_(True)  # second-order use: the gradient stays differentiable
    gg = func_grad(lambda t: fp.grad(t, x, y).pow(2).sum())(theta)
    assert gg.shape == (fp.d,) and torch.isfinite(gg).all()


def _state_fields_equal(a, b) -> None:
    import numpy as np

    assert torch.equal(a.params, b.params) and a.params.dtype == b.params.dtype
    assert np.array_equal(a.train_indices, b.train_indices) and a.train_indices.dtype == b.train_indices.dtype
    assert a.config == b.config and a.history == b.history
    # the cost is what training measured; its seconds differ between two trainings, not between copies
    assert (a.cost.grad_evals, a.cost.messages, a.cost.memory_bytes) == (b.cost.grad_evals, b.cost.messages,
                                                                         b.cost.memory_bytes)
    assert a.checkpoints.keys() == b.checkpoints.keys()
    assert all(torch.equal(a.checkpoints[k], b.checkpoints[k]) for k in a.checkpoints)
    assert torch.equal(a.extras["init"], b.extras["init"])
    assert len(a.extras["batches"]) == len(b.extras["batches"])
    assert all(torch.equal(x, y) for x, y in zip(a.extras["batches"], b.extras["batches"]))


def test_disk_cache_world_is_bitwise_the_trained_one(tmp_path, monkeypatch):
    """Train with the cache off, then fill the cache, then load from it (memo off throughout): every field of
    the state, and the metrics of the model, are identical; the file holds tensors only."""
    from unlearnkit.experiments.world_cache import world_cache_dir

    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    monkeypatch.delenv("UNLEARNKIT_CACHE", raising=False)
    assert world_cache_dir() is None
    prof = CentralProfile(train=SGDConfig(steps=30, lr=0.5, batch_size=32, weight_decay=1e-4, checkpoint_every=10,
                                          eval_every=10))
    fresh = centralized_setup(prof, seed=5)
    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path))
    filled = centralized_setup(prof, seed=5)
    files = list(tmp_path.glob("train_sgd-*.pt"))
    assert len(files) == 1
    torch.load(files[0], weights_only=True)  # loads under the safe loader: plain tensors only
    import unlearnkit.train

    def no_training(*a, **k):
        raise AssertionError("a cache hit must not train")

    with monkeypatch.context() as m:
        m.setattr(unlearnkit.train, "train_sgd", no_training)
        hit = centralized_setup(prof, seed=5)
    for got in (filled, hit):
        _state_fields_equal(fresh[0], got[0])
        _same_world(fresh, got)
    assert hit[0].cost == filled[0].cost  # the loaded world reports the cost measured when it was trained
    assert fresh[0].history, "the profile logs its loss, so the history round-trip is exercised"
    other = centralized_setup(prof, seed=6)  # another key: another file
    assert len(list(tmp_path.glob("train_sgd-*.pt"))) == 2
    assert not torch.equal(other[0].params, hit[0].params)


def test_disk_cache_survives_a_corrupt_file(tmp_path, monkeypatch):
    from unlearnkit.experiments.world_cache import cached_tensors

    monkeypatch.setenv("UNLEARNKIT_CACHE", str(tmp_path))
    calls = []
    compute = lambda: calls.append(1) or {"w": torch.arange(3, device="cpu")}  # noqa: E731
    assert torch.equal(cached_tensors("t", 1, compute)["w"], torch.arange(3, device="cpu"))
    (f,) = tmp_path.glob("t-*.pt")
    f.write_bytes(b"not a tensor file")
    with pytest.warns(RuntimeWarning, match="ignoring the bad entry"):
        assert torch.equal(cached_tensors("t", 1, compute)["w"], torch.arange(3, device="cpu"))
    assert torch.equal(cached_tensors("t", 1, compute)["w"], torch.arange(3, device="cpu"))
    assert calls == [1, 1]
    with pytest.raises(TypeError, match="only tensors"):
        cached_tensors("t", 2, lambda: {"w": [1, 2]})


def test_memoized_on_needs_the_same_objects():
    """Work on live objects hits only for the very same objects (identity), and the key by value."""
    from unlearnkit.experiments.memo import memoized_on

    clear_memo()
    a, b = torch.zeros(2, device="cpu"), torch.zeros(2, device="cpu")
    calls = []
    build = lambda: calls.append(1) or {"v": torch.ones(1, device="cpu")}  # noqa: E731
    memoized_on((a,), "w", ("s", 1), build)
    memoized_on((a,), "w", ("s", 1), build)
    memoized_on((b,), "w", ("s", 1), build)  # equal content, another object: a miss
    memoized_on((a,), "w", ("s", 2), build)  # another setting: a miss
    assert calls == [1, 1, 1]
    clear_memo()


def test_rrdu_runs_memoised_are_identical_and_follow_the_setup(monkeypatch):
    """The RR-DU lab's runs on one world (a frontier's sound run, an explorer's DDP run) are computed once, give
    the numbers a fresh run gives, and a swapped ``world.setup`` (the explorer does that) is a different key."""
    import dataclasses

    from unlearnkit.experiments.rrdu.frontier import sound_run
    from unlearnkit.experiments.rrdu.lab import BackdoorSetup, build_world, run_method

    world = build_world(BackdoorSetup(m=50, T_train=12, T_unlearn=12, local_steps=2, hidden=(16,), eval_every=4),
                        seed=0)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    fresh_ddp = run_method(world, "ddp", seed=0)
    fresh_sound = sound_run(world, "rrdu_exact", 1.0, seed=0)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    clear_memo()
    for _ in range(2):
        ddp, sound = run_method(world, "ddp", seed=0), sound_run(world, "rrdu_exact", 1.0, seed=0)
        assert ddp["final"] == fresh_ddp["final"] and torch.equal(ddp["params"], fresh_ddp["params"])
        assert sound["final"] == fresh_sound["final"] and torch.equal(sound["params"], fresh_sound["params"])
        assert sound["certificate"] == fresh_sound["certificate"]
    assert memo_stats()["hits"] == 2
    old = world.setup
    world.setup = dataclasses.replace(old, epsilon=old.epsilon * 4)
    try:
        run_method(world, "ddp", seed=0)
    finally:
        world.setup = old
    assert memo_stats()["misses"] == 4  # ddp, the sound run, its noisy start; then ddp under the swapped setup
    clear_memo()


def test_pdudt_certified_world_memoised_is_identical(monkeypatch):
    """Notebook 08's certified run and frontier share one trained world; the copy gives the same release."""
    from unlearnkit.experiments.pdudt.frontier import CertifiedPDUDT, certified_world, release

    exp = CertifiedPDUDT(t1=20, seed=0)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    fresh = certified_world(exp)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    clear_memo()
    first = certified_world(exp)
    first["state"].params.add_(1.0)  # mutating a copy must not reach the memo
    again = certified_world(exp)
    assert memo_stats()["hits"] == 1
    for key in ("state", "retrain"):
        assert torch.equal(again[key].params, fresh[key].params)
    a, b = release(again), release(fresh)
    assert {k: a[k] for k in ("test_acc", "backdoor_asr", "dist_to_retrain", "sigma")} == \
        {k: b[k] for k in ("test_acc", "backdoor_asr", "dist_to_retrain", "sigma")}
    clear_memo()


def test_rrdu_frontier_shares_noisy_starts_and_keeps_every_number(monkeypatch):
    """RR-DU's exact variant and DDP calibrate the same training sigma: the frontier trains that noisy start
    once, and its rows are those of a run without the memo."""
    from unlearnkit.experiments.rrdu.frontier import rrdu_frontier
    from unlearnkit.experiments.rrdu.lab import BackdoorSetup, build_world

    world = build_world(BackdoorSetup(m=50, T_train=12, T_unlearn=12, local_steps=2, hidden=(16,), eval_every=4),
                        seed=0)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "0")
    off = rrdu_frontier((1.0,), world=world, paper=False)
    monkeypatch.setenv("UNLEARNKIT_MEMO", "1")
    clear_memo()
    on = rrdu_frontier((1.0,), world=world, paper=False)
    assert on["sound"] == off["sound"]
    assert on["sound"]["rrdu_exact"][0]["sigma_train"] == on["sound"]["ddp"][0]["sigma_train"]
    assert memo_stats()["hits"] >= 1
    clear_memo()
