"""Debian's WordNet laid out as NLTK's corpus: by the set-up command, and on first use where no set-up ran (a Space)."""
import os
import subprocess
import sys
from pathlib import Path

import nltk
import pytest
from nltk.corpus.reader.wordnet import WordNetCorpusReader

from backend.core import wordnet_data

ROOT = Path(__file__).resolve().parents[1]
needs_debian_wordnet = pytest.mark.skipif(not (wordnet_data.SOURCE / "data.noun").is_file(),
                                          reason="Debian's wordnet-base is not installed")


@needs_debian_wordnet
def test_laid_out_corpus_loads_with_known_lexnames(tmp_path, monkeypatch):
    corpus = wordnet_data.lay_out(tmp_path / "nltk_data")
    monkeypatch.setattr(nltk.data, "path", [*nltk.data.path, str(tmp_path / "nltk_data")])  # NLTK reads only there
    reader = WordNetCorpusReader(str(corpus), None)
    assert reader.synset("dog.n.01").lexname() == "noun.animal"
    assert reader.synset("run.v.01").lexname() == "verb.motion"
    assert reader.synsets("red", "a")[0].lexname() == "adj.all"
    assert wordnet_data.lay_out(tmp_path / "nltk_data") == corpus  # a second run keeps the first copy


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


_FIRST_USE = """
import sys
from pathlib import Path
import nltk
from backend.core import wordnet_data
from backend.perturb.lexicon import wordnet
try:
    nltk.data.find("corpora/wordnet")
    sys.exit("NLTK already finds WordNet: this would prove nothing")
except LookupError:
    pass
wordnet_data.CACHE_DIRS = (Path(sys.argv[1]),)
print(wordnet().synset("dog.n.01").lexname())
"""


@pytest.mark.system
@needs_debian_wordnet
def test_app_lays_wordnet_out_on_first_use_where_no_set_up_ran(tmp_path):
    """What a Space does: NLTK_DATA unset and nothing set up; the reader still loads, from the cache folder."""
    env = {key: value for key, value in os.environ.items() if key != "NLTK_DATA"}
    env["HOME"] = str(tmp_path / "home")
    cache = tmp_path / "cache" / "nltk_data"
    result = subprocess.run([sys.executable, "-c", _FIRST_USE, str(cache)], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "noun.animal"
    assert (cache / "corpora" / "wordnet" / "lexnames").is_file()
