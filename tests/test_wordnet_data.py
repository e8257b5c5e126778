"""Debian's WordNet laid out as NLTK's corpus: by the set-up command, and on first use where no set-up ran (a Space)."""
import functools
import subprocess
import sys
from pathlib import Path

import nltk
import pytest

from backend.core import wordnet_data
from backend.perturb import lexicon

ROOT = Path(__file__).resolve().parents[1]
needs_debian_wordnet = pytest.mark.skipif(not (wordnet_data.SOURCE / "data.noun").is_file(),
                                          reason="Debian's wordnet-base is not installed")


@pytest.mark.system
@needs_debian_wordnet
def test_set_up_command_writes_the_corpus(tmp_path):
    result = subprocess.run([sys.executable, "-m", "backend.core.wordnet_data", str(tmp_path)], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "corpora" / "wordnet" / "lexnames").read_text() == wordnet_data.lexnames_text()


def test_missing_debian_wordnet_is_named_with_its_packages(tmp_path):
    with pytest.raises(FileNotFoundError, match="wordnet-base wordnet-sense-index"):
        wordnet_data.lay_out(tmp_path / "nltk_data", source=tmp_path / "absent")
    assert wordnet_data.provide(source=tmp_path / "absent", candidates=(tmp_path / "nltk_data",)) is None
    assert not (tmp_path / "nltk_data").exists()


@needs_debian_wordnet
def test_unwritable_folder_is_skipped_for_the_next(tmp_path):
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert wordnet_data.provide(candidates=(blocked / "nltk_data", tmp_path / "second")) == tmp_path / "second"
    assert (tmp_path / "second" / "corpora" / "wordnet" / "lexnames").is_file()


@needs_debian_wordnet
def test_app_lays_wordnet_out_on_first_use_where_no_set_up_ran(tmp_path, monkeypatch):
    """What a Space does: nothing set up and NLTK finds no WordNet; the app's reader still loads, from the cache folder.

    In this process rather than a fresh one (whose `import nltk` alone takes seconds): NLTK's search path, which
    it derives from NLTK_DATA and HOME at import, is set to what it is where nothing was set up, and the app's
    reader cache is a fresh one, so the whole first-use path runs: find, lay out, load.
    """
    searched = [folder for folder in nltk.data.path
                if not any((Path(folder) / "corpora" / name).exists() for name in ("wordnet", "wordnet.zip"))]
    monkeypatch.setattr(nltk.data, "path", list(searched))
    with pytest.raises(LookupError):  # else this would prove nothing
        nltk.data.find("corpora/wordnet")
    cache = tmp_path / "cache" / "nltk_data"
    monkeypatch.setattr(wordnet_data, "CACHE_DIRS", (cache,))
    monkeypatch.setattr(lexicon, "wordnet", functools.cache(lexicon.wordnet.__wrapped__))  # this process's first use
    reader = lexicon.wordnet()
    assert reader.synset("dog.n.01").lexname() == "noun.animal"  # the lexnames written match Debian's data
    assert reader.synset("run.v.01").lexname() == "verb.motion"
    assert reader.synsets("red", "a")[0].lexname() == "adj.all"
    assert nltk.data.path == [*searched, str(cache)]  # NLTK now finds it there, for the next reader too
    corpus = wordnet_data.corpus_dir(cache)
    assert nltk.data.find("corpora/wordnet") == str(corpus) and (corpus / "lexnames").is_file()
    assert wordnet_data.lay_out(cache) == corpus  # a second run keeps the first copy
