"""``GrpcSuggestionService``: the ``SuggestionService`` port over Katib's gRPC API.

What Katib's suggestion client does (docs/katib-contract.md#service-calls), with its words:

* ``validate`` calls ``ValidateAlgorithmSettings`` with the Experiment and, when the Suggestion
  has early stopping, ``ValidateEarlyStoppingSettings`` on the early-stopping port. A status of
  ``INVALID_ARGUMENT`` or ``UNKNOWN`` is an invalid verdict, "<method> Error: <details>";
  ``UNIMPLEMENTED`` counts as valid. Any other failure is ``UNAVAILABLE``, retried by the
  planner: Katib fails the Suggestion for good on ``Unavailable`` and takes every other code
  for valid (bug 19), neither of which says anything true about the settings.
* ``get_suggestions`` sends the Experiment (its algorithm settings updated from the
  Suggestion's ``status.algorithmSettings``) and its completed Trials, and turns the reply into
  the assignments ``status.suggestions`` records, named by the service or
  ``<suggestion>-<8 random characters>``. A failed call, or a reply with more assignments
  than asked for ("The response contains unexpected trials"), raises ``Unavailable``: the
  reconcile records nothing and asks again later. A reply with fewer is recorded, as the
  embedded runtime records a shorter answer, and the rest is asked for later: Katib's
  controller refuses it and asks again for ever, so its hyperband stalls at the first rung
  smaller than the request (#1168). Our service's reply says in its trailing metadata
  (``api.EXHAUSTED``) when its search has nothing left to issue, which becomes
  ``Assignments.exhausted``: the Experiment completes (``ExperimentSuggestionEndReached``).
  Katib's services never say so, so with them it never does, as in Katib. With early stopping,
  ``GetEarlyStoppingRules`` is asked as well and its rules go with every new assignment (and
  so into its Trial's ``spec.earlyStoppingRules``); failing that, nothing is recorded either.

The Experiment and its Trials are read through the ``Cluster`` port, which in the controller
is the watch-fed cache: asking costs no API call. Every call has a deadline.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from functools import partial

import grpc

from katib_resume.adapters.grpc.api import (
    EXHAUSTED,
    GET_EARLY_STOPPING_RULES,
    GET_SUGGESTIONS,
    VALIDATE_ALGORITHM_SETTINGS,
    VALIDATE_EARLY_STOPPING_SETTINGS,
    Method,
    Wire,
    decode,
    encode,
)
from katib_resume.adapters.grpc.channels import Channels
from katib_resume.adapters.grpc.codec import algorithm_wire, experiment_wire, trial_wire
from katib_resume.adapters.grpc.endpoints import Endpoints
from katib_resume.core.actions import ObjectRef
from katib_resume.core.addresses import DB_MANAGER_ADDRESS, SUGGESTION_TIMEOUT
from katib_resume.core.katib import API_VERSION, LABEL_EXPERIMENT
from katib_resume.core.manifest import Manifest
from katib_resume.core.model import Experiment, Suggestion, Trial
from katib_resume.core.observed import VALID, Assignments, Outcome, Validation
from katib_resume.core.ports import Cluster, NotFound, Unavailable
from katib_resume.core.trial_phases import COMPLETED_PHASES
from katib_resume.core.trials import classify, is_own

COMPARISONS = {"EQUAL": "equal", "LESS": "less", "GREATER": "greater"}
"""The wire's ``ComparisonType`` as Katib's Trial spec spells it."""
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' utilrand alphabet, which Katib uses
NAME_LENGTH = 8
UNEXPECTED = "The response contains unexpected trials"
_random = random.SystemRandom()


def random_suffix() -> str:
    return "".join(_random.choice(NAME_ALPHABET) for _ in range(NAME_LENGTH))


class GrpcSuggestionService:
    """Implements ``core.ports.SuggestionService``; ``close`` when done (it owns channels)."""

    def __init__(
        self,
        cluster: Cluster,
        endpoints: Endpoints | None = None,
        *,
        timeout: float = SUGGESTION_TIMEOUT,
        channels: Channels | None = None,
        db_manager: str = DB_MANAGER_ADDRESS,
    ) -> None:
        self.cluster, self.endpoints = cluster, endpoints or Endpoints()
        self.db_manager = db_manager
        self.timeout = timeout
        self.channels = channels or Channels(idle_seconds=max(300.0, 2 * timeout))
        self.suffix = random_suffix
        self.lock = threading.Lock()
        self.counts: Counter[tuple[str, str]] = Counter()

    def calls(self) -> dict[tuple[str, str], int]:
        """Calls made so far by (method, status code name): for the controller's metrics."""
        with self.lock:
            return dict(self.counts)

    def validate(self, suggestion: Suggestion) -> Validation:
        try:
            experiment = self._experiment(suggestion)
        except Unavailable as error:
            return Validation(Outcome.UNAVAILABLE, str(error))
        endpoint = self.endpoints.algorithm_of(suggestion)
        request = {"experiment": experiment_wire(experiment)}
        verdict = self._validate(VALIDATE_ALGORITHM_SETTINGS, endpoint, request)
        early = suggestion.spec.early_stopping
        if verdict.outcome is not Outcome.VALID or early is None:
            return verdict
        endpoint = self.endpoints.early_stopping_of(suggestion)
        request = {"early_stopping": algorithm_wire(early.to_dict())}
        return self._validate(VALIDATE_EARLY_STOPPING_SETTINGS, endpoint, request)

    def get_suggestions(self, suggestion: Suggestion, count: int) -> Assignments:
        experiment = self._experiment(suggestion)
        have = suggestion.status.suggestions
        settings = [setting.to_dict() for setting in suggestion.status.algorithm_settings]
        request = {
            "experiment": experiment_wire(experiment, settings),
            "trials": self._completed_trials(experiment),
            "current_request_number": count,
            "total_request_number": len(have) + count,
        }
        endpoint = self.endpoints.algorithm_of(suggestion)
        try:
            reply, trailers = self._call_for(GET_SUGGESTIONS, endpoint, request)
        except grpc.RpcError as error:
            raise Unavailable(_failure(GET_SUGGESTIONS, endpoint, error)) from None
        items: list[Wire] = reply.get("parameter_assignments", [])
        if len(items) > count:
            raise Unavailable(
                f"{GET_SUGGESTIONS.name} at {endpoint}: {UNEXPECTED} "
                f"({len(items)} assignments for {count} requested)"
            )
        taken = {str(item.get("name")) for item in have}
        assigned = tuple(self._assignment(suggestion.name, item, taken) for item in items)
        if suggestion.spec.early_stopping is not None:
            rules = self._early_stopping_rules(suggestion, request)
            assigned = tuple({**item, "earlyStoppingRules": rules} for item in assigned)
        returned = (reply.get("algorithm") or {}).get("algorithm_settings") or []
        learned = tuple(
            {"name": str(item.get("name", "")), "value": str(item.get("value", ""))}
            for item in returned
        )
        return Assignments(assigned, learned, exhausted=trailers.get(EXHAUSTED, ""))

    def close(self) -> None:
        self.channels.close()

    def _early_stopping_rules(self, suggestion: Suggestion, asked: Wire) -> list[Manifest]:
        """Katib's ``GetEarlyStoppingRules``, for the Trials about to be created: the rules each
        new assignment carries into its Trial's ``spec.earlyStoppingRules``."""
        endpoint = self.endpoints.early_stopping_of(suggestion)
        request = {
            "experiment": asked["experiment"],
            "trials": asked["trials"],
            "db_manager_address": self.db_manager,
        }
        try:
            reply = self._call(GET_EARLY_STOPPING_RULES, endpoint, request)
        except grpc.RpcError as error:
            raise Unavailable(_failure(GET_EARLY_STOPPING_RULES, endpoint, error)) from None
        return [_rule(rule) for rule in reply.get("early_stopping_rules", [])]

    def _validate(self, method: Method, endpoint: str, request: Wire) -> Validation:
        try:
            self._call(method, endpoint, request)
        except grpc.RpcError as error:
            code, details = _status(error)
            if code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.UNKNOWN):
                return Validation(Outcome.INVALID, f"{method.name} Error: {details}")
            if code is grpc.StatusCode.UNIMPLEMENTED:
                return VALID
            return Validation(Outcome.UNAVAILABLE, _failure(method, endpoint, error))
        return VALID

    def _call(self, method: Method, endpoint: str, request: Wire) -> Wire:
        return self._call_for(method, endpoint, request)[0]

    def _call_for(
        self, method: Method, endpoint: str, request: Wire
    ) -> tuple[Wire, dict[str, str]]:
        """The reply, and the call's (text) trailing metadata."""
        call = self.channels.get(endpoint).unary_unary(
            method.path,
            request_serializer=partial(encode, method.request),
            response_deserializer=partial(decode, method.reply),
        )
        code = grpc.StatusCode.OK
        try:
            reply, done = call.with_call(request, timeout=self.timeout)
        except grpc.RpcError as error:
            code = _status(error)[0]
            raise
        finally:
            with self.lock:
                self.counts[method.name, code.name] += 1
        pairs = done.trailing_metadata() or ()
        return reply, {str(key): value for key, value in pairs if isinstance(value, str)}

    def _experiment(self, suggestion: Suggestion) -> Manifest:
        ref = ObjectRef(API_VERSION, "Experiment", suggestion.namespace, suggestion.name)
        try:
            return self.cluster.get(ref)
        except NotFound:
            raise Unavailable(f"Experiment {ref.namespace}/{ref.name} not found") from None

    def _completed_trials(self, raw: Manifest) -> list[Wire]:
        """The Experiment's own Trials that will not run again, as messages, in list order."""
        experiment = Experiment.model_validate(raw)
        listed = self.cluster.list(
            API_VERSION, "Trial", experiment.namespace, {LABEL_EXPERIMENT: experiment.metadata.name}
        )
        trials = []
        for obj in listed:
            trial = Trial.model_validate(obj)
            phase = classify(trial)
            if is_own(experiment, trial) and phase in COMPLETED_PHASES:
                trials.append(trial_wire(obj, phase))
        return trials

    def _assignment(self, suggestion: str, item: Wire, taken: set[str]) -> Manifest:
        name = str(item.get("trial_name", ""))
        while not name or name in taken:
            name = f"{suggestion}-{self.suffix()}"
        taken.add(name)
        values = [
            {"name": pair.get("name", ""), "value": pair.get("value", "")}
            for pair in item.get("assignments", [])
        ]
        manifest: Manifest = {"name": name, "parameterAssignments": values}
        if item.get("labels"):
            manifest["labels"] = dict(item["labels"])
        return manifest


def _status(error: grpc.RpcError) -> tuple[grpc.StatusCode, str]:
    if isinstance(error, grpc.Call):
        return error.code(), error.details() or ""
    return grpc.StatusCode.UNKNOWN, str(error)


def _failure(method: Method, endpoint: str, error: grpc.RpcError) -> str:
    code, details = _status(error)
    return f"{method.name} at {endpoint}: {code.name}: {details}"


def _rule(wire: Wire) -> Manifest:
    """An ``EarlyStoppingRule`` as Katib's Trial spec writes it."""
    rule: Manifest = {
        "name": str(wire.get("name", "")),
        "value": str(wire.get("value", "")),
        "comparison": COMPARISONS.get(str(wire.get("comparison", "")), ""),
    }
    if wire.get("start_step"):
        rule["startStep"] = int(wire["start_step"])
    return rule
