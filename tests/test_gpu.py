"""GPU tests (marker ``gpu``, skipped without CUDA; ``pytest -m gpu`` selects them).

On a machine with a GPU :func:`unlearnkit.device` picks CUDA, and a tensor created without a device
then mixes devices. CI has no GPU, so ``tests/test_devices.py`` checks the source statically and on the
``meta`` default device; these tests are the ground truth on a real GPU:

- every registered method's quick run on CUDA gives the metrics of the CPU run (same seed; the randomness
  comes from CPU generators, so only floating-point summation order differs between the devices);
- core primitives give the same numbers on CPU and CUDA: ``FlatParams`` gradients, ``gaussian_noise`` drawn
  from a CPU generator onto a CUDA target, and the vectorised gossip step.
"""

from __future__ import annotations

import math

import pytest
import torch

pytestmark = pytest.mark.gpu

from unlearnkit.experiments.registry import available_methods  # noqa: E402

#: metrics that are probabilities (accuracies, AUC): absolute tolerance; distances: relative tolerance.
PROB_TOL = 0.05
DIST_RTOL = 0.1


def _run(name: str, device: str, monkeypatch) -> dict:
    monkeypatch.setenv("UNLEARNKIT_DEVICE", device)
    return available_methods()[name].run("quick", seed=0, progress=False)


@pytest.mark.parametrize("name", sorted(available_methods()))
def test_quick_run_on_cuda_matches_the_cpu(name, monkeypatch):
    cpu = _run(name, "cpu", monkeypatch)["metrics"]
    cuda = _run(name, "cuda", monkeypatch)["metrics"]
    assert set(cpu) == set(cuda), f"{name}: CUDA reports {sorted(cuda)}, CPU {sorted(cpu)}"
    for key, a in cpu.items():
        b = cuda[key]
        if a is None or b is None or not all(isinstance(v, (int, float)) for v in (a, b)):
            assert a == b, f"{name}: {key} is {b!r} on CUDA and {a!r} on the CPU"
            continue
        if not (math.isfinite(a) and math.isfinite(b)):
            assert a == b, f"{name}: {key} is {b!r} on CUDA and {a!r} on the CPU"
        elif "dist" in key:
            assert abs(a - b) <= DIST_RTOL * max(abs(a), abs(b)) + 1e-3, f"{name}: {key} CPU {a} vs CUDA {b}"
        else:
            assert abs(a - b) <= PROB_TOL, f"{name}: {key} CPU {a} vs CUDA {b}"


def test_flatparams_gradients_agree_across_devices():
    from unlearnkit import make_generator
    from unlearnkit.models import FlatParams, make_model

    g = make_generator(0)
    x = torch.randn(64, 10, generator=g, dtype=torch.float64)
    y = torch.randint(0, 3, (64,), generator=g)
    flat = FlatParams(make_model("mlp", (10,), 3, generator=make_generator(1), hidden=(16,)).double())
    theta = flat.init().double()
    ref = flat.grad(theta, x, y, weight_decay=0.01)
    flat.module.to("cuda")
    got = flat.grad(theta.cuda(), x.cuda(), y.cuda(), weight_decay=0.01)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-10, atol=1e-12)


def test_gaussian_noise_from_a_cpu_generator_onto_cuda_is_the_cpu_draw():
    from unlearnkit import make_generator
    from unlearnkit.privacy.noise import gaussian_noise

    like = torch.zeros(1000, dtype=torch.float64)
    ref = gaussian_noise(like, 0.7, make_generator(5))
    got = gaussian_noise(like.cuda(), 0.7, make_generator(5))
    assert got.device.type == "cuda" and got.dtype == torch.float64
    torch.testing.assert_close(got.cpu(), ref, rtol=0, atol=0)


def test_gossip_step_agrees_across_devices():
    from unlearnkit import make_generator
    from unlearnkit.decentral.gossip import gossip_step
    from unlearnkit.graphs import make_graph
    from unlearnkit.graphs.mixing import mixing_matrix
    from unlearnkit.models import FlatParams, logreg

    n, d_in = 8, 5
    g = make_generator(2)
    flat = FlatParams(logreg((d_in,), 3))
    flat.module.double()
    thetas = flat.init().double().expand(n, -1).clone() + 0.01 * torch.randn(n, flat.d, generator=g,
                                                                              dtype=torch.float64)
    # one local step: xs (N, b, d_in), ys (N, b)
    batches = [(torch.randn(n, 6, d_in, generator=g, dtype=torch.float64), torch.randint(0, 3, (n, 6), generator=g))]
    W = torch.as_tensor(mixing_matrix(make_graph("ring", n)), dtype=torch.float64)
    ref, ref_loss = gossip_step(flat, thetas, batches, W, lr=0.1, weight_decay=0.01)
    flat.module.to("cuda")
    got, got_loss = gossip_step(flat, thetas.cuda(), [(x.cuda(), y.cuda()) for x, y in batches], W.cuda(),
                                lr=0.1, weight_decay=0.01)
    assert got.device.type == "cuda"
    torch.testing.assert_close(got.cpu(), ref, rtol=1e-10, atol=1e-12)
    torch.testing.assert_close(got_loss.cpu(), ref_loss, rtol=1e-10, atol=1e-12)


# -- the live demos at GPU sizes (notebook 05; unlearnkit.viz.scaled) ------------------------------------

def test_gossip_trajectory_on_cuda_matches_the_cpu():
    from unlearnkit import graphs as _g
    from unlearnkit.viz.networks import initial_values
    from unlearnkit.viz.scaled import averaging_on_device

    G = _g.make_graph("two_clusters", 1024, seed=0)
    W = _g.mixing_matrix(G)
    x0 = initial_values(G, "halves")
    ref = averaging_on_device(W, x0, 40, device="cpu")
    got = averaging_on_device(W, x0, 40, device="cuda")
    assert got.shape == (41, 1024)
    assert abs(got - ref).max() < 1e-10


def test_explorers_offer_gpu_ranges_and_answer_at_1024_clients(monkeypatch):
    import time

    from unlearnkit.viz.networks import NetworkExplorer, WalkExplorer

    monkeypatch.delenv("UNLEARNKIT_DEVICE", raising=False)  # unlearnkit.device() picks CUDA
    net = NetworkExplorer(topology="two_clusters", n=12)
    walk = WalkExplorer()
    assert net.n.max == 1024 and walk.n.max == 1024 and walk.hops.max == 20000
    assert net.n.value == 12 and walk.n.value == 10  # the defaults stay the CPU's
    t0 = time.perf_counter()
    net.n.value = 1024
    net_s = time.perf_counter() - t0
    assert net.last_error is None and net.current["traj"].shape == (41, 1024)
    t0 = time.perf_counter()
    walk.n.value, walk.hops.value = 1024, 20000
    walk_s = time.perf_counter() - t0
    assert walk.last_error is None and walk.current["T"] == 20000
    print(f"N=1024 redraw: gossip explorer {net_s:.2f} s, walk explorer (20,000 hops) {walk_s:.2f} s")


def test_bench_puts_cpu_and_gpu_side_by_side(monkeypatch):
    from unlearnkit.benchmarks import bench_devices, run_benches

    monkeypatch.delenv("UNLEARNKIT_DEVICE", raising=False)
    assert bench_devices() == ["cpu", "cuda"]
    rows = run_benches(["gossip"], quick=True, echo=lambda s: None)["benchmarks"]["gossip"]["rows"]
    assert [r["device"] for r in rows[:2]] == ["cpu", "cuda"]
