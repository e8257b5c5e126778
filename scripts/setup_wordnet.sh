#!/usr/bin/env bash
# Lay out Debian's WordNet 3.0 files as an NLTK corpus in a project-local dir.
# NLTK's reader needs a `lexnames` file that Debian does not ship, so we write it.
set -euo pipefail
src=/usr/share/wordnet
dest="${1:-.cache/nltk_data}/corpora/wordnet"
[ -f "$dest/lexnames" ] && exit 0
[ -f "$src/data.noun" ] || { echo "WordNet not found in $src (apt-get install wordnet-base wordnet-sense-index)" >&2; exit 1; }
mkdir -p "$dest"
for f in "$src"/data.* "$src"/index.* "$src"/*.exc; do cp "$f" "$dest/"; done
names="adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body
noun.cognition noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive
noun.object noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation
noun.shape noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication
verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception
verb.possession verb.social verb.stative verb.weather adj.ppl"
i=0
for n in $names; do
  case "$n" in adj.all|adj.pert|adj.ppl) pos=3;; adv.*) pos=4;; noun.*) pos=1;; *) pos=2;; esac
  printf '%02d\t%s\t%d\n' "$i" "$n" "$pos" >> "$dest/lexnames.tmp"
  i=$((i + 1))
done
mv "$dest/lexnames.tmp" "$dest/lexnames"
