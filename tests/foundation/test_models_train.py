import numpy as np
import pytest
import torch
from hypothesis import given, strategies as st

import unlearnkit as uk
from unlearnkit.models import FlatParams, cnn, logreg, make_model, mlp, project_l2_ball
from unlearnkit.train import SGDConfig, draw_batches, train_sgd


def test_device_default_and_override(monkeypatch):
    monkeypatch.delenv("UNLEARNKIT_DEVICE", raising=False)
    assert uk.device().type == ("cuda" if torch.cuda.is_available() else "cpu")
    monkeypatch.setenv("UNLEARNKIT_DEVICE", "cpu")
    assert uk.device().type == "cpu"
    if not torch.cuda.is_available():
        monkeypatch.setenv("UNLEARNKIT_DEVICE", "cuda")
        with pytest.raises(ValueError, match="UNLEARNKIT_DEVICE"):
            uk.device()


def test_flatparams_roundtrip_and_forward_matches_module():
    g = uk.make_generator(0)
    model = make_model("mlp", (1, 8, 8), 10, generator=g, hidden=(16,))
    fp = FlatParams(model)
    theta = fp.init()
    assert theta.numel() == sum(p.numel() for p in model.parameters()) == fp.d
    x = torch.randn(7, 1, 8, 8, generator=g)
    torch.testing.assert_close(fp.forward(theta, x), model(x))
    theta2 = theta + 1.0
    fp.load_into(theta2)
    torch.testing.assert_close(fp.init(), theta2)


def test_init_from_generator_is_reproducible():
    a = FlatParams(make_model("cnn", (1, 8, 8), 10, generator=uk.make_generator(5))).init()
    b = FlatParams(make_model("cnn", (1, 8, 8), 10, generator=uk.make_generator(5))).init()
    c = FlatParams(make_model("cnn", (1, 8, 8), 10, generator=uk.make_generator(6))).init()
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_gradients_hvp_and_per_sample_against_autograd():
    torch.manual_seed(0)
    fp = FlatParams(logreg((5,), 3))
    theta = torch.randn(fp.d, dtype=torch.float64)
    fp.module.double()
    x, y = torch.randn(9, 5, dtype=torch.float64), torch.randint(0, 3, (9,))
    wd = 0.1
    t = theta.clone().requires_grad_(True)
    loss = fp.loss(t, x, y, weight_decay=wd)
    (g_ref,) = torch.autograd.grad(loss, t, create_graph=True)
    torch.testing.assert_close(fp.grad(theta, x, y, weight_decay=wd), g_ref.detach())
    v = torch.randn(fp.d, dtype=torch.float64)
    (hv_ref,) = torch.autograd.grad(g_ref @ v, t)
    torch.testing.assert_close(fp.hvp(theta, x, y, v, weight_decay=wd), hv_ref)
    H = fp.hessian(theta, x, y, weight_decay=wd)
    torch.testing.assert_close(H, H.T)
    torch.testing.assert_close(H @ v, hv_ref)
    ps = fp.per_sample_grads(theta, x, y)
    torch.testing.assert_close(ps.mean(0) + wd * theta, g_ref.detach())


def test_batched_grad_equals_per_client_loop():
    fp = FlatParams(mlp((4,), 3, hidden=(6,)))
    thetas = torch.randn(5, fp.d)
    xs, ys = torch.randn(5, 8, 4), torch.randint(0, 3, (5, 8))
    batched = fp.batched_grad(thetas, xs, ys, weight_decay=0.01)
    loop = torch.stack([fp.grad(thetas[i], xs[i], ys[i], weight_decay=0.01) for i in range(5)])
    torch.testing.assert_close(batched, loop)


def test_batchnorm_is_refused():
    with pytest.raises(ValueError, match="BatchNorm"):
        FlatParams(torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.BatchNorm1d(3)))


def test_cnn_has_no_batchnorm_and_runs_on_digits_shape():
    net = cnn((1, 8, 8), 10, norm="group")
    assert not any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in net.modules())
    assert any(isinstance(m, torch.nn.GroupNorm) for m in net.modules())
    assert net(torch.randn(2, 1, 8, 8)).shape == (2, 10)
    with pytest.raises(ValueError, match="norm"):
        cnn((1, 8, 8), 10, norm="batch")


@given(st.lists(st.floats(-100, 100), min_size=1, max_size=8), st.floats(0, 50))
def test_projection_lands_in_ball_and_is_idempotent(values, radius):
    theta = torch.tensor(values, dtype=torch.float64)
    p = project_l2_ball(theta, radius=radius)
    assert float(p.norm()) <= radius * (1 + 1e-9) + 1e-12
    torch.testing.assert_close(project_l2_ball(p, radius=radius), p)
    if float(theta.norm()) <= radius:
        torch.testing.assert_close(p, theta)


def test_draw_batches_sampling_modes():
    g = uk.make_generator(0)
    wr = draw_batches(10, SGDConfig(steps=50, lr=0.1, batch_size=4), g)
    assert len(wr) == 50 and all(b.numel() == 4 for b in wr)
    assert any(len(set(b.tolist())) < 4 for b in wr)  # with replacement repeats happen
    wo = draw_batches(10, SGDConfig(steps=5, lr=0.1, batch_size=5, sampling="without_replacement"), g)
    assert sorted(torch.cat(wo[:2]).tolist()) == list(range(10))
    full = draw_batches(10, SGDConfig(steps=3, lr=0.1, sampling="full"), g)
    assert all(b.tolist() == list(range(10)) for b in full)


def test_training_learns_digits_with_checkpoints_and_events(digits):
    g = uk.make_generator(0)
    fp = FlatParams(make_model("logreg", digits.input_shape, 10, generator=g))
    events = []
    cfg = SGDConfig(steps=300, lr=0.5, batch_size=32, weight_decay=1e-3, checkpoint_every=100, eval_every=50)
    st_ = train_sgd(fp, digits, None, cfg, generator=g, callback=events.append)
    acc = uk.evaluate.accuracy(fp, st_.params, digits.x_test, digits.y_test)
    assert acc > 0.9
    assert sorted(st_.checkpoints) == [0, 100, 200, 300]
    torch.testing.assert_close(st_.checkpoints[300], st_.params)
    assert len(events) == 300 and events[-1].kind == "step" and "loss" in events[-1].values
    assert st_.cost.grad_evals == 300 * 32 and len(st_.history) == 6


def test_training_is_reproducible_and_projection_holds(digits):
    def run(seed):
        g = uk.make_generator(seed)
        fp = FlatParams(make_model("logreg", digits.input_shape, 10, generator=g))
        return train_sgd(fp, digits, np.arange(200), SGDConfig(steps=40, lr=1.0, radius=2.0), generator=g).params

    a, b = run(1), run(1)
    assert torch.equal(a, b)
    assert float(a.norm()) <= 2.0 + 1e-5


@pytest.mark.parametrize("field,value,match", [
    ("steps", 0, "steps=0"), ("lr", -1.0, "lr=-1.0"), ("sampling", "poisson", "sampling='poisson'"),
    ("radius", 0.0, "radius=0.0"), ("batch_size", 0, "batch_size=0"),
])
def test_sgd_config_validation_names_the_field(field, value, match):
    kwargs = {"steps": 10, "lr": 0.1, field: value}
    with pytest.raises(ValueError, match=match):
        SGDConfig(**kwargs)


@pytest.mark.parametrize("case", ["softmax", "softmax_no_bias", "logistic"])
def test_a_linear_models_hessian_in_closed_form_equals_d_hessian_vector_products(case):
    """A single Linear layer's Hessian is one product over the samples; it equals the d autograd Hessian-vector
    products (the general path) to round-off, with the regulariser, in the flat layout (weight rows, then bias)."""
    from torch import nn
    from torch.func import vmap

    from unlearnkit.models import FlatParams, _linear_model_hessian

    g = torch.Generator(device="cpu").manual_seed(3)
    if case == "logistic":
        module, loss, y = nn.Sequential(nn.Linear(6, 1)), "logistic", torch.randint(0, 2, (40,), generator=g)
    else:
        module = nn.Sequential(nn.Flatten(), nn.Linear(12, 4, bias=case == "softmax"))
        loss, y = "cross_entropy", torch.randint(0, 4, (40,), generator=g)
    x = torch.randn((40, 12) if case != "logistic" else (40, 6), generator=g, dtype=torch.float64)
    flat = FlatParams(module.double(), loss=loss)
    theta = torch.randn(flat.d, generator=g, dtype=torch.float64)
    assert _linear_model_hessian(flat, theta, x, y) is not None
    eye = torch.eye(flat.d, dtype=torch.float64)
    general = vmap(lambda v: flat.hvp(theta, x, y, v, weight_decay=0.3))(eye)
    torch.testing.assert_close(flat.hessian(theta, x, y, weight_decay=0.3), general, rtol=0, atol=1e-13)
    mlp = FlatParams(nn.Sequential(nn.Linear(6, 3), nn.ReLU(), nn.Linear(3, 2)).double())
    assert _linear_model_hessian(mlp, mlp.init(), x[:, :6], y % 2) is None
