"""Optional entity and relation extraction by a local model (Ollama), falling back to the heuristics.

The model answers under a strict JSON schema (Ollama's ``format``), with a timeout; any failure
(Ollama down, model missing, timeout, a malformed answer) returns the zero-LLM entities from
``mem.enrich.entities`` and no relations, so intake never depends on a model being there.

>>> ents, rels, source = extract("We moved billing to PostgreSQL because SQLite locked", host="http://127.0.0.1:9", timeout=0.5)
>>> (source, [e.key for e in ents], rels)
('heuristic', ['postgres', 'sqlite'], [])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mem.enrich.entities import Entity, extract_entities
from mem.enrich.entity_keys import canonical

DEFAULT_MODEL = "qwen2.5:3b"
TIMEOUT_S = 20.0
ENTITY_TYPES = ("person", "name", "tool", "package", "path", "identifier", "url", "version", "concept")
RELATION_TYPES = ("caused", "resolved", "motivated", "related")

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "type": {"type": "string", "enum": list(ENTITY_TYPES)}},
                "required": ["name", "type"],
            },
        },
        "relations": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "source": {"type": "string"},
                    "target": {"type": "string"},
                    "type": {"type": "string", "enum": list(RELATION_TYPES)},
                },
                "required": ["source", "target", "type"],
            },
        },
    },
    "required": ["entities", "relations"],
}

PROMPT = (
    "Extract the named things (people, tools, packages, files, identifiers, concepts) mentioned in the "
    "memory below, and the cause/effect relations between them stated in the text (caused, resolved, "
    "motivated; else related). Use the names exactly as written. Answer with JSON only.\n\nMemory:\n{text}"
)


@dataclass(frozen=True)
class Relation:
    """``source`` and ``target`` are entity keys (canonical), ``type`` one of RELATION_TYPES."""

    source: str
    target: str
    type: str


def extract(text: str, *, model: str = DEFAULT_MODEL, host: str | None = None,
            timeout: float = TIMEOUT_S) -> tuple[list[Entity], list[Relation], str]:
    """``(entities, relations, source)`` for ``text``; ``source`` is ``"llm"`` or ``"heuristic"`` (the fallback).

    Entities the model names are keyed with the same ``canonical`` as the heuristics; the
    heuristic entities are kept too (the model may miss a path or a version).
    """
    heuristic = extract_entities(text)
    try:
        answer = _ask(text, model=model, host=host, timeout=timeout)
        entities, relations = _parse(answer)
    except Exception:  # anything at all: the heuristics are always there
        return heuristic, [], "heuristic"
    merged: dict[str, Entity] = {e.key: e for e in heuristic}
    for entity in entities:
        merged.setdefault(entity.key, entity)
    keys = set(merged)
    relations = [r for r in relations if r.source in keys and r.target in keys and r.source != r.target]
    return list(merged.values()), relations, "llm"


def _ask(text: str, *, model: str, host: str | None, timeout: float) -> str:
    import ollama

    client = ollama.Client(host=host or "http://127.0.0.1:11434", timeout=timeout)
    response = client.chat(
        model=model,
        messages=[{"role": "user", "content": PROMPT.format(text=text[:4000])}],
        format=SCHEMA,
        options={"temperature": 0},
        stream=False,
    )
    return str(response["message"]["content"])


def _parse(answer: str) -> tuple[list[Entity], list[Relation]]:
    """Validate the model's JSON against what the schema promised; ValueError otherwise."""
    import orjson

    data = orjson.loads(answer)
    if not isinstance(data, dict) or not isinstance(data.get("entities"), list) or not isinstance(data.get("relations"), list):
        raise ValueError("answer does not follow the schema")
    entities: list[Entity] = []
    for item in data["entities"][:64]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ValueError("entity without a name")
        name = item["name"].strip()
        kind = item.get("type") if item.get("type") in ENTITY_TYPES else "concept"
        key = canonical(name)
        if key and len(key) <= 200:
            entities.append(Entity(key, name[:200], kind))
    relations: list[Relation] = []
    for item in data["relations"][:64]:
        if not isinstance(item, dict) or item.get("type") not in RELATION_TYPES:
            raise ValueError("relation of an unknown type")
        if not isinstance(item.get("source"), str) or not isinstance(item.get("target"), str):
            raise ValueError("relation without ends")
        relations.append(Relation(canonical(item["source"]), canonical(item["target"]), item["type"]))
    return entities, relations
