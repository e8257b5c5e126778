"""Named losses and recipes: what the Train tab's menus say, and the settings a recipe fills in.

Two families of recipe. The built-in world's are the runs measured in
docs/TOYWORLD.md (`commands.TOY_FINETUNES`). The real-data ones are each paper's
own settings as far as the paper states them, for a COCO-style manifest; where a
paper is silent (ARO swept its learning rate without giving the winner) the
value is REFERENCE.md's shared convention and the recipe says so. Steps for
real data assume COCO train (118,287 images): one epoch is 462 steps at batch
256.
"""
from __future__ import annotations

from backend.train.commands import TOY_FINETUNE_BASE, TOY_FINETUNES

# loss id -> (name, paper, one line on what it does)
LOSS_INFO = {
    "clip": ("CLIP", "Radford et al. 2021", "symmetric InfoNCE over the batch; the control"),
    "negclip": ("NegCLIP", "Yuksekgonul et al. 2023, ARO",
                "hard-negative captions as extra image->text columns; optional K=3 nearest-neighbour images"),
    "ce_clip": ("CE-CLIP", "Zhang et al. 2024",
                "ITC over typed hard negatives + intra-modal contrast (IMC) + cross-modal rank (CMR)"),
    "hp_hn": ("HP+HN", "Kamath et al. 2023", "CLIP + a hard-negative term + a hard-positive term"),
    "trohn_img": ("TROHN-Img", "Miranda et al. 2024, BiVLC",
                  "CLIP over images plus generated negative images with their negative captions"),
}

COCO_EPOCH_STEPS = 462  # 118,287 COCO train images / batch 256
_PAPER_COMMON = {"base_model": "ViT-B-32-quickgelu:openai", "data": "manifest", "batch_size": 256, "lr": 1e-6,
                 "warmup_steps": 50, "weight_decay": 0.1, "eval_benchmarks": []}

RECIPES: dict[str, dict] = {
    **{f"built-in world: {name}": {**TOY_FINETUNE_BASE, **values} for name, values in TOY_FINETUNES.items()},
    "COCO: NegCLIP (ARO; lr swept in the paper, 1e-6 here)": {
        **_PAPER_COMMON, "loss": "negclip", "families": ["negclip_swap"], "hard_negative_images": True,
        "steps": 5 * COCO_EPOCH_STEPS},
    "COCO: CE-CLIP (paper weights alpha 0.2, beta 0.4)": {
        **_PAPER_COMMON, "loss": "ce_clip", "families": ["ce_clip"], "steps": 5 * COCO_EPOCH_STEPS},
    "COCO: HP+HN (Kamath et al., SVLC losses)": {
        **_PAPER_COMMON, "loss": "hp_hn", "families": ["replace", "binding_swap"], "steps": 5 * COCO_EPOCH_STEPS},
    "TROHN-Img (BiVLC: batch 200 pairs, 10 epochs)": {
        **_PAPER_COMMON, "loss": "trohn_img", "batch_size": 200, "steps": 10 * COCO_EPOCH_STEPS},
}


def loss_label(loss: str) -> str:
    """'NegCLIP (Yuksekgonul et al. 2023, ARO): hard-negative captions as ...'."""
    name, paper, line = LOSS_INFO[loss]
    return f"{name} ({paper}): {line}"
