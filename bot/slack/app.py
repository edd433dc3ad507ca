"""The Bolt app: Socket Mode when SLACK_APP_TOKEN is set, HTTP events otherwise."""

from __future__ import annotations

import asyncio
import logging

from aiohttp import web
from slack_bolt.adapter.socket_mode.async_handler import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
    AsyncServerErrorRetryHandler,
)
from slack_sdk.web.async_client import AsyncWebClient

from bot.services import Services
from bot.slack.listeners import SlackBot

logger = logging.getLogger(__name__)


def slack_client(token: str, base_url: str) -> AsyncWebClient:
    """A Web API client that waits out `ratelimited` (Retry-After) and retries 5xx."""
    client = AsyncWebClient(token=token, base_url=base_url)
    client.retry_handlers.extend(
        [
            AsyncRateLimitErrorRetryHandler(max_retry_count=2),
            AsyncServerErrorRetryHandler(max_retry_count=2),
            AsyncConnectionErrorRetryHandler(max_retry_count=1),
        ]
    )
    return client


def create_app(services: Services) -> tuple[AsyncApp, SlackBot]:
    settings = services.settings
    app = AsyncApp(
        client=slack_client(settings.slack_bot_token, settings.slack_api_url),
        signing_secret=settings.slack_signing_secret or None,
        request_verification_enabled=bool(settings.slack_signing_secret),
    )
    bot = SlackBot(services)
    bot.register(app)
    return app, bot


async def run(services: Services) -> None:
    """Serve until cancelled."""
    settings = services.settings
    app, _ = create_app(services)
    if settings.slack_app_token:
        handler = AsyncSocketModeHandler(app, settings.slack_app_token)
        logger.info("connecting to Slack in Socket Mode")
        await handler.start_async()  # type: ignore[no-untyped-call]
        return
    runner = web.AppRunner(app.web_app(path="/slack/events", port=settings.slack_port))
    await runner.setup()
    await web.TCPSite(runner, "0.0.0.0", settings.slack_port).start()
    logger.info("listening for Slack events on :%d/slack/events", settings.slack_port)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()
