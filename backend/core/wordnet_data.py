"""Debian's WordNet 3.0 files laid out as the NLTK corpus, where nobody ran a set-up script.

NLTK reads WordNet from ``<nltk_data>/corpora/wordnet`` and never downloads it
here. Debian's ``wordnet-base`` and ``wordnet-sense-index`` packages (the
``packages.txt`` of a Space, the Docker image's) install the same files under
``/usr/share/wordnet`` but without the ``lexnames`` file NLTK's reader needs,
so the corpus is copied into an NLTK data folder and ``lexnames`` written.
``make`` and the Docker image do it at set-up (``python -m backend.core.wordnet_data``);
a Space runs no set-up script, so `provide` does it on first use.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

SOURCE = Path("/usr/share/wordnet")
ROOT = Path(__file__).resolve().parents[2]
# Where `provide` lays the corpus out: the first of these it may write to (the checkout's cache, else the user's).
CACHE_DIRS = (ROOT / ".cache" / "nltk_data", Path.home() / ".cache" / "complab" / "nltk_data")
PACKAGES = "wordnet-base wordnet-sense-index"
_PATTERNS = ("data.*", "index.*", "*.exc")

# WordNet 3.0's lexicographer files, in their numbered order (the number each synset's data line records).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body "
    "noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive "
    "noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity "
    "noun.relation noun.shape noun.state noun.substance noun.time verb.body verb.change verb.cognition "
    "verb.communication verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl"
).split()
_POS_NUMBER = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The ``lexnames`` file: number, name and part-of-speech number of every lexicographer file."""
    return "".join(f"{number:02d}\t{name}\t{_POS_NUMBER[name.split('.')[0]]}\n" for number, name in enumerate(LEXNAMES))


def corpus_dir(nltk_data: Path) -> Path:
    return Path(nltk_data) / "corpora" / "wordnet"


def lay_out(nltk_data: Path, source: Path = SOURCE) -> Path:
    """Copy the corpus from `source` into `nltk_data` (idempotent) and return its folder.

    Built in a temporary sibling and renamed into place, so the app's warm-up
    thread, a request and a job process laying it out at once never leave
    (or read) a half-copied corpus.
    """
    target = corpus_dir(nltk_data)
    if (target / "lexnames").is_file():
        return target
    files = sorted(path for pattern in _PATTERNS for path in Path(source).glob(pattern))
    if not any(path.name == "data.noun" for path in files):
        raise FileNotFoundError(f"WordNet not found in {source}: install the Debian packages {PACKAGES}.")
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():  # an interrupted copy by an older set-up script (ours appear whole, by rename)
        shutil.rmtree(target)
    staging = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
    try:
        for path in files:
            shutil.copyfile(path, staging / path.name)
        (staging / "lexnames").write_text(lexnames_text(), encoding="ascii")
        os.rename(staging, target)
    except OSError:
        if not (target / "lexnames").is_file():  # losing a race to another process is fine; anything else is not
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def provide(source: Path = SOURCE, candidates: tuple[Path, ...] | None = None) -> Path | None:
    """Lay Debian's WordNet out in the first writable cache folder and put that folder on NLTK's search path.

    Returns the NLTK data folder, or None when Debian's WordNet is not
    installed or no candidate folder can be written (WordNet is then off,
    which the perturbation engine handles).
    """
    import nltk

    if not (Path(source) / "data.noun").is_file():
        return None
    for nltk_data in candidates or CACHE_DIRS:
        try:
            lay_out(nltk_data, source)
        except OSError:
            continue
        if str(nltk_data) not in nltk.data.path:
            nltk.data.path.append(str(nltk_data))
        return Path(nltk_data)
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Lay out Debian's WordNet as an NLTK corpus.")
    parser.add_argument("nltk_data", nargs="?", type=Path, default=CACHE_DIRS[0],
                        help=f"NLTK data folder (default {CACHE_DIRS[0]})")
    parser.add_argument("--source", type=Path, default=SOURCE, help=f"Debian's WordNet folder (default {SOURCE})")
    args = parser.parse_args(argv)
    try:
        print(lay_out(args.nltk_data, args.source))
    except OSError as error:
        print(error, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
