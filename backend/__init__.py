"""Backend for probing and finetuning CLIP-like models for vision-language compositionality."""
