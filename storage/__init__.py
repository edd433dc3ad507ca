"""One SQLite file holds everything: sources, chunks, FTS5, sqlite-vec vectors, the graph."""
