"""Experiments of RR-DU (Lamri & Maniatakos): the walk runners, the certified frontier, the walk audit."""
