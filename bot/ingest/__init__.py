"""Getting documents in: read or fetch, extract, chunk, embed, store."""
