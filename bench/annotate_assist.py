"""Could a CLIP model pre-filter BiVLC step 3? Measured on toy campaigns, where every right answer is known.

Builds a toy campaign (the renderer draws each item's 4 candidates: with
probability p_none none shows the negative caption, else one does and the
others have a defect: a wrong colour, a missing object, a flipped relation),
scores every candidate with the model (`backend.annotate.assist`), and
compares the model's pick with the truth:

- pick right: items with a right image where the model's top candidate is one;
- none caught: items with no right image that the model calls "none" (its best
  candidate scores no higher for the negative caption than for the original);
- wrongly none: items with a right image the model would have dropped.

Run: ``.venv/bin/python bench/annotate_assist.py --items 300 --model toyworld``
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from backend.annotate import assist, campaigns, service  # noqa: E402
from backend.core.auth import cli_actor  # noqa: E402
from backend.core.settings import Settings  # noqa: E402
from backend.generate.job import GenerateConfig, run_job  # noqa: E402
from backend.jobs import Reporter  # noqa: E402
from backend.models.loading import load_model  # noqa: E402


def interval(share: dict) -> str:
    if not share["n"]:
        return "n/a (no such items)"
    low, high = share["interval"]
    return f"{100 * share['rate']:.1f}% of {share['n']} (95% CI {100 * low:.1f}-{100 * high:.1f}%)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default="toyworld", help="a model spec (default: the shipped toy model)")
    parser.add_argument("--p-none", type=float, default=0.25)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as workspace, open(os.devnull, "w") as quiet:
        settings = Settings.load(env={"COMPLAB_WORKSPACE": workspace})
        service.create_campaign(cli_actor(), "assist", "toyworld", settings, n_items=args.items, seed=args.seed,
                                config={"gold_rate": 0.0})
        run_job(GenerateConfig.from_dict({"campaign": "assist", "preset": "toyworld", "seed": args.seed,
                                          "p_none": args.p_none, "db": str(settings.db),
                                          "data_dir": str(settings.data_dir)}), Reporter(out=quiet))
        scored = assist.score_candidates(settings.db, "assist", campaigns.campaign_dir(settings.data_dir, "assist"),
                                         load_model(args.model, device="cpu"))
        result = assist.report(settings.db, "assist")
    print(f"model {args.model}: {scored} candidates of {result['items']} toy items scored "
          f"(p_none {args.p_none}, seed {args.seed})")
    print(f"pick right:   {interval(result['pick_right'])}")
    print(f"none caught:  {interval(result['none_caught'])}")
    print(f"wrongly none: {interval(result['wrongly_none'])}")


if __name__ == "__main__":
    main()
