"""Optional Ollama extraction: a stub Ollama over real HTTP answers under the schema; any failure falls back."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mem.enrich.llm_extract import SCHEMA, extract


@pytest.fixture
def ollama_stub():
    """A local server answering /api/chat with whatever ``replies`` holds next; records each request."""
    state = {"replies": [], "requests": []}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state["requests"].append((self.path, body))
            content = state["replies"].pop(0)
            payload = json.dumps({"model": body["model"], "created_at": "2024-01-01T00:00:00Z", "done": True,
                                  "message": {"role": "assistant", "content": content}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", state
    server.shutdown()


TEXT = "The billing worker timeout was fixed by raising the connection pool size in src/billing/pool.py"


def test_model_entities_and_relations_under_the_schema(ollama_stub):
    host, state = ollama_stub
    state["replies"].append(json.dumps({
        "entities": [{"name": "billing worker", "type": "concept"}, {"name": "connection pool", "type": "concept"}],
        "relations": [{"source": "connection pool", "target": "billing worker", "type": "resolved"},
                      {"source": "ghost", "target": "billing worker", "type": "caused"}],
    }))
    entities, relations, source = extract(TEXT, model="qwen2.5:3b", host=host)
    assert source == "llm"
    keys = [e.key for e in entities]
    assert "billing worker" in keys and "src/billing/pool.py" in keys  # heuristics kept alongside
    assert [(r.source, r.target, r.type) for r in relations] == [("connection pool", "billing worker", "resolved")]
    path, body = state["requests"][0]
    assert path == "/api/chat" and body["format"] == SCHEMA and body["stream"] is False
    assert body["options"]["temperature"] == 0


@pytest.mark.parametrize("reply", ["not json", json.dumps({"entities": "x"}),
                                   json.dumps({"entities": [], "relations": [{"type": "loves"}]})])
def test_malformed_answers_fall_back_to_heuristics(ollama_stub, reply):
    host, state = ollama_stub
    state["replies"].append(reply)
    entities, relations, source = extract(TEXT, host=host)
    assert source == "heuristic" and relations == []
    assert "connection pool" in [e.key for e in entities]


def test_unreachable_ollama_falls_back_quickly():
    entities, relations, source = extract(TEXT, host="http://127.0.0.1:9", timeout=1.0)
    assert source == "heuristic" and relations == [] and entities


# ------------------------------------------------------------------ wired into intake: mem add --extract ollama

from tests.conftest import run_mem  # noqa: E402

PRODUCT_TEXT = "We shipped the new zorblax pipeline to staging after Postgres was upgraded"


def test_add_extract_ollama_stores_model_entities(ollama_stub):
    host, state = ollama_stub
    state["replies"].append(json.dumps({"entities": [{"name": "zorblax", "type": "tool"}], "relations": []}))
    added = run_mem("add", "--extract", "ollama", PRODUCT_TEXT, env={"OLLAMA_HOST": host, "MEM_LLM": "tiny:1b"})
    assert added.code == 0, added.stderr
    assert added.records[0]["status"] == "added"
    assert [body["model"] for _, body in state["requests"]] == ["tiny:1b"]  # MEM_LLM picks the model
    found = run_mem("graph", "entity", "zorblax")
    assert found.code == 0, found.stderr
    assert [m["id"] for m in found.records[0]["memories"]] == [added.records[0]["id"]]
    assert run_mem("graph", "entity", "postgres").code == 0  # the heuristic entities are kept alongside


def test_add_extract_with_ollama_down_falls_back_to_heuristics():
    added = run_mem("add", "--extract", "ollama", PRODUCT_TEXT, env={"OLLAMA_HOST": "http://127.0.0.1:9"})
    assert added.code == 0, added.stderr
    assert added.records[0]["status"] == "added"
    assert run_mem("graph", "entity", "postgres").records[0]["memories"][0]["id"] == added.records[0]["id"]
    assert run_mem("graph", "entity", "zorblax").code == 3  # only a model would have named it


def test_add_unknown_extractor_is_bad_input():
    result = run_mem("add", "--extract", "gpt", PRODUCT_TEXT)
    assert result.code == 4 and "extractor" in result.error["message"]
    assert run_mem("list").records == []
