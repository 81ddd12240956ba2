"""Experiments of the decentralized Newton/Fisher unlearning paper (Wu et al. 2026): runners, frontier, audit, baselines."""
