"""Command mode: run a Trial's primary container command as a local process.

On a cluster Katib turns ``spec.runSpec`` (a Job) into a pod, and the StdOut metrics collector
reads the primary container's output. Locally we run that container's ``command`` followed by its
``args`` (Kubernetes' order) as an argument list, never through a shell, so a parameter value
cannot inject anything. Literal ``env`` values are added to this process's environment; the
image is ignored, so the command must exist on this machine.

Every way a run can go wrong is an ``Outcome``, never an exception: a missing container or
command, a ``${trialParameters.x}`` left unsubstituted (the planner substitutes every reference it
knows, so one left over is a template naming an unknown parameter), an executable that is not
found, a timeout, a non-zero exit. The process runs in the Trial's own working directory, which
survives a re-run, and its output is kept there (``stdout.log``, ``stderr.log``) for inspection.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from katib_resume.adapters.local.trials import group
from katib_resume.adapters.local.trials.metrics import metric_names, parse_stdout
from katib_resume.adapters.local.trials.outcome import Outcome

_UNSUBSTITUTED = re.compile(r"\$\{trialParameters\.[^}]*\}")


class TemplateError(ValueError):
    """The runSpec cannot be run; the message says why (it becomes the Failed message)."""


@dataclass(frozen=True, slots=True)
class Command:
    argv: tuple[str, ...]
    env: Mapping[str, str]


def primary_command(spec: Mapping[str, Any]) -> Command:
    """The primary container's argument list and literal environment, or ``TemplateError``."""
    name = spec.get("primaryContainerName")
    containers = _get(spec, "runSpec", "spec", "template", "spec").get("containers") or ()
    container = next((c for c in containers if isinstance(c, dict) and c.get("name") == name), None)
    if container is None:
        raise TemplateError(f"runSpec has no container named {name!r} (primaryContainerName)")
    argv = tuple(
        str(arg) for arg in [*(container.get("command") or ()), *(container.get("args") or ())]
    )
    if not argv:
        raise TemplateError(f"container {name!r} has no command: the image's entrypoint is unknown")
    env = {
        str(e["name"]): str(e["value"])
        for e in container.get("env") or ()
        if isinstance(e, dict) and "name" in e and "value" in e
    }
    left = sorted({m for text in (*argv, *env.values()) for m in _UNSUBSTITUTED.findall(text)})
    if left:
        raise TemplateError(f"unsubstituted trial parameters in the command: {', '.join(left)}")
    return Command(argv, env)


def run_command(spec: Mapping[str, Any], workdir: Path, timeout: float) -> Outcome:
    """Run the primary container's command in ``workdir`` and read its metrics from stdout."""
    try:
        command = primary_command(spec)
    except TemplateError as error:
        return Outcome.failed(str(error))
    try:
        workdir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        return Outcome.failed(f"cannot create the working directory {workdir}: {error}")
    try:
        done = _run(command, workdir, timeout)
    except subprocess.TimeoutExpired:
        return Outcome.failed(f"command timed out after {timeout:g}s: {command.argv[0]}")
    except FileNotFoundError:
        return Outcome.failed(f"executable not found: {command.argv[0]}")
    except OSError as error:
        return Outcome.failed(f"cannot run {command.argv[0]}: {error.strerror or error}")
    with contextlib.suppress(OSError):  # the logs are for people; the outcome does not need them
        (workdir / "stdout.log").write_text(done.stdout)
        (workdir / "stderr.log").write_text(done.stderr)
    if done.returncode != 0:
        return Outcome.failed(_exit_message(done.returncode, done.stderr))
    return Outcome.observed(parse_stdout(done.stdout, metric_names(_get(spec, "objective"))))


def _run(command: Command, workdir: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    """Run in a session of its own, so that a timeout or an interrupt kills the children the
    command started too (``group``).

    ``subprocess.run`` kills only the direct child on a timeout; a training script's data loader
    workers would live on and keep the output pipes open. (POSIX: sessions and process groups.)
    """
    group.reap_leftover(workdir)
    with subprocess.Popen(
        command.argv,
        cwd=workdir,
        env={**os.environ, **command.env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
        preexec_fn=group.die_with_parent,  # noqa: PLW1509 - only a prctl, no lock taken
    ) as process:
        group.remember(workdir, process.pid)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except BaseException:  # a timeout, or the runner stopped (Ctrl-C, SIGTERM, SIGHUP)
            group.kill_group(process.pid)
            process.communicate()
            group.forget(workdir)
            raise
    group.forget(workdir)
    return subprocess.CompletedProcess(command.argv, process.returncode, stdout, stderr)


def _exit_message(code: int, stderr: str) -> str:
    """Why the run failed, with the last line of stderr (usually the error) when there is one."""
    cause = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
    last = next((line.strip() for line in reversed(stderr.splitlines()) if line.strip()), "")
    return f"command {cause}: {last[:500]}" if last else f"command {cause}"


def _get(mapping: Mapping[str, Any], *path: str) -> Mapping[str, Any]:
    """The nested mapping at ``path``, or an empty one if any step is missing or no mapping."""
    for key in path:
        value = mapping.get(key)
        mapping = value if isinstance(value, dict) else {}
    return mapping
