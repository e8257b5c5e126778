"""Named losses and recipes: what the Train tab's menus say, and the TrainConfig values a recipe sets.

The papers' recipes are each paper's own settings as far as the paper states them,
for a COCO-style manifest; where a paper is silent (ARO swept its learning rate
without giving the winner) the value is docs/REFERENCE.md's shared convention
("Optimiser") and the recipe says so. Steps for real data assume COCO train
(118,287 images) read in whole batches: one epoch is 462 steps at batch 256, 591 at
batch 200 (`epoch_steps`). Plug-ins add recipes of their own (`backend.plugins`: the
built-in world's runs measured in docs/TOYWORLD.md), listed first.
"""
from __future__ import annotations

from backend import plugins

# loss id -> (name, paper, one line on what it does)
LOSS_INFO = {
    "clip": ("CLIP", "Radford et al. 2021", "symmetric InfoNCE over the batch; the control"),
    "negclip": ("NegCLIP", "Yuksekgonul et al. 2023, ARO",
                "hard-negative captions as extra image->text columns; optional K=3 nearest-neighbour images"),
    "ce_clip": ("CE-CLIP", "Zhang et al. 2024",
                "ITC over typed hard negatives + intra-modal contrast (IMC) + cross-modal rank (CMR)"),
    "hp_hn": ("HP+HN", "Kamath et al. 2024", "CLIP + a hard-negative term + a hard-positive term"),
    "trohn_img": ("TROHN-Img", "Miranda et al. 2024, BiVLC",
                  "CLIP over images plus generated negative images with their negative captions"),
    "tripletclip": ("TripletCLIP", "Patel et al. 2024",
                    "NegCLIP on the pairs plus NegCLIP on the negative pairs (negative image + caption), each "
                    "side's captions the other's negatives"),
    "fsc_clip": ("FSC-CLIP", "Oh et al. 2024",
                 "CLIP + a focal loss with label smoothing over each image's caption and its hard negatives"),
    "countercurate": ("CounterCurate", "Zhang et al. 2024",
                      "CLIP over batches that hold each pair with its counterfactual pairs (grouping)"),
    "eqsim": ("EqSim", "Wang et al. 2023, EqBen",
              "CLIP over pairs and their counterfactuals + equivariant-similarity regulariser on each 2x2 group"),
}

COCO_TRAIN_IMAGES = 118_287


def epoch_steps(batch_size: int, images: int = COCO_TRAIN_IMAGES) -> int:
    """Optimizer steps in one epoch of `images` at `batch_size`, the last partial batch dropped."""
    return images // batch_size


_PAPER_COMMON = {"base_model": "ViT-B-32-quickgelu:openai", "data": "manifest", "batch_size": 256, "lr": 1e-6,
                 "warmup_steps": 50, "weight_decay": 0.1, "eval_benchmarks": []}

PAPER_RECIPES: dict[str, dict] = {
    "COCO: NegCLIP (ARO; lr swept in the paper, 1e-6 here)": {
        **_PAPER_COMMON, "loss": "negclip", "families": ["negclip_swap"], "hard_negative_images": True,
        "steps": 5 * epoch_steps(256)},
    "COCO: CE-CLIP (paper weights alpha 0.2, beta 0.4)": {
        **_PAPER_COMMON, "loss": "ce_clip", "families": ["ce_clip"], "steps": 5 * epoch_steps(256)},
    "COCO: HP+HN (Kamath et al., SVLC losses)": {
        **_PAPER_COMMON, "loss": "hp_hn", "families": ["replace", "binding_swap"], "steps": 5 * epoch_steps(256)},
    "TROHN-Img (BiVLC: batch 200 pairs, 10 epochs)": {
        **_PAPER_COMMON, "loss": "trohn_img", "batch_size": 200, "steps": 10 * epoch_steps(200)},
    # the authors' COCO scripts (ytaek-oh/fsc-clip README): lr 5e-6 (5e-5 with LoRA rank 4), wd 0.1, 5 epochs,
    # warmup 50, batch 256, focal gamma 2, label smoothing 0.02, hard-negative weight 0.5; their local
    # (token-level) term is not implemented here (backend.train.losses_later.fsc_clip_loss); their random text
    # hard negatives (rule-based replacements, swaps, shuffles) are the engine's replace and binding_swap here
    "COCO: FSC-CLIP (global hard-negative focal loss; lr 5e-6, 5 epochs)": {
        **_PAPER_COMMON, "loss": "fsc_clip", "lr": 5e-6, "families": ["replace", "binding_swap"],
        "steps": 5 * epoch_steps(256)},
    "COCO: FSC-CLIP with LoRA rank 4 (lr 5e-5, 5 epochs)": {
        **_PAPER_COMMON, "loss": "fsc_clip", "lr": 5e-5, "lora_rank": 4, "families": ["replace", "binding_swap"],
        "steps": 5 * epoch_steps(256)},
}


def recipes() -> dict[str, dict]:
    """Every recipe the Train tab offers: the plug-ins' first (they run offline), then the papers'."""
    return {**plugins.hooks().recipes, **PAPER_RECIPES}


def loss_label(loss: str) -> str:
    """'NegCLIP (Yuksekgonul et al. 2023, ARO): hard-negative captions as ...'."""
    name, paper, line = LOSS_INFO[loss]
    return f"{name} ({paper}): {line}"
