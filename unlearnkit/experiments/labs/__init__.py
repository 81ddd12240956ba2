"""The per-notebook labs: forgetting baselines (01), noise calibration (02), networks and walks (05), the process runtime."""
