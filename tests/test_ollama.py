"""The ollama embedder through the real ``ollama`` client against a loopback server speaking /api/embed."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.conftest import run_mem

DIM = 16


def fake_vector(text: str) -> list[float]:
    digest = hashlib.sha256(text.lower().encode()).digest()
    return [b / 255.0 - 0.5 for b in digest[:DIM]]


class OllamaHandler(BaseHTTPRequestHandler):
    requests: list[dict] = []

    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        OllamaHandler.requests.append({"path": self.path, **body})
        if self.path != "/api/embed":
            self._send(404, {"error": "not found"})
        elif body["model"] != "nomic-embed-text":
            self._send(404, {"error": f"model \"{body['model']}\" not found, try pulling it first"})
        else:
            inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
            self._send(200, {"model": body["model"], "embeddings": [fake_vector(t) for t in inputs]})

    def _send(self, status: int, payload: dict) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture
def ollama_host() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), OllamaHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_ollama_embedder_adds_and_searches(ollama_host: str):
    env = {"OLLAMA_HOST": ollama_host, "MEM_EMBEDDER": "ollama:nomic-embed-text"}
    added = run_mem("add", "We chose Redis for the cache layer", env=env)
    assert added.code == 0, added.stderr
    hits = run_mem("search", "We chose Redis for the cache layer", env=env).records
    assert hits[0]["text"] == "We chose Redis for the cache layer"
    assert hits[0]["why"]["semantic"]["score"] > 0.99
    assert any(r["path"] == "/api/embed" for r in OllamaHandler.requests)
    assert run_mem("stats", env=env).records[0]["dim"] == DIM


def test_missing_model_exits_6_naming_host(ollama_host: str):
    result = run_mem("add", "anything", env={"OLLAMA_HOST": ollama_host, "MEM_EMBEDDER": "ollama:nope"})
    assert result.code == 6
    assert ollama_host in result.error["message"] and "nope" in result.error["message"]


def test_ollama_down_exits_6():
    result = run_mem("add", "anything", env={"OLLAMA_HOST": "http://127.0.0.1:9", "MEM_EMBEDDER": "ollama:nomic-embed-text"})
    assert result.code == 6 and "127.0.0.1:9" in result.error["message"]
