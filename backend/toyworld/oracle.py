"""Exact truth of captions in scenes (existential semantics).

``holds`` parses the text with the grammar, so it judges any caption of the
grammar, not only the ones the generators produced. Semantics:

* a noun phrase matches an object when every attribute it names agrees;
  attributes it does not name are unconstrained ("shape" matches any shape);
* "X" is true when some object matches X;
* "X and Y" needs two distinct objects matching X and Y;
* "X <rel> Y" needs distinct objects matching X and Y in that relation
  (centres differ by ``RELATION_MARGIN``, see ``scene.relation_holds``);
* "X on the left" needs an object matching X in the left part of the image.

Unparseable text raises ``CaptionParseError`` (a ``ValueError``).
"""
from __future__ import annotations

from .grammar import Caption, NounPhrase, parse
from .scene import Scene, SceneObject, location_holds, relation_holds


def matches(np_: NounPhrase, obj: SceneObject) -> bool:
    """Whether ``obj`` has every attribute the noun phrase names."""
    return ((np_.shape is None or np_.shape == obj.shape)
            and (np_.colour is None or np_.colour == obj.colour)
            and (np_.size is None or np_.size_meaning == obj.size))


def evaluate(caption: Caption, scene: Scene) -> bool:
    """Truth of a parsed caption in a scene."""
    objs = scene.objects
    firsts = [i for i, o in enumerate(objs) if matches(caption.first, o)]
    if caption.kind == "object":
        return bool(firsts)
    if caption.kind == "location":
        where = caption.location_meaning
        return any(location_holds(where, objs[i]) for i in firsts)
    assert caption.second is not None
    seconds = [j for j, o in enumerate(objs) if matches(caption.second, o)]
    if caption.kind == "and":
        return any(i != j for i in firsts for j in seconds)
    relation = caption.relation_meaning
    return any(i != j and relation_holds(relation, objs[i], objs[j])
               for i in firsts for j in seconds)


def holds(caption: str | Caption, scene: Scene) -> bool:
    """Whether the caption (text or parsed) is true of the scene.

    Raises ``CaptionParseError`` (a ``ValueError``) for text outside the grammar.
    """
    return evaluate(parse(caption) if isinstance(caption, str) else caption, scene)
