"""CPU seconds the perturbation engine spends on SugarCrepe captions, for this tree and a peer tree.

    NLTK_DATA=.cache/nltk_data python bench/perturb_speed.py --data /work/shared/data/sugar-crepe \
        --peer /path/to/an/older/checkout [--captions 150] [--runs 3] [--mode every|probe]

`--mode every` (the default) keeps every candidate (`max_per_subtype` unbounded, no refinement), as the
perturbation rules' tests ask; each candidate is parsed and labelled, so this measures the label's rules as much
as the families. `--mode probe` times what the Probe asks for (the defaults: five per subtype, refined by the
blind scorer). Each run is a fresh process that loads spaCy and WordNet, warms up on one caption, then times
`perturb` over the first `--captions` replace_rel captions by id; runs of the two trees alternate, so that a change
in load hits both alike. It also says whether the two trees made the same variants, labels and edits (a digest of
them per run): the proof a speed-up owes. The peer is another checkout of this project (e.g. `git worktree add
/tmp/base <commit>`).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CHILD = """
import hashlib, json, sys, time
from backend.perturb import perturb
from backend.perturb.engine import warm_up
captions, options = json.loads(sys.stdin.read())
warm_up()
perturb("A dog on a couch.", seed=0, **options)
start = time.process_time()
made = [perturb(caption, seed=0, **options) for caption in captions]
seconds = time.process_time() - start
rows = [[v.text, v.kind, v.family, v.subtype, v.plausible, [[e.before, e.after, e.start, e.end] for e in v.edits]]
        for variants in made for v in variants]
print(json.dumps([seconds, len(rows), hashlib.sha256(json.dumps(rows).encode()).hexdigest()]))
"""


# What each mode passes to `perturb`: every candidate kept, unrefined (what the rule tests ask), or the Probe's
# defaults (five per subtype, chosen by the blind scorer's refinement).
MODES = {"every": {"max_per_subtype": 10**6, "scorer": None}, "probe": {}}


def timed(tree: Path, captions: list[str], mode: str) -> tuple[float, int, str]:
    """CPU seconds, variants made and a digest of every variant (text, kind, family, subtype, label, edits) by
    `tree`'s engine over `captions`, in a fresh process: equal digests say a speed-up changed no output."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _CHILD], cwd=tree, env=env, input=json.dumps([captions, MODES[mode]]),
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {done.stderr[-2000:]}")
    seconds, count, digest = json.loads(done.stdout.strip().splitlines()[-1])
    return seconds, count, digest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="folder with SugarCrepe's replace_rel.json")
    parser.add_argument("--peer", type=Path, required=True, help="another checkout of the project")
    parser.add_argument("--captions", type=int, default=150)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mode", choices=sorted(MODES), default="every",
                        help="every: every candidate kept (the rule tests); probe: the Probe's defaults")
    args = parser.parse_args()
    items = json.loads((args.data / "replace_rel.json").read_text())
    captions = [items[key]["caption"] for key in sorted(items, key=int)[: args.captions]]
    ours, peer = [], []
    for _ in range(args.runs):
        ours.append(timed(ROOT, captions, args.mode))
        peer.append(timed(args.peer, captions, args.mode))
    for name, runs in (("this tree", ours), ("peer", peer)):
        print(f"{name:9}: median {statistics.median(run[0] for run in runs):.1f} s of CPU "
              f"{[round(run[0], 1) for run in runs]}, {runs[0][1]} variants")
    ratio = statistics.median(run[0] for run in ours) / statistics.median(run[0] for run in peer)
    print(f"ratio this/peer: {ratio:.2f}")
    digests = {run[2] for run in ours + peer}
    print("same outputs as the peer: " + ("yes" if len(digests) == 1 else
                                          "NO: the two engines make different variants or labels"))


if __name__ == "__main__":
    main()
