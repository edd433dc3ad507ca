"""The Slack face of shiori: Bolt listeners that parse, call the assistant and format."""
