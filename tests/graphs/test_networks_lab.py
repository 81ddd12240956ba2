"""Notebook 05's experiments: the topology table and D-PSGD trained over several topologies."""

import numpy as np
import pytest

import unlearnkit as uk
from unlearnkit import graphs as g
from unlearnkit.experiments.labs.networks import compare_topologies, topology_table


def test_topology_table_orders_by_gap():
    rows = topology_table(16, ["ring", "complete", "two_clusters", "exponential"])
    assert [r["topology"] for r in rows] == ["complete", "exponential", "ring", "two_clusters"]
    assert rows[0]["mixing_time"] == 0 and rows[-1]["mixing_time"] > rows[-2]["mixing_time"]


def test_compare_topologies_is_the_notebook_loop(digits):
    fed = uk.data.partition(digits, 4, scheme="dirichlet", alpha=0.3, seed=0)
    flat = uk.models.FlatParams(uk.models.make_model("mlp", digits.input_shape, 10, generator=uk.make_generator(0)))
    cfg = uk.decentral.GossipConfig(rounds=3, lr=0.5, batch_size=8, eval_every=3)
    names = ["complete", "ring"]
    rows = compare_topologies(flat, fed, names, cfg, seed=1)
    assert [r["topology"] for r in rows] == names
    for name, row in zip(names, rows):
        # the loop notebook 05 ran before: same graph, same seed for every topology, so the same numbers
        st = uk.decentral.run_gossip(flat, fed, g.make_graph(name, 4), cfg, generator=uk.make_generator(1))
        assert row["mean_consensus"] == np.mean([r["consensus"] for r in st.history])
        assert row["accuracy"] == st.history[-1]["accuracy"]
        assert row["worst_client_accuracy"] == st.history[-1]["client_accuracy_min"]
        assert np.array_equal(row["state"].params.numpy(), st.params.numpy())
    # the complete graph averages exactly every round: its clients stay closest together
    assert rows[0]["mean_consensus"] < rows[1]["mean_consensus"]


def test_compare_topologies_needs_a_topology(digits):
    fed = uk.data.partition(digits, 4, scheme="iid", seed=0)
    flat = uk.models.FlatParams(uk.models.make_model("mlp", digits.input_shape, 10, generator=uk.make_generator(0)))
    with pytest.raises(ValueError, match="topologies"):
        compare_topologies(flat, fed, [], uk.decentral.GossipConfig(rounds=1, lr=0.1))


def test_history_rows_read_a_run_at_a_few_rounds():
    from unlearnkit.experiments.labs.networks import history_rows

    history = [{"round": t + 1, "loss": 1.0 / (t + 1), "consensus": 0.1 * t} for t in range(10)]
    assert history_rows(history, (0, 5, -1)) == [{"round": 1, "consensus": 0.0}, {"round": 6, "consensus": 0.5},
                                                 {"round": 10, "consensus": 0.1 * 9}]
    assert history_rows(history, [2], keys=("loss", "round")) == [{"loss": 1.0 / 3, "round": 3}]
