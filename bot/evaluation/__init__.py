"""Retrieval evaluation over BEIR-layout datasets."""
