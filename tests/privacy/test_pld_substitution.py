"""The PLD of the Poisson-subsampled Gaussian under the substitution (replace-one) relation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unlearnkit.privacy import PLD, gaussian_composition_epsilon, pld_epsilon
from unlearnkit.privacy.pld import pld_delta
from unlearnkit.privacy.pld import _loss_of_x, _x_of_loss


@pytest.mark.parametrize("q, sigma", [(0.01, 1.1), (0.3, 0.7), (1.0, 2.0), (0.5, 0.01), (0.999, 50.0)])
def test_the_inverse_loss_inverts_the_loss(q, sigma):
    eps = np.array([-30.0, -3.0, -0.5, -1e-3, 0.0, 1e-3, 0.5, 3.0, 30.0])
    x = _x_of_loss(eps, q, sigma, "replace")
    assert np.all(np.diff(x) > 0)
    back = np.array([_loss_of_x(float(v), q, sigma, "replace") for v in x])
    assert np.allclose(back, eps, atol=1e-8 * max(1.0, 1.0 / sigma**2))


@pytest.mark.parametrize("sigma, steps, delta", [(10.0, 100, 1e-5), (3.0, 5, 1e-6)])
def test_q1_is_the_gaussian_of_sensitivity_two(sigma, steps, delta):
    exact = gaussian_composition_epsilon([2.0 * math.sqrt(steps) / sigma], delta)
    b = pld_epsilon(1.0, sigma, steps, delta, relation="substitution")
    assert b.lower <= exact <= b.upper and b.width < 0.05


def _dp_accounting_replace(q, sigma, steps, delta, grid):
    pldm = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    from dp_accounting import NeighboringRelation

    d = pldm.from_gaussian_mechanism(sigma, sensitivity=1.0, sampling_prob=q, value_discretization_interval=grid,
                                     neighboring_relation=NeighboringRelation.REPLACE_ONE)
    return float(d.self_compose(steps).get_epsilon_for_delta(delta))


@pytest.mark.parametrize("q, sigma, steps", [(0.01, 1.1, 1000), (0.04, 1.5, 2250), (0.1, 2.0, 100)])
def test_agrees_with_dp_accounting_replace_one(q, sigma, steps):
    """dp_accounting's REPLACE_ONE relation is the same pair: its pessimistic value at our grid equals our upper
    end (measured: to 1e-9), and its value on a ten times finer grid lies in our bracket."""
    delta = 1e-5
    ours = pld_epsilon(q, sigma, steps, delta, relation="substitution")
    assert ours.upper == pytest.approx(_dp_accounting_replace(q, sigma, steps, delta, 1e-3), rel=1e-3)
    assert ours.lower <= _dp_accounting_replace(q, sigma, steps, delta, 1e-4) <= ours.upper


def test_substitution_costs_more_than_add_remove_and_at_most_group_privacy_of_two():
    q, sigma, steps, delta = 0.02, 1.2, 500, 1e-5
    sub = pld_epsilon(q, sigma, steps, delta, relation="substitution")
    ar = pld_epsilon(q, sigma, steps, delta)
    assert ar.upper < sub.lower
    # a substitution is a removal then an addition: (eps, delta) -> (2 eps, (1 + e^eps) delta)
    assert sub.upper <= 2 * pld_epsilon(q, sigma, steps, delta / (1 + math.exp(2 * ar.upper))).upper
    d = pld_delta(q, sigma, steps, sub.upper, relation="substitution")
    assert d.lower <= delta <= d.upper * (1 + 1e-9) + 1e-15


def test_relations_do_not_mix():
    a = PLD.subsampled_gaussian(0.1, 1.0, grid=1e-2, relation="substitution")
    b = PLD.subsampled_gaussian(0.1, 1.0, grid=1e-2)
    assert a.relation == "substitution" and b.relation == "add_remove" and "substitution" in repr(a)
    assert a.pmf("replace").probs.sum() == pytest.approx(1.0, abs=1e-9)
    with pytest.raises(ValueError, match="other.relation="):
        a.compose(b)
    with pytest.raises(ValueError, match="direction="):
        a.pmf("remove")
    with pytest.raises(ValueError, match="relation="):
        PLD.subsampled_gaussian(0.1, 1.0, relation="replace_one")
    with pytest.raises(ValueError, match="relation="):
        pld_epsilon(0.1, 1.0, 10, 1e-5, relation="bounded")
