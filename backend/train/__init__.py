"""Finetuning engine: config, data, objectives, checkpoints and the training loop."""
