"""Experiments of "Certified Unlearning for Neural Networks" (Koloskova et al. ICML 2025): noisy fine-tuning, output perturbation and DP-SGD runners and frontiers."""
