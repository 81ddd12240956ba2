"""Many token walks as one tensor: each walk is the per-walk loop's walk, on either gradient kernel."""

import math

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import TokenConfig
from unlearnkit.decentral.many_walks import run_walks
from unlearnkit.decentral.token import TokenOptimizer
from unlearnkit.models import FlatParams, make_model, project_l2_ball


@pytest.fixture(scope="module")
def setup():
    ds = uk.data.load("digits", device="cpu")
    fed = uk.data.partition(ds, 5, seed=0)
    return ds, fed


def _loop(flat, ds, fed, routes, cfg, seed):
    """The walks one by one, with the minibatch rows and noise drawn as run_walks draws them."""
    K, T = routes.shape
    size = cfg.local_batches * cfg.batch_size
    g = uk.make_generator(seed)
    u = torch.rand((T, K, size), generator=g, device="cpu")
    noise = [torch.randn((K, flat.d), generator=g, device="cpu") for _ in range(T)] if cfg.noise_sigma else None
    out = []
    for k in range(K):
        theta, opt = flat.init(), TokenOptimizer(cfg, flat.d, "cpu", torch.float32)
        center = theta.clone() if cfg.center == "init" else torch.zeros_like(theta)
        for t in range(T):
            pool = torch.as_tensor(fed.client_indices[routes[k, t]])
            idx = pool[(u[t, k] * len(pool)).long().clamp_max(len(pool) - 1)]
            x, y = ds.x_train[idx], ds.y_train[idx]
            if math.isinf(cfg.clip):
                grad = flat.grad(theta, x, y, weight_decay=cfg.weight_decay)
            else:
                per = flat.per_sample_grads(theta, x, y)
                grad = (per * torch.clamp(cfg.clip / per.norm(dim=1, keepdim=True).clamp_min(1e-12), max=1.0)).mean(0)
                grad = grad + cfg.weight_decay * theta
            if cfg.noise_sigma:
                grad = grad + cfg.noise_sigma * noise[t][k]
            theta = project_l2_ball(opt.step(theta, grad), center, cfg.radius)
        out.append(theta)
    return torch.stack(out)


@pytest.mark.parametrize("model,cfg,kernel", [
    ("mlp", TokenConfig(lr=0.2, batch_size=4, local_batches=2, weight_decay=0.01), "batched_linear"),
    ("logreg", TokenConfig(lr=0.05, batch_size=4, optimizer="adam", noise_sigma=0.3, radius=2.0, center="init"),
     "batched_linear"),
    ("logreg", TokenConfig(lr=0.1, batch_size=4, clip=0.5, noise_sigma=0.2, weight_decay=0.01), "vmap"),
])
def test_each_walk_is_the_loops_walk(setup, model, cfg, kernel):
    ds, fed = setup
    flat = FlatParams(make_model(model, ds.input_shape, 10, generator=uk.make_generator(0)))
    routes = np.stack([graphs.rrdu_route(5, 1, 0.3, 12, rng=np.random.default_rng(k)) for k in range(3)])
    w = run_walks(flat, fed, routes, cfg, generator=uk.make_generator(7))
    assert w.kernel == kernel and w.params.shape == (3, flat.d)
    torch.testing.assert_close(w.params, _loop(flat, ds, fed, routes, cfg, 7), rtol=1e-5, atol=1e-6)
    assert w.visits.tolist() == [np.bincount(r, minlength=5).tolist() for r in routes]
    assert w.cost.grad_evals == 3 * 12 * cfg.local_batches * cfg.batch_size
    assert w.losses.shape == (12, 3) and bool(torch.isfinite(w.losses).all()) == (kernel == "batched_linear")


def test_one_route_and_bad_input(setup):
    ds, fed = setup
    flat = FlatParams(make_model("logreg", ds.input_shape, 10, generator=uk.make_generator(0)))
    w = run_walks(flat, fed, [0, 1, 1, 2], TokenConfig(lr=0.1), generator=uk.make_generator(0))
    assert w.params.shape == (1, flat.d) and w.cost.messages == 2
    with pytest.raises(ValueError, match="outside"):
        run_walks(flat, fed, [[0, 7]], TokenConfig(lr=0.1), generator=uk.make_generator(0))
    with pytest.raises(ValueError, match="init has shape"):
        run_walks(flat, fed, [[0, 1]], TokenConfig(lr=0.1), generator=uk.make_generator(0), init=torch.zeros(3))


def test_one_walk_takes_the_unbatched_path_with_the_same_maths(setup):
    ds, fed = setup
    flat = FlatParams(make_model("mlp", ds.input_shape, 10, generator=uk.make_generator(0)))
    routes = graphs.rrdu_route(5, 0, 0.3, 10, rng=np.random.default_rng(3))[None]
    cfg = TokenConfig(lr=0.2, batch_size=4, weight_decay=0.01)
    w = run_walks(flat, fed, routes, cfg, generator=uk.make_generator(2))
    torch.testing.assert_close(w.params, _loop(flat, ds, fed, routes, cfg, 2), rtol=1e-5, atol=1e-6)
