"""shiori entry point.

python main.py                 the bot: Slack when SLACK_BOT_TOKEN is set, else the console
python main.py ask "…"         one question, answered on standard output
python main.py eval --dataset DIR [--split test] [--mode hybrid-cc]
python main.py reindex         re-embed every chunk with the configured model
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from bot.errors import ShioriError
from config import SettingsError, load_settings
from storage.errors import StorageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="shiori", description="Slack knowledge bot")
    parser.add_argument("--env-file", default=".env", help="settings file (default: .env)")
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("run", help="start the bot (the default)")
    ask = commands.add_parser("ask", help="answer one question and exit")
    ask.add_argument("question")
    commands.add_parser("reindex", help="re-embed all chunks with the configured model")
    evaluate = commands.add_parser("eval", help="retrieval metrics on a BEIR-layout dataset")
    evaluate.add_argument("--dataset", required=True, type=Path)
    evaluate.add_argument("--split", default="test")
    evaluate.add_argument(
        "--mode", choices=["keyword", "vector", "hybrid-cc", "hybrid-rrf"], default=None
    )
    evaluate.add_argument("--vector-weight", type=float, default=None)
    evaluate.add_argument("--chunk-size", type=int, default=None)
    evaluate.add_argument("--chunk-overlap", type=int, default=None)
    evaluate.add_argument("--output", type=Path, default=None, help="JSON report path")
    seed = commands.add_parser("eval-seed", help="the seed project's evaluation set")
    seed.add_argument("--dataset", type=Path, required=True, help="seed-fixtures folder")
    seed.add_argument("--n-results", type=int, default=5)
    seed.add_argument("--baseline", type=Path, default=None)
    seed.add_argument("--save-baseline", action="store_true")
    seed.add_argument("--fail-on-regression", action="store_true")
    seed.add_argument("--regression-threshold", type=float, default=0.1)
    return parser


async def _run(args: argparse.Namespace) -> int:
    from bot.services import build_services

    settings = load_settings(args.env_file)
    logging.basicConfig(
        level=settings.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    if args.command == "eval":
        from bot.evaluation.cli import run_eval

        return await run_eval(settings, args)
    if args.command == "eval-seed":
        from bot.evaluation.seed import run_seed_eval

        return await run_seed_eval(settings, args)
    if args.command == "reindex":
        from bot.reindex import reindex

        print(await reindex(settings))
        return 0
    services = await build_services(settings)
    try:
        from bot.console import Console

        console = Console(services)
        if args.command == "ask":
            print(await console.handle(args.question))
            return 0
        # Load the model now, not on the first question (it takes a second or two).
        await services.embedder.embed_query("warm-up")
        if settings.slack_enabled:
            from bot.slack.app import run

            await run(services)
            return 0
        await console.run()
        return 0
    finally:
        services.close()


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return asyncio.run(_run(args))
    except (SettingsError, ShioriError, StorageError) as exc:
        print(f"shiori: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
