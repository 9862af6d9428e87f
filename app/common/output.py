"""Printing as ``kubectl`` does: YAML or JSON (a ``List`` for several), aligned tables, ages.

Tables are plain text, columns separated by three spaces like kubectl's tabwriter, never cut to
the terminal's width: ``get`` output is read by scripts (``awk``, ``grep``) as often as by eyes.
Ages follow kubectl's ``HumanDuration`` (``42s``, ``3m12s``, ``5h2m``, ``3d``) and are measured
on the embedded cluster's own clock, which is what the objects' timestamps were written with.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime

from katib_resume.core.manifest import Manifest

GAP = "   "


def as_list(items: Sequence[Manifest]) -> Manifest:
    return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": list(items)}


def render(document: Manifest, output: str) -> str:
    if output == "json":
        return json.dumps(document, indent=2) + "\n"
    import yaml  # here: a table, the default output, needs none of it (a command's start-up)

    return yaml.safe_dump(document, sort_keys=False, default_flow_style=False)


def one_line(message: str) -> str:
    """Control characters (a newline in a key of the user's YAML) escaped: one line stays one."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in message)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> str:
    """Left-aligned columns, as wide as their widest cell; the last column is not padded."""
    cells = [list(headers), *([one_line(cell) for cell in row] for row in rows)]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for row in cells:
        padded = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=False)]
        lines.append(indent + GAP.join([*padded, row[-1]]).rstrip())
    return "\n".join(lines) + "\n"


def parse_time(value: object) -> datetime | None:
    """A Kubernetes timestamp (``2026-01-01T00:00:00Z``), or ``None`` if absent or malformed."""
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def age(value: object, now: datetime) -> str:
    """How long before ``now`` the timestamp ``value`` is, as kubectl prints an AGE."""
    then = parse_time(value)
    return "<unknown>" if then is None else human_duration((now - then).total_seconds())


def human_duration(seconds: float) -> str:
    """kubectl's ``HumanDuration``: precise when short, coarser as it grows."""
    if seconds < 0:
        return "<invalid>"
    s = int(seconds)
    minutes, hours, days = s // 60, s // 3600, s // 86400
    if s < 120:
        return f"{s}s"
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 192:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    return f"{days}d" if days < 730 else f"{days // 365}y"
