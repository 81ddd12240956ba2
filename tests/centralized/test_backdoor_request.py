"""The centralized backdoor request: a forget task where the original model measurably differs from
retraining on what is forgotten (a random-sample request has no such signal)."""

from dataclasses import replace

import pytest
import torch

from unlearnkit.evaluate import accuracy, backdoor_success
from unlearnkit.experiments import centralized_setup
from unlearnkit.experiments.centralized import CentralProfile, centralized_backdoor_setup
from unlearnkit.train import SGDConfig

FAST = SGDConfig(steps=150, lr=0.5, batch_size=32, weight_decay=1e-4, checkpoint_every=50)
# unit-ball features are ~50x smaller: the convex profiles' projected SGD (descend_rewind_lab)
CONVEX = SGDConfig(steps=200, lr=0.4, batch_size=32, weight_decay=0.01, radius=10.0, checkpoint_every=20)


@pytest.mark.parametrize("unit_ball", [False, True])
def test_backdoor_request_forgets_exactly_the_poisoned_samples(unit_ball):
    prof = CentralProfile(model="logreg", model_kwargs={}, train=CONVEX if unit_ball else FAST, request="backdoor",
                          m=60, unit_ball=unit_ball)
    state, request = centralized_setup(prof, seed=0)
    bd = state.extras["backdoor"]
    assert request.kind == "samples" and sorted(request.indices) == sorted(bd.indices)
    assert (state.dataset.y_train[torch.as_tensor(bd.indices)] == prof.target).all()
    if unit_ball:
        # the triggered test rows live in the same (scaled) space as the training rows
        assert float(state.dataset.x_train.flatten(1).norm(dim=1).max()) <= 1 + 1e-6
        assert float(bd.x_test_triggered.flatten(1).norm(dim=1).max()) <= 1 + 1e-6
    # the planted backdoor works on the trained model: the forget set is answered with its poisoned label
    assert backdoor_success(state.flat, state.params, bd) > 0.3
    xf, yf = state.dataset.train_subset(request.indices)
    assert accuracy(state.flat, state.params, xf, yf) > 0.3


def test_backdoor_setup_is_the_profile_request():
    prof = CentralProfile(model="logreg", model_kwargs={}, train=FAST)
    s1, r1, bd1 = centralized_backdoor_setup(prof, m=20, seed=3)
    s2, r2 = centralized_setup(replace(prof, request="backdoor", m=20), seed=3)
    assert torch.equal(s1.params, s2.params) and list(r1.indices) == list(r2.indices)


@pytest.mark.parametrize("field,value", [("m", 0), ("patch", 0), ("target", -1), ("request", "poison")])
def test_backdoor_profile_rejects_bad_fields(field, value):
    with pytest.raises(ValueError, match=field):
        CentralProfile(**{field: value})


def test_backdoor_profile_rejects_target_outside_classes():
    prof = CentralProfile(model="logreg", model_kwargs={}, train=FAST, request="backdoor", target=10)
    with pytest.raises(ValueError, match="target"):
        centralized_setup(prof, seed=0)
