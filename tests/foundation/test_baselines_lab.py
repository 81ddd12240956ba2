"""The chunked baseline runs behind notebook 01's dashboard, without the widgets."""

import pytest

import unlearnkit as uk
from unlearnkit.experiments import centralized_setup
from unlearnkit.experiments.centralized import CentralProfile
from unlearnkit.experiments.labs.baselines import baseline_chunk, retrain_reference, run_baseline_in_chunks
from unlearnkit.train import SGDConfig


@pytest.fixture(scope="module")
def setup():
    prof = CentralProfile(train=SGDConfig(steps=200, lr=0.5, batch_size=32, weight_decay=1e-4))
    return centralized_setup(prof, seed=0, device="cpu")


def test_chunks_add_up_and_report_after_each(setup):
    state, request = setup
    seen = []
    out = run_baseline_in_chunks(state, request, "finetune", steps=48, chunks=3, lr=0.1,
                                 generator=uk.make_generator(1), on_chunk=lambda h: seen.append(len(h)))
    assert seen == [1, 2, 3, 4] and len(out["history"]) == 4
    assert out["grad_evals"] == out["history"][-1]["grad_evals"] == 48 * 32
    # chunk by chunk is the same as calling the method class chunk by chunk on one generator
    gen, current = uk.make_generator(1), state.params
    for _ in range(3):
        current = baseline_chunk(state, "finetune", current, request, 16, 0.1, generator=gen).params
    assert bool((current == out["params"]).all())


def test_retrain_reference_forgets_the_class(setup):
    state, request = setup
    ref = retrain_reference(state, request, generator=uk.make_generator(7))
    metrics = uk.evaluate.report(state.flat, ref, state.dataset, request)
    assert metrics["forget_acc"] < 0.1


@pytest.mark.parametrize("kw, name", [(dict(name="nope"), "method"), (dict(chunks=0), "chunks"),
                                      (dict(lr=-0.5), "lr")])
def test_bad_inputs_name_the_parameter(setup, kw, name):
    state, request = setup
    args = dict(name="finetune", steps=8, chunks=2, lr=0.1) | kw
    with pytest.raises(ValueError, match=name):
        run_baseline_in_chunks(state, request, args.pop("name"), generator=uk.make_generator(0), **args)
