"""An exported page's spans read back with html.parser, for the tests of the HTML export."""

from __future__ import annotations

from html.parser import HTMLParser


class Spans(HTMLParser):
    """Every span's class, tooltip (title) and text."""

    def __init__(self):
        super().__init__()
        self.spans: list[dict] = []
        self._open: list[dict | None] = []

    def handle_starttag(self, tag, attrs):
        if tag == "span":
            span = {**dict(attrs), "text": ""}
            self.spans.append(span)
            self._open.append(span)
        if tag in ("script", "link") or (tag == "img" and "src" in dict(attrs)):
            raise AssertionError(f"the page loads <{tag}> from elsewhere")

    def handle_endtag(self, tag):
        if tag == "span":
            self._open.pop()

    def handle_data(self, data):
        if self._open:
            self._open[-1]["text"] += data
