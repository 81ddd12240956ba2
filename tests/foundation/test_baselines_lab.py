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


def test_baseline_reports_run_each_baseline_once_in_order_on_one_generator(setup):
    state, request = setup
    from unlearnkit.evaluate import report
    from unlearnkit.experiments.labs.baselines import baseline_reports
    from unlearnkit.methods.baselines import Finetune, FinetuneConfig, GradientAscent, GradientAscentConfig, Retrain

    rows = baseline_reports(state, request, steps=16, generator=uk.make_generator(4))
    assert list(rows) == ["original", "retrain", "finetune", "gradient_ascent"]
    assert rows["original"] == report(state.flat, state.params, state.dataset, request)
    gen = uk.make_generator(4)  # the same runs by hand, in the same order on one generator
    by_hand = [Retrain().unlearn(state, request, generator=gen).params,
               Finetune().unlearn(state, request, FinetuneConfig(steps=16), generator=gen).params,
               GradientAscent().unlearn(state, request, GradientAscentConfig(), generator=gen).params]
    for name, p in zip(["retrain", "finetune", "gradient_ascent"], by_hand):
        assert rows[name] == report(state.flat, p, state.dataset, request)
    assert rows["retrain"]["forget_acc"] < rows["original"]["forget_acc"]
