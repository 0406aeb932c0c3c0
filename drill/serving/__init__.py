"""Serving math on real models and GPUs: the KV formula and presets, Hugging Face configs, GPU spec sheets, per-GPU estimates, and the engine claims the quiz quotes."""
