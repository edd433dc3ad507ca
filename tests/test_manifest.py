from pathlib import Path

MANIFEST = (Path(__file__).parents[1] / "config" / "slack-manifest.yml").read_text()


def test_manifest_grants_what_the_listeners_use() -> None:
    for needed in (
        "app_mentions:read", "chat:write", "reactions:write", "commands", "im:history",
        "channels:history", "- app_mention", "- message.im", "- message.channels",
        "command: /rag", "socket_mode_enabled: true", "is_enabled: true",
    ):  # fmt: skip
        assert needed in MANIFEST, needed
