"""shiori: a Slack knowledge bot over one SQLite file."""
