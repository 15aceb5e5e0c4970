"""Inline <think>...</think> reasoning (DeepSeek-R1 style models behind OpenAI-compatible
endpoints) split out of streamed text.

Only a block that opens the message counts, so an answer that merely mentions the tag is
left alone. Tags split across chunks are handled by holding back a possible tag prefix.
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    def __init__(self) -> None:
        self._state = "start"  # start -> think -> text, or start -> text
        self._buf = ""

    def feed(self, text: str) -> list[tuple[str, str]]:
        """Returns ("text" | "reasoning", piece) pairs ready to emit."""
        self._buf += text
        out: list[tuple[str, str]] = []
        if self._state == "start":
            stripped = self._buf.lstrip()
            if stripped.startswith(OPEN):
                self._state, self._buf = "think", stripped[len(OPEN) :]
            elif OPEN.startswith(stripped):
                return out  # could still become "<think>"
            else:
                self._state = "text"
        if self._state == "think":
            end = self._buf.find(CLOSE)
            if end >= 0:
                out.append(("reasoning", self._buf[:end]))
                self._state, self._buf = "text", self._buf[end + len(CLOSE) :].lstrip("\n")
            else:
                keep = _partial_suffix(self._buf, CLOSE)
                out.append(("reasoning", self._buf[: len(self._buf) - keep]))
                self._buf = self._buf[len(self._buf) - keep :]
                return [p for p in out if p[1]]
        if self._state == "text":
            out.append(("text", self._buf))
            self._buf = ""
        return [p for p in out if p[1]]

    def flush(self) -> list[tuple[str, str]]:
        rest, self._buf = self._buf, ""
        if not rest:
            return []
        return [("reasoning" if self._state == "think" else "text", rest)]


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of text that is a proper prefix of tag."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0
