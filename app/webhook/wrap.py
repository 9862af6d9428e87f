"""The primary container's command, wrapped as Katib wraps it for its file-based collectors.

Katib's collector learns that training ended by finding ``completed`` in ``<dir>/<pid>.pid``,
which the wrapped command writes after the training command succeeds (``&&``); for StdOut the
training output is redirected into the metrics file the sidecar parses. The wrapper is one shell
line: the training command's words joined by single spaces (no quoting, as Katib), so a word
that needs quoting must already be written for the shell (docs/webhook.md lists this).

``$$$$`` is ``$$`` once Kubernetes has expanded ``$(VAR)`` references: the shell's own PID.

Katib reads the image's entrypoint from its registry when the container has no ``command``.
The webhook does not reach registries, so such a container is refused with a message saying
to write the command in the trial template.
"""

from __future__ import annotations

import posixpath

from katib_resume.app.webhook.collector import STDOUT, Refused
from katib_resume.core.manifest import Manifest

COMPLETED, EARLY_STOPPED = "completed", "early-stopped"
SHELLS = frozenset({"sh", "bash"})


def wrapped(
    container: Manifest, kind: str, metrics_path: str, directory: str, rules: bool
) -> Manifest:
    """``container`` with Katib's ``command: [<shell>, -c]`` and one-line ``args``."""
    words = _words(container)
    shell = ["sh", "-c"]
    if len(words) >= 2 and words[0] in SHELLS and words[1] == "-c":
        shell, words = words[:2], words[2:]
    if kind == STDOUT:
        words.append(f"1>{metrics_path} 2>&1")
    if rules:
        words += ["||", early_stopped_check(directory)]
    words += ["&&", f"echo {COMPLETED} > {_join(directory, '$$$$.pid')}"]
    return {**container, "command": shell, "args": [" ".join(words)]}


def early_stopped_check(directory: str) -> str:
    """After a failed training command: exit 0 only if the collector stopped it on purpose."""
    marker, condition = _join(directory, "$$$$.pid"), _join(directory, "$$.pid")
    return (
        f"if test -f {marker} && [ $(head -n 1 {condition}) = {EARLY_STOPPED} ]; "
        "then echo Training Container was Early Stopped; "
        "else echo Training Container was Failed; exit 1; fi"
    )


def _words(container: Manifest) -> list[str]:
    command, args = container.get("command") or [], container.get("args") or []
    name = container.get("name")
    if not _strings(command) or not _strings(args):
        raise Refused(f"container {name!r}: command and args must be lists of strings")
    if not command:
        raise Refused(
            f"container {name!r} has no command: the image's entrypoint is not read from its "
            "registry; write the command in the trial template"
        )
    return [*command, *args]


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(word, str) for word in value)


def _join(directory: str, name: str) -> str:
    """Go's ``filepath.Join``: cleaned, so ``.`` and a trailing slash disappear."""
    return posixpath.normpath(posixpath.join(directory, name))
