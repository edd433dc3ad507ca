"""A fake Slack workspace on 127.0.0.1: the Web API methods shiori calls, a response_url
endpoint, and a Socket Mode websocket. Every call is recorded for assertions."""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

BOT_USER = "UBOT"


@dataclass
class FakeSlack:
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # method -> responses to give before answering normally: (status, headers)
    failures: dict[str, list[tuple[int, dict[str, str]]]] = field(default_factory=dict)
    thread_messages: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    base_url: str = ""
    socket_envelopes: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    socket_acks: list[str] = field(default_factory=list)
    usergroup_members: list[str] = field(default_factory=list)
    _ts: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)
        app.router.add_post("/respond", self._respond)
        app.router.add_get("/socket", self._socket)
        return app

    def methods(self, name: str) -> list[dict[str, Any]]:
        return [args for method, args in self.calls if method == name]

    async def wait_for(self, method: str, count: int = 1, timeout: float = 30.0) -> None:
        async def poll() -> None:
            while len(self.methods(method)) < count:
                await asyncio.sleep(0.02)

        await asyncio.wait_for(poll(), timeout)

    async def _args(self, request: web.Request) -> dict[str, Any]:
        if request.method == "GET":
            return {}
        if request.content_type == "application/json":
            return dict(await request.json())
        form = await request.post()
        args: dict[str, Any] = {key: str(value) for key, value in form.items()}
        for key in ("blocks",):
            if isinstance(args.get(key), str):
                args[key] = json.loads(args[key])
        return args

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await self._args(request)
        args.update(dict(request.query.items()))
        self.calls.append((method, args))
        queued = self.failures.get(method)
        if queued:
            status, headers = queued.pop(0)
            error = "ratelimited" if status == 429 else "internal_error"
            return web.json_response({"ok": False, "error": error}, status=status, headers=headers)
        return web.json_response(self._answer(method, args))

    def _answer(self, method: str, args: dict[str, Any]) -> dict[str, Any]:
        ok: dict[str, Any] = {"ok": True}
        if method == "auth.test":
            return ok | {"user_id": BOT_USER, "bot_id": "BBOT", "team_id": "T1", "user": "shiori"}
        if method == "chat.postMessage":
            return ok | {"ts": f"{1700000000 + next(self._ts)}.000100", "channel": args["channel"]}
        if method == "chat.postEphemeral":
            return ok | {"message_ts": "1.1"}
        if method == "conversations.replies":
            return ok | {"messages": self.thread_messages.get(str(args.get("ts")), [])}
        if method == "usergroups.users.list":
            return ok | {"users": self.usergroup_members}
        if method == "apps.connections.open":
            return ok | {"url": self.base_url.replace("http", "ws") + "/socket"}
        return ok

    async def _respond(self, request: web.Request) -> web.Response:
        self.calls.append(("response_url", dict(await request.json())))
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json({"type": "hello", "num_connections": 1})

        async def send() -> None:
            while True:
                await socket.send_json(await self.socket_envelopes.get())

        sender = asyncio.create_task(send())
        try:
            async for message in socket:
                if message.type == WSMsgType.TEXT:
                    envelope_id = json.loads(message.data).get("envelope_id")
                    if envelope_id:
                        self.socket_acks.append(envelope_id)
        finally:
            sender.cancel()
        return socket
