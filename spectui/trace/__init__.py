"""Traces: a speculation run recorded as JSON Lines, to replay, export and share."""
