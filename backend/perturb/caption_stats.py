"""Counts over public caption text: word trigrams (for the text-only scorer) and co-occurrences (for additions).

The project ships one file of them, `caption-stats.json.gz`, built by this module's `main` from two sources of
COCO 2017 val captions (the COCO Consortium's annotations are CC BY 4.0):

* the positive captions of SugarCrepe's items with EVEN ids (SugarCrepe's repository is MIT-licensed);
* COCO's own `captions_val2017.json` (five captions per image), but only of the images that no ODD-id SugarCrepe
  item shows: 3,750 of the 5,000 images. Counts over about 2,800 captions vouched for too few pairs ("a log",
  "a rack" had nothing seen beside them); these add about 16,000 more.

Odd ids are where the engine is measured, so nothing measured there was counted here, not even another caption
of the same photo: the blind scorer is never scored on captions it was built from (a caption that sits under an
even id in any subset is in the file, and `bench/` leaves such captions out of every odd-id measurement).

What is counted, per caption (spaCy parse, lemmas lower-cased):

* ``trigrams``: word trigrams with two start symbols and an end symbol (`words` says what a word is);
* ``nouns``: in how many captions each noun lemma occurs, and ``noun_pairs``: in how many two of them do;
* ``amod``: adjective + noun pairs ("wooden table"), ``dobj``: verb + object ("ride horse"), ``nsubj``:
  subject + verb ("dog run").

    .venv/bin/python -m backend.perturb.caption_stats --data /work/shared/data/sugar-crepe \
        --coco annotations/captions_val2017.json --out FILE

(`captions_val2017.json` is in http://images.cocodataset.org/annotations/annotations_trainval2017.zip.)
"""
from __future__ import annotations

import argparse
import functools
import gzip
import json
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

STATS_PATH = Path(__file__).with_name("caption-stats.json.gz")
SOURCE = ("SugarCrepe (github.com/RAIVNLab/sugar-crepe, MIT) positive captions of even-id items, "
          "which are COCO 2017 val captions (CC BY 4.0), and COCO's captions_val2017.json captions (CC BY 4.0) "
          "of the images no odd-id SugarCrepe item shows")
START, END = "<s>", "</s>"
_WORD = re.compile(r"[a-z]+|[0-9]+")
SUBSETS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")
SEP = "|"


def words(text: str) -> list[str]:
    """Lower-case words and numbers; punctuation and case say nothing a blind scorer should read."""
    return _WORD.findall(text.lower())


def pair_key(first: str, second: str) -> str:
    """Key of an unordered noun pair."""
    return SEP.join(sorted((first, second)))


@dataclass(frozen=True)
class CaptionStats:
    """The counts of one corpus, read-only."""

    source: str
    captions: int
    trigrams: dict[str, int]
    nouns: dict[str, int]
    noun_pairs: dict[str, int]
    amod: dict[str, int]
    dobj: dict[str, int]
    nsubj: dict[str, int]

    def together(self, first: str, second: str) -> int:
        """Captions naming both nouns."""
        return self.noun_pairs.get(pair_key(first, second), 0)

    def given(self, noun: str, context: str) -> float:
        """Share of the captions naming `context` that also name `noun` (0 when `context` is unseen)."""
        seen = self.nouns.get(context, 0)
        return self.together(noun, context) / seen if seen else 0.0

    def to_json(self) -> dict:
        return {"source": self.source, "captions": self.captions, "trigrams": self.trigrams, "nouns": self.nouns,
                "noun_pairs": self.noun_pairs, "amod": self.amod, "dobj": self.dobj, "nsubj": self.nsubj}


def count_trigrams(texts: Iterable[str]) -> Counter:
    counts: Counter = Counter()
    for text in texts:
        padded = [START, START, *words(text), END]
        counts.update(" ".join(padded[i : i + 3]) for i in range(len(padded) - 2))
    return counts


def build(captions: Sequence[str], source: str = SOURCE) -> CaptionStats:
    """Count `captions` (distinct captions: a repeated one would count twice)."""
    from backend.perturb.nlp import load_spacy
    from backend.perturb.parse_reading import noun_lemma, verb_lemma

    nouns: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    amod: Counter[str] = Counter()
    dobj: Counter[str] = Counter()
    nsubj: Counter[str] = Counter()
    for doc in load_spacy().pipe([caption.lower() for caption in captions], batch_size=128):
        lemmas = sorted({noun_lemma(t) for t in doc if t.tag_ in ("NN", "NNS") and t.is_alpha})
        nouns.update(lemmas)
        pairs.update(pair_key(a, b) for i, a in enumerate(lemmas) for b in lemmas[i + 1 :])
        for token in doc:
            if token.dep_ == "amod" and token.head.tag_ in ("NN", "NNS") and token.is_alpha:
                amod[f"{token.lower_}{SEP}{noun_lemma(token.head)}"] += 1
            elif token.dep_ == "dobj" and token.tag_ in ("NN", "NNS") and token.head.pos_ == "VERB":
                dobj[f"{verb_lemma(token.head)}{SEP}{noun_lemma(token)}"] += 1
            elif token.dep_ == "nsubj" and token.tag_ in ("NN", "NNS") and token.head.pos_ == "VERB":
                nsubj[f"{noun_lemma(token)}{SEP}{verb_lemma(token.head)}"] += 1
    return CaptionStats(source, len(captions), dict(count_trigrams(captions)), dict(nouns), dict(pairs),
                        dict(amod), dict(dobj), dict(nsubj))


def save(stats: CaptionStats, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        json.dump(stats.to_json(), handle, separators=(",", ":"), sort_keys=True)


def load(path: Path) -> CaptionStats:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        data = json.load(handle)
    return CaptionStats(**data)


@functools.cache
def shipped() -> CaptionStats:
    """The counts the project ships (see the module docstring for their source and licence)."""
    return load(STATS_PATH)


def _sugarcrepe_rows(data: Path) -> Iterable[tuple[int, dict]]:
    for subset in SUBSETS:
        rows = json.loads((data / f"{subset}.json").read_text())
        for key in sorted(rows, key=int):
            yield int(key), rows[key]


def _normal(caption: str) -> str:
    return " ".join(caption.lower().split())


def sugarcrepe_captions(data: Path, parity: int) -> list[str]:
    """Distinct positive captions of SugarCrepe items whose id has this parity (0 even, 1 odd), in file order.
    A caption that also sits under an id of the other parity is kept only for even (it was seen there)."""
    by_parity: dict[int, dict[str, str]] = {0: {}, 1: {}}
    for key, row in _sugarcrepe_rows(data):
        caption = row["caption"].strip()
        by_parity[key % 2].setdefault(_normal(caption), caption)
    if parity == 0:
        return list(by_parity[0].values())
    return [caption for key, caption in by_parity[1].items() if key not in by_parity[0]]


def coco_captions(path: Path, data: Path) -> list[str]:
    """The captions in a COCO captions file (`captions_val2017.json`) of the images that no odd-id SugarCrepe item
    shows, in file order: held-out photos stay unseen, through any of their five captions."""
    held_out = {row["filename"] for key, row in _sugarcrepe_rows(data) if key % 2 == 1}
    coco = json.loads(path.read_text())
    files = {image["id"]: image["file_name"] for image in coco["images"]}
    return [note["caption"].strip() for note in coco["annotations"] if files[note["image_id"]] not in held_out]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the shipped caption counts from SugarCrepe's even ids "
                                                 "and COCO's captions of the photos no odd id shows.")
    parser.add_argument("--data", type=Path, required=True, help="folder with SugarCrepe's 7 subset .json files")
    parser.add_argument("--coco", type=Path, help="COCO's captions_val2017.json (its other photos' captions)")
    parser.add_argument("--out", type=Path, default=STATS_PATH)
    args = parser.parse_args(argv)
    found = sugarcrepe_captions(args.data, 0) + (coco_captions(args.coco, args.data) if args.coco else [])
    distinct: dict[str, str] = {}
    for caption in found:
        distinct.setdefault(_normal(caption), caption)
    captions = list(distinct.values())
    stats = build(captions)
    save(stats, args.out)
    print(f"{len(captions)} captions, {len(stats.trigrams)} trigrams, {len(stats.nouns)} nouns -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
