"""Audits of the certificates: the toy task and its recipes, vectorised trials, every registered method, forgetting scores."""
