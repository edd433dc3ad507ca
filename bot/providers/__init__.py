"""Outside capabilities (embeddings, LLM), each behind a Protocol."""
