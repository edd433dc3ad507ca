"""Storage errors: one base class, a few narrow cases the edges translate for users."""


class StorageError(Exception):
    """Base class for knowledge-base storage failures."""


class EmbeddingMismatchError(StorageError):
    """The knowledge base was built with another embedding model or dimension."""


class SchemaTooNewError(StorageError):
    """The database file was written by a newer shiori than this one."""
