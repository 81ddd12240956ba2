"""Token SGD (digest 000, Algorithms 2 and 3): exact steps, hop rules, fresh noise, projection, Adam."""

import math

import numpy as np
import pytest
import torch

import unlearnkit as uk
from unlearnkit import graphs
from unlearnkit.decentral import TokenConfig, run_token
from unlearnkit.decentral.token import netdp_sigma, run_netdp
from unlearnkit.models import FlatParams, make_model


@pytest.fixture(scope="module")
def setup():
    ds = uk.data.load("digits", device="cpu")
    fed = uk.data.partition(ds, 5, seed=0)
    flat = FlatParams(make_model("logreg", ds.input_shape, 10, generator=uk.make_generator(0)))
    return ds, fed, flat


def test_algorithm2_step_by_step(setup):
    """Each hop: s*b samples with replacement from the current client, theta <- theta - lr * mean grad."""
    ds, fed, flat = setup
    route = np.array([0, 3, 3, 1])
    cfg = TokenConfig(lr=0.3, batch_size=4, local_batches=2)
    st = run_token(flat, fed, route, cfg, generator=uk.make_generator(11))
    g = uk.make_generator(11)
    theta = flat.init()
    for v in route:
        pool = torch.as_tensor(fed.client_indices[v])
        idx = pool[torch.randint(0, len(pool), (8,), generator=g)]
        theta = theta - 0.3 * flat.grad(theta, ds.x_train[idx], ds.y_train[idx])
    torch.testing.assert_close(st.params, theta)
    assert [r["node"] for r in st.history] == route.tolist()
    assert st.cost.grad_evals == 4 * 8 and st.cost.messages == 2
    assert st.extras["visits"].tolist() == [1, 1, 0, 2, 0]


def test_hop_rule_only_at_u_with_fresh_noise_and_trust_ball(setup):
    ds, fed, flat = setup
    u, rho, sigma = 2, 0.05, 5.0
    route = graphs.rrdu_route(5, u, 0.3, 60, rng=np.random.default_rng(0))
    theta_ref = flat.init()
    noises = []

    def at_u(ctx):
        if ctx.node != u:
            return None
        x, y = ctx.sample(indices=fed.client_indices[u][:10])
        z = ctx.noise(sigma)
        noises.append(z)
        ctx.values["noise_norm"] = float(z.norm())
        return ctx.step(-ctx.gradient(x, y, clip=1.0) + z, center=theta_ref, radius=rho)

    events = []
    st = run_token(flat, fed, route, TokenConfig(lr=0.1, batch_size=8), generator=uk.make_generator(0),
                   init=theta_ref, hop_rule=at_u, callback=events.append)
    at = [r for r in st.history if r["node"] == u]
    assert len(at) == (route == u).sum() == len(noises) > 2
    assert all("noise_norm" in r for r in at)
    assert not any("noise_norm" in r for r in st.history if r["node"] != u)
    assert not torch.allclose(noises[0], noises[1])  # fresh noise at every noisy hop
    assert all(r["step_norm"] > rho for r in at)  # the noise is larger than the ball: projection is active
    # right after each u-hop the model is inside the trust ball
    dists = []

    def recorded(ctx):
        out = at_u(ctx)
        if out is not None:
            dists.append(float((out - theta_ref).norm()))
        return out

    run_token(flat, fed, route, TokenConfig(lr=0.1, batch_size=8), generator=uk.make_generator(0), init=theta_ref,
              hop_rule=recorded)
    assert len(dists) == len(at) and max(dists) <= rho + 1e-6
    assert len(events) == 60 and events[0].kind == "hop" and events[0].node == route[0]


def test_projection_and_netdp(setup):
    ds, fed, flat = setup
    assert netdp_sigma(1.0, 1.0, 1e-5) == pytest.approx(math.sqrt(8 * math.log(1.25e5)))
    cfg = TokenConfig(lr=0.5, batch_size=8, noise_sigma=netdp_sigma(1.0, 2.0, 1e-5), clip=1.0, radius=0.5)
    st = run_netdp(flat, fed, cfg, hops=30, generator=uk.make_generator(1), rng=np.random.default_rng(1))
    assert st.params.norm() <= 0.5 + 1e-5
    norms = [r["noise_norm"] for r in st.history]
    assert len(set(norms)) == 30  # a new draw every hop
    assert np.mean(norms) == pytest.approx(cfg.noise_sigma * math.sqrt(flat.d), rel=0.1)
    with pytest.raises(ValueError, match="noise_sigma"):
        run_netdp(flat, fed, TokenConfig(lr=0.1), hops=3, generator=uk.make_generator(0),
                  rng=np.random.default_rng(0))


def test_clipped_gradient_norm_is_bounded(setup):
    ds, fed, flat = setup
    got = []

    def rule(ctx):
        x, y = ctx.sample()
        g = ctx.gradient(x, y, clip=0.01)
        got.append(g.norm())
        return ctx.step(g)

    run_token(flat, fed, [0, 1], TokenConfig(lr=0.1, batch_size=16), generator=uk.make_generator(0), hop_rule=rule)
    assert all(n <= 0.01 + 1e-6 for n in got)


def test_adam_matches_torch_optim(setup):
    ds, fed, flat = setup
    route = np.array([0, 1, 2, 3])
    cfg = TokenConfig(lr=0.01, batch_size=4, optimizer="adam")
    st = run_token(flat, fed, route, cfg, generator=uk.make_generator(3))
    g = uk.make_generator(3)
    p = torch.nn.Parameter(flat.init())
    opt = torch.optim.Adam([p], lr=0.01, betas=(0.9, 0.999), eps=1e-8)
    for v in route:
        pool = torch.as_tensor(fed.client_indices[v])
        idx = pool[torch.randint(0, len(pool), (4,), generator=g)]
        p.grad = flat.grad(p.detach(), ds.x_train[idx], ds.y_train[idx])
        opt.step()
    torch.testing.assert_close(st.params, p.detach(), rtol=1e-5, atol=1e-6)


def test_walk_learns(setup):
    ds, fed, flat = setup
    route = graphs.simple_walk(graphs.topology.ring(5), 150, start=0, rng=np.random.default_rng(0))
    st = run_token(flat, fed, route, TokenConfig(lr=0.5, batch_size=16, local_batches=2, eval_every=150),
                   generator=uk.make_generator(0))
    assert st.history[-1]["accuracy"] > 0.8


def test_token_errors(setup):
    ds, fed, flat = setup
    with pytest.raises(ValueError, match="route"):
        run_token(flat, fed, [0, 7], TokenConfig(lr=0.1), generator=uk.make_generator(0))
    with pytest.raises(ValueError, match="radius"):
        TokenConfig(lr=0.1, radius=0)
    with pytest.raises(ValueError, match="optimizer"):
        TokenConfig(lr=0.1, optimizer="lbfgs")
    with pytest.raises(ValueError, match="shape"):
        run_token(flat, fed, [0], TokenConfig(lr=0.1), generator=uk.make_generator(0),
                  hop_rule=lambda c: c.theta[:3])
    with pytest.raises(ValueError, match="delta"):
        netdp_sigma(1.0, 1.0, 0.0)


def test_walk_is_the_obvious_loop_to_the_bit(setup):
    """The batched bookkeeping (index tensors made once, losses and step norms read back after the walk) leaves
    every number as the plain hop-by-hop loop computes it."""
    ds, fed, flat = setup
    route = graphs.rrdu_route(5, 0, 0.3, 40, rng=np.random.default_rng(1))
    st = run_token(flat, fed, route, TokenConfig(lr=0.2, batch_size=8), generator=uk.make_generator(3))
    g, theta, losses, norms = uk.make_generator(3), flat.init(), [], []
    for v in route:
        pool = torch.as_tensor(fed.client_indices[v])
        idx = pool[torch.randint(0, len(pool), (8,), generator=g)]
        loss, grad = flat.value_and_grad(theta, ds.x_train[idx], ds.y_train[idx])
        new = theta - 0.2 * grad
        losses.append(float(loss))
        norms.append(float((new - theta).norm()))
        theta = new
    assert torch.equal(st.params, theta)
    assert [r["loss"] for r in st.history] == losses and [r["step_norm"] for r in st.history] == norms
    assert all(type(r["loss"]) is float for r in st.history)
