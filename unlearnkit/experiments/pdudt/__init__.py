"""Experiments of PDUDT (decentralized unlearning with dynamic topologies): runners, frontier, the gap to retraining."""
