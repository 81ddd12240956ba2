"""``python -m unlearnkit bench audit`` is registered and its rows are well formed (no timing thresholds)."""

from unlearnkit.benchmarks import available_benches


def test_bench_audit_rows(monkeypatch):
    from unlearnkit.benchmarks import audit as bench
    from unlearnkit.experiments.audits import canaries as audit_canaries, forgetting as audit_forgetting, vectorised as audit_vectorised

    assert "audit" in available_benches()
    # the slow experiment rows have their own tests; here only the harness and the throughput rows
    monkeypatch.setattr(audit_canaries, "canary_bench_rows", lambda quick: [{"kind": "one_run"}])
    monkeypatch.setattr(audit_forgetting, "forgetting_bench_rows", lambda quick: [{"kind": "forgetting"}])
    monkeypatch.setattr("unlearnkit.audit.validation.validate_statistics",
                        lambda **kw: [{"method": "cp_split", "refuted_calibrated": 0.0, "refuted_under": 1.0}])
    real = audit_vectorised.trials_per_second
    monkeypatch.setattr(audit_vectorised, "trials_per_second", lambda method, n_trials, device, sequential_trials:
                        real(method, n_trials=200, device=device, sequential_trials=min(sequential_trials, 4)))
    rows = bench.bench_audit(quick=True)
    kinds = [r["kind"] for r in rows]
    assert kinds[0] == "throughput" and {"validation", "ceiling", "one_run", "forgetting"} <= set(kinds)
    tp = rows[0]
    assert tp["device"] == "cpu" and tp["trials_per_second"] > tp["sequential_trials_per_second"] > 0
