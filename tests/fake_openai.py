"""A small OpenAI-compatible server on 127.0.0.1 (embeddings, chat, models) for tests.

It records every request, can be told to fail the next N requests with a status code, and
answers chat with a canned reply that cites passage [1].
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class FakeOpenAI:
    dim: int = 8
    reply: str = "りゅうおうのHPは200です [1]。"
    fail_next: int = 0
    fail_status: int = 500
    requests: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        return app

    def _should_fail(self) -> bool:
        if self.fail_next > 0:
            self.fail_next -= 1
            return True
        return False

    def _vector(self, text: str) -> list[float]:
        digest = hashlib.sha256(text.encode()).digest()
        return [b / 255.0 + 0.01 for b in digest[: self.dim]]

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("embeddings", body))
        if self._should_fail():
            return web.json_response({"error": {"message": "boom"}}, status=self.fail_status)
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": self._vector(text)}
            for i, text in enumerate(inputs)
        ]
        return web.json_response(
            {
                "object": "list",
                "data": list(reversed(data)),  # out of order on purpose: clients must sort
                "model": body["model"],
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    async def _chat(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(("chat", body))
        if self._should_fail():
            return web.json_response({"error": {"message": "down"}}, status=self.fail_status)
        return web.json_response(
            {
                "id": "chatcmpl-1",
                "object": "chat.completion",
                "created": 0,
                "model": body["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": self.reply},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        self.requests.append(("models", {}))
        return web.json_response({"object": "list", "data": [{"id": "m", "object": "model"}]})
