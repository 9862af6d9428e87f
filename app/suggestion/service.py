"""Katib's Suggestion and EarlyStopping APIs over our suggestion service (``SuggestionServer``).

One ``SuggestionServer`` per Experiment name, its state in ``<data_dir>/<experiment>`` (the
volume Katib mounts at ``volumeMountPath`` for FromVolume), so a restarted pod carries on:

- ``GetSuggestions``: the request's ``total_request_number - current_request_number`` is how
  many assignments the controller already holds; those are the first ones the server issued, so
  a repeated request (a lost reply) is answered with the same assignments, under the same
  ``trial_name``s. Finished Trials in the request are the results the samplers learn from.
  A saved state is checked against the request's Trials put in its own issue order (their
  assignments' texts looked up among the saved ones: ``saved_order``), so that a restart
  compares texts and parses only the assignments saved after them, as the embedded runtime's
  does; one that disagrees with them is moved aside and logged as a Warning. Without one (or
  with one moved aside) the server rebuilds from the request's Trials, in issue order when
  their names are ours (``issue_order``), else by start time.
  Fewer assignments than asked for: the search has no more now (a hyperband rung waits for
  results) or at all (an exhausted grid), which the reply's trailing metadata ``EXHAUSTED``
  says, so that our controller completes the Experiment as the embedded runtime does.
  Katib sends every Trial in every call; each Trial is decoded once, when its content is new
  (``trial_memo``), so a call's cost beyond C-level passes is what changed. What was made of
  each is kept in the Experiment's directory too (``memo_file``), so that a restarted pod
  decodes only the Trials it had not seen.
- ``ValidateAlgorithmSettings`` and ``ValidateEarlyStoppingSettings``: INVALID_ARGUMENT with
  Katib's message; so is a ``GetSuggestions`` for settings or a space that validation refuses.
- ``GetEarlyStoppingRules``: ``medianstop``'s rule. Katib's service averages the first
  ``start_step`` values of each succeeded Trial's observation log, read from Katib's DB
  manager; this one has no DB client and uses the value the request carries for each succeeded
  Trial (the objective as its metric strategy picks it).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path

from katib_resume.adapters.grpc.api import EXHAUSTED, Wire
from katib_resume.adapters.grpc.codec import algorithm_manifest, experiment_manifest
from katib_resume.adapters.grpc.server import Refused, WithTrailers
from katib_resume.adapters.local.suggestion import (
    SettingsError,
    SpaceError,
    StartReport,
    SuggestionServer,
    medianstop,
)
from katib_resume.app.suggestion import memo_file, trial_memo
from katib_resume.app.suggestion.issue_order import in_issue_order
from katib_resume.app.suggestion.memo_file import MemoFile
from katib_resume.app.suggestion.trial_memo import Known, TrialMemo
from katib_resume.core.history import Unreadable
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import AlgorithmSpec, Experiment
from katib_resume.core.observed import Outcome

INVALID = "INVALID_ARGUMENT"
_log = logging.getLogger(__name__)


class SuggestionApi:
    def __init__(self, data_dir: Path | None, seed: int) -> None:
        self.data_dir, self.seed = data_dir, seed
        self.servers: dict[str, SuggestionServer] = {}
        self.reports: dict[str, StartReport] = {}  # where each server's state came from
        self.memos: dict[str, TrialMemo] = {}  # each Experiment's last request's Trials
        self.lock = threading.Lock()  # Katib's controller calls one at a time; a test may not

    def handlers(self) -> dict[str, Callable[[Wire], Wire]]:
        return {
            "GetSuggestions": self.get_suggestions,
            "ValidateAlgorithmSettings": self.validate_algorithm_settings,
            "ValidateEarlyStoppingSettings": self.validate_early_stopping_settings,
            "GetEarlyStoppingRules": self.get_early_stopping_rules,
        }

    def validate_algorithm_settings(self, request: Wire) -> Wire:
        experiment = _experiment(request, early_stopping=False)
        verdict = SuggestionServer(experiment, self.seed, None).validate()
        if verdict.outcome is Outcome.INVALID:
            raise Refused(INVALID, verdict.message)
        return {}

    def validate_early_stopping_settings(self, request: Wire) -> Wire:
        spec = AlgorithmSpec.model_validate(algorithm_manifest(request.get("early_stopping", {})))
        try:
            medianstop.read(spec)
        except SettingsError as error:
            raise Refused(INVALID, str(error)) from None
        return {}

    def get_suggestions(self, request: Wire) -> Wire:
        """See the module docstring. An Experiment its validation refuses (asked without
        ``ValidateAlgorithmSettings`` first: Katib's controller always asks it first) is
        refused the same way, ``INVALID_ARGUMENT`` and the message, not an exception; the
        refusing server is not kept, so the next request is judged afresh."""
        try:
            return self._suggestions(request)
        except (SettingsError, SpaceError) as error:
            with self.lock:
                self.servers.pop(str(request.get("experiment", {}).get("name", "")), None)
            raise Refused(INVALID, str(error)) from None

    def _suggestions(self, request: Wire) -> Wire:
        experiment = _experiment(request)
        total = int(request.get("total_request_number", 0))
        held = max(0, total - int(request.get("current_request_number", 0)))
        with self.lock:
            read = self._read(experiment, request)
            try:
                server = self._server(experiment, read)
            except Unreadable as error:  # the memo's file held an assignment that is no JSON
                read = self._read_afresh(experiment, request, error)
                server = self._server(experiment, read)
            have = server.held(held)
            results = trial_memo.results(read)
            if len(have) < held:  # the saved state is behind what the controller holds
                have = _taken(server, have, held, results)
            wanted = len(have) + total - held
            fresh = server.get_suggestions(have, wanted, results)
            exhausted = server.exhausted(wanted)
        items = [
            {"trial_name": item["name"], "assignments": item["parameterAssignments"]}
            | ({"labels": item["labels"]} if item.get("labels") else {})
            for item in fresh
        ]
        trailers = ((EXHAUSTED, exhausted),) if exhausted else ()
        return WithTrailers({"parameter_assignments": items}, trailers)

    def get_early_stopping_rules(self, request: Wire) -> Wire:
        experiment = _experiment(request)
        early = experiment.spec.early_stopping
        if early is None:
            return {"early_stopping_rules": []}
        try:
            settings = medianstop.read(early)
        except SettingsError as error:
            raise Refused(INVALID, str(error)) from None
        with self.lock:
            read = self._read(experiment, request)
        averages = {
            name: value
            for name, value in trial_memo.results(read, succeeded_only=True).items()
            if value is not None
        }
        objective = experiment.spec.objective
        metric = objective.objective_metric_name or "" if objective else ""
        maximize = objective is not None and objective.type == "maximize"
        rules = medianstop.rules(settings, metric, maximize, averages)
        comparison = {"less": "LESS", "greater": "GREATER"}
        return {
            "early_stopping_rules": [
                {
                    "name": rule["name"],
                    "value": rule["value"],
                    "comparison": comparison[rule["comparison"]],
                    "start_step": rule["startStep"],
                }
                for rule in rules
            ]
        }

    def _read(self, experiment: Experiment, request: Wire) -> list[Known]:
        """The request's Trials, through the Experiment's memo (``trial_memo``)."""
        objective = experiment.spec.objective
        metric = objective.objective_metric_name if objective else None
        name = experiment.metadata.name
        memo = self.memos.get(name)
        if memo is None or memo.metric != metric:
            memo = self.memos[name] = TrialMemo(metric, self._memo_file(name, metric))
        return memo.read(request.get("trials", []))

    def _read_afresh(self, experiment: Experiment, request: Wire, error: Unreadable) -> list[Known]:
        """The request's Trials, every one decoded, the Experiment's memo and its file dropped:
        the file held an assignment text that cannot be decoded. Its lines are checksummed, so
        only a file written by something else does that; the service carries on as if it had
        none (the file is written anew by this read), and says so."""
        name = experiment.metadata.name
        _log.warning("Experiment %s: the trial memo is dropped (%s)", name, error)
        memo = self.memos.pop(name, None)
        if memo is not None and memo.store is not None:
            memo.store.discard()
        return self._read(experiment, request)

    def _memo_file(self, name: str, metric: str | None) -> MemoFile | None:
        """The memo's file in the Experiment's directory (made here if the server has not
        made it yet: its state is written after the first read); ``None`` without a data
        directory, or if it cannot be made (the server's saves will say why)."""
        if self.data_dir is None:
            return None
        directory = self.data_dir / name
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return MemoFile(directory / memo_file.FILE_NAME, metric)

    def _server(self, experiment: Experiment, read: Sequence[Known]) -> SuggestionServer:
        name = experiment.metadata.name
        server = self.servers.get(name)
        if server is None:
            directory = None if self.data_dir is None else self.data_dir / name
            server = SuggestionServer(experiment, self.seed, directory)
            guess = partial(_guess_order, read, experiment, self.seed)
            report = server.start(trial_memo.history(read), guess_order=guess)
            self.reports[name] = report
            if report.source == "rebuilt":  # the embedded runtime's Warning event
                _log.warning("Experiment %s: %s", name, report.reason)
            self.servers[name] = server
        return server


def _experiment(request: Wire, *, early_stopping: bool = True) -> Experiment:
    manifest = experiment_manifest(request.get("experiment", {}))
    if not early_stopping:
        manifest["spec"].pop("earlyStopping", None)
    return Experiment.model_validate(manifest)


def _guess_order(
    read: Sequence[Known], experiment: Experiment, seed: int, history: Sequence[Manifest]
) -> Sequence[Manifest]:
    """``history`` (``trial_memo.history(read)``) in issue order when the names are ours
    (``issue_order``), else in the order the Trials started."""
    started = trial_memo.started(read, history)
    by_start = sorted(history, key=lambda item: (started.get(item["name"], "~"), item["name"]))
    return in_issue_order(by_start, experiment, seed)


def _taken(
    server: SuggestionServer,
    have: Sequence[Manifest],
    held: int,
    results: Mapping[str, float | None],
) -> tuple[Manifest, ...]:
    """The controller holds ``held`` assignments, but the service knows fewer (its state was
    lost or restored from an older copy, and Katib's request carries the Trials, not the
    Suggestion's list). Those positions are taken: the service issues them to itself first,
    unsent, so that what it sends next never repeats one the controller holds (a seeded point,
    a grid cell)."""
    server.get_suggestions(have, held, results)
    return server.held(held)
