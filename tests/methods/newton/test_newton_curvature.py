"""Curvature choices for the Newton correction (digest 001 P10-P11): Fisher vs Hessian, CG vs dense."""

import pytest
import torch

from unlearnkit import curvature as cv
from unlearnkit.models import FlatParams, logreg


def _problem(loss="logistic", k=1, n=120, dim=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    flat = FlatParams(logreg((dim,), k), loss=loss)
    flat.module.double()
    theta = torch.randn(flat.d, generator=g, dtype=torch.float64) * 0.7
    x = torch.randn(n, dim, generator=g, dtype=torch.float64)
    x = x / x.norm(dim=1, keepdim=True).clamp_min(1.0)
    y = torch.randint(0, max(k, 2), (n,), generator=g)
    return flat, theta, x, y


@pytest.mark.parametrize("loss,k", [("logistic", 1), ("cross_entropy", 3)])
def test_true_fisher_equals_hessian_exactly_for_logistic_regression(loss, k):
    flat, theta, x, y = _problem(loss, k)
    H = cv.hessian(flat, theta, x, y, weight_decay=0.1)
    F, evals = cv.true_fisher(flat, theta, x, weight_decay=0.1)
    assert torch.allclose(H, F, atol=1e-12)
    assert evals == x.shape[0] * (2 if loss == "logistic" else k)


@pytest.mark.parametrize("loss,k", [("logistic", 1), ("cross_entropy", 3)])
def test_fisher_with_labels_sampled_from_the_model_matches_hessian_in_expectation(loss, k):
    flat, theta, x, y = _problem(loss, k, n=60)
    H = cv.hessian(flat, theta, x, y)
    g = torch.Generator().manual_seed(1)
    F, _ = cv.true_fisher(flat, theta, x, labels="sample", n_draws=400, generator=g)
    rel = float((F - H).norm() / H.norm())
    assert rel < 0.08, rel
    # the *empirical* Fisher (observed labels) is a different matrix away from a well-fit optimum (P10c)
    E = cv.empirical_fisher(flat, theta, x, y)
    assert float((E - H).norm() / H.norm()) > 3 * rel


def test_monte_carlo_fisher_error_shrinks_with_draws():
    flat, theta, x, y = _problem("logistic", 1, n=40)
    H = cv.hessian(flat, theta, x, y)
    errs = []
    for draws in (4, 400):
        F, _ = cv.true_fisher(flat, theta, x, labels="sample", n_draws=draws, generator=torch.Generator().manual_seed(3))
        errs.append(float((F - H).norm()))
    assert errs[1] < errs[0] / 3


@pytest.mark.parametrize("loss,k", [("logistic", 1), ("cross_entropy", 3)])
def test_cg_matches_dense_solve(loss, k):
    flat, theta, x, y = _problem(loss, k)
    b = torch.randn(flat.d, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    for dense, cg in (("hessian", "cg_hessian"), ("fisher", "cg_fisher")):
        zd = cv.solve(dense, flat, theta, x, y, b, weight_decay=0.05, damping=0.01).z
        s = cv.solve(cg, flat, theta, x, y, b, weight_decay=0.05, damping=0.01, cg_tol=1e-12)
        assert s.converged and s.iterations <= flat.d + 2
        assert torch.allclose(zd, s.z, atol=1e-9, rtol=1e-8), (dense, float((zd - s.z).abs().max()))
        assert s.grad_evals == x.shape[0] * s.iterations  # one curvature-vector product = one gradient per sample


def test_operators_match_dense_matrices_and_diag():
    flat, theta, x, y = _problem("cross_entropy", 3)
    v = torch.randn(flat.d, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    H = cv.hessian(flat, theta, x, y, weight_decay=0.2, damping=0.3)
    assert torch.allclose(cv.hessian_operator(flat, theta, x, y, weight_decay=0.2, damping=0.3)(v), H @ v, atol=1e-10)
    F = cv.empirical_fisher(flat, theta, x, y, weight_decay=0.2, damping=0.3)
    assert torch.allclose(cv.fisher_operator(flat, theta, x, y, weight_decay=0.2, damping=0.3)(v), F @ v, atol=1e-10)
    D = cv.diag_fisher(flat, theta, x, y, chunk_size=7)
    assert torch.allclose(D + 0.5, torch.diagonal(F), atol=1e-12)


def test_preconditioned_cg_and_damping_floor():
    flat, theta, x, y = _problem("logistic", 1)
    b = torch.randn(flat.d, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    H = cv.hessian(flat, theta, x, y, weight_decay=0.1)
    op = cv.hessian_operator(flat, theta, x, y, weight_decay=0.1)
    res = cv.conjugate_gradient(op, b, tol=1e-12, preconditioner=torch.diagonal(H))
    assert torch.allclose(res.x, torch.linalg.solve(H, b), atol=1e-9)
    assert torch.linalg.eigvalsh(H).min() >= 0.1 - 1e-12  # the min_eig floor certificates rely on
    assert cv.solve("hessian", flat, theta, x, y, b, weight_decay=0.1, damping=0.2).min_eig == pytest.approx(0.3)


def test_bad_inputs_name_the_parameter():
    flat, theta, x, y = _problem()
    b = torch.zeros(flat.d, dtype=torch.float64)
    with pytest.raises(ValueError, match="curvature"):
        cv.solve("kfac", flat, theta, x, y, b)
    with pytest.raises(ValueError, match="damping"):
        cv.solve("hessian", flat, theta, x, y, b, damping=-1.0)
    with pytest.raises(ValueError, match="diag_fisher"):
        x0 = x.clone()
        x0[:, 0] = 0.0  # a dead feature: zero Fisher diagonal, and no weight decay or damping to lift it
        cv.solve("diag_fisher", flat, theta, x0, y, b)
    with pytest.raises(ValueError, match="generator"):
        cv.true_fisher(flat, theta, x, labels="sample")
    with pytest.raises(ValueError, match="positive definite"):
        cv.conjugate_gradient(lambda v: -v, torch.ones(3, dtype=torch.float64))


def test_cost_unit_dense_hessian_is_d_gradients_per_sample():
    """The package's unit: a Hessian-vector product on n samples costs n, a dense Hessian n * d."""
    flat, theta, x, y = _problem("cross_entropy", 3)
    _, evals = cv.curvature_matrix("hessian", flat, theta, x, y, weight_decay=0.1)
    assert evals == x.shape[0] * flat.d
