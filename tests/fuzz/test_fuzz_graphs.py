"""Fuzz the graphs: topologies, mixing matrices, walks. A clear error or a finite result, never a hang."""

from __future__ import annotations

import numpy as np
import pytest
from fuzzkit import FUZZ, check_contract, junk, wild_floats, wild_ints
from hypothesis import example, given
from hypothesis import strategies as st

from unlearnkit import graphs as G

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")
sizes = st.one_of(wild_ints, st.integers(2, 12), st.sampled_from([10**6, 10**7]))


@FUZZ
@given(name=st.one_of(st.sampled_from(sorted(G.TOPOLOGIES)), st.text(max_size=4)), n=sizes,
       seed=st.integers(0, 3))
@example(name="erdos_renyi", n=10**6, seed=0)  # never returned before the fix
@example(name="complete", n=10**6, seed=0)  # never returned before the fix
@example(name="ring", n=10**7, seed=0)  # never returned before the fix
@example(name="random_regular", n=1000, seed=0)  # 27 s in the spring layout before the fix
def test_make_graph(name, n, seed):
    g = check_contract(G.make_graph, name, n, seed=seed, names=("n", "topology", "tries", "degree", "rows", "k"))
    if g is not None:
        assert g.number_of_nodes() == n
        W = check_contract(G.mixing_matrix, g, names=("rule",))
        gap = check_contract(G.spectral_gap, W, names=("W",))
        assert gap is None or -1e-9 <= gap <= 1 + 1e-9


matrices = st.integers(1, 4).flatmap(lambda k: st.lists(st.lists(st.one_of(wild_floats, st.floats(0, 1)),
                                                                 min_size=k, max_size=k), min_size=k, max_size=k))


@FUZZ
@given(W=st.one_of(matrices, st.just([[np.nan, 0.0], [0.0, 1.0]]), st.just([[2.0, 0.0], [0.0, 3.0]])))
@example(W=[[2.0, 0.0], [0.0, 3.0]])  # a non-stochastic matrix got a spectral gap before the fix
@example(W=[[np.nan, 0.0], [0.0, 1.0]])  # a NaN matrix got a spectral gap before the fix
def test_matrices(W):
    check_contract(G.spectral_gap, W, names=("W",))
    check_contract(G.mixing_time, W, names=("W", "tol"), allow_inf=True)
    check_contract(G.walks.stationary_distribution, W, names=("P",))


@FUZZ
@given(n=sizes, u=wild_ints, p=wild_floats, hops=st.one_of(wild_ints, st.just(10**12)), seed=st.integers(0, 3))
@example(n=4, u=0, p=0.5, hops=10**12, seed=0)  # MemoryError before the fix
def test_walks(n, u, p, hops, seed):
    rng = np.random.default_rng(seed)
    names = ("n", "u", "p", "hops")
    route = check_contract(G.rrdu_route, n, u, p, hops, rng=rng, names=names)
    check_contract(G.walks.uniform_route, n, hops, rng=rng, names=names)
    check_contract(G.walks.transition_matrix, kind="rrdu", n=n, u=u, p=p, names=names)
    if route is not None:
        counts = check_contract(G.walks.visit_counts, route, n, names=names)
        assert counts is None or counts.sum() == len(route)
    check_contract(G.walks.observer_probability, n, p, names=names)


@FUZZ
@given(graph=st.one_of(junk, st.sampled_from(["ring", "star", "two_clusters"])), hops=wild_ints, start=wild_ints)
def test_simple_walk(graph, hops, start):
    g = G.make_graph(graph, 5) if graph in ("ring", "star", "two_clusters") else graph
    check_contract(G.simple_walk, g, hops, start=start, rng=np.random.default_rng(0),
                   names=("G", "hops", "start", "networkx"))
