"""Judging a Trial's run object with its GJSON conditions (docs/katib-contract.md#trial-judging).

Katib serialises the whole run object and evaluates ``failureCondition`` first, then
``successCondition``, with ``tidwall/gjson``. A result *matches* when it is an object or a
non-empty array; its ``reason`` and ``message`` (of the object, or of the array's first element)
become the Job reason and message of the Trial's condition. When neither matches, a Trial that is
not Running yet is Running (the object exists); otherwise nothing changes.

The evaluation sits in the core as a pure function: ``gjson`` (gjson-py) is a computation on
JSON values with no I/O, so putting it behind a port would only add an adapter that the tests
would have to fake. It differs from Go's library in one way that matters here: a path that does
not exist (a Job with no ``status`` yet) raises instead of returning nothing, and so does an
empty or malformed query. Every such error counts as "no match", which is what Go returns. A
second difference is left as it is: a query on an array's elements over an array holding a null,
a boolean or a number answers nothing, where Go skips that element (docs/katib-differences.md);
the batch Job's default conditions, read here without gjson, skip it as Go does.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import gjson

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION


class RunOutcome(StrEnum):
    RUNNING = "Running"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the run object says: its outcome and the reason and message it gave (may be empty)."""

    outcome: RunOutcome
    reason: str = ""
    message: str = ""


def matches(run: Mapping[str, Any], query: str) -> object | None:
    """What a GJSON ``query`` selects from ``run`` when it matches, else None: an object as it
    is, a non-empty array by its first element (scalars, null and ``[]`` do not match)."""
    if not query:
        return None
    if query in _JOB_QUERIES:
        return _job_condition(run, _JOB_QUERIES[query])
    return gjson_match(run, query)


def gjson_match(run: Mapping[str, Any], query: str) -> object | None:
    """``matches`` through gjson itself, for any query."""
    try:
        result: object = gjson.get(dict(run), query)
    except (gjson.GJSONError, ValueError, TypeError, KeyError, IndexError):
        return None
    if isinstance(result, Mapping):
        return result
    if isinstance(result, list) and result:
        first: object = result[0]
        return first
    return None


_JOB_QUERIES = {JOB_SUCCESS_CONDITION: "Complete", JOB_FAILURE_CONDITION: "Failed"}
"""The batch Job's default conditions, answered without parsing the query each time (every
Trial of Katib's examples uses them; ``tests/property/test_run_status.py`` checks that both
answers agree with gjson's)."""


def _job_condition(run: Mapping[str, Any], type_: str) -> object | None:
    """``status.conditions.#(type=="T")#|#(status=="True")#``: the first condition of type
    ``T`` with status ``"True"`` (a missing or malformed path: no match, as in gjson)."""
    status = run.get("status")
    conditions = status.get("conditions") if isinstance(status, Mapping) else None
    if not isinstance(conditions, list):
        return None
    for condition in conditions:
        if (
            isinstance(condition, Mapping)
            and condition.get("type") == type_
            and condition.get("status") == "True"
        ):
            return condition
    return None


def _verdict(outcome: RunOutcome, found: object) -> Verdict | None:
    """Katib decodes the match into ``{condition, reason, message}``; a match that does not
    decode ("unmarshal ... condition to Trial Job status failed") is no status."""
    if not isinstance(found, Mapping):
        return None
    reason, message = found.get("reason", ""), found.get("message", "")
    if not isinstance(reason, str) or not isinstance(message, str):
        return None
    return Verdict(outcome, reason, message)


def judge(run: Mapping[str, Any], success: str, failure: str, *, running: bool) -> Verdict | None:
    """Katib's ``GetDeployedJobStatus``: failure wins over success; None means "no status"."""
    for outcome, query in ((RunOutcome.FAILED, failure), (RunOutcome.SUCCEEDED, success)):
        found = matches(run, query)
        if found is not None:
            return _verdict(outcome, found)
    name = (run.get("metadata") or {}).get("name")
    if not running and name:
        return Verdict(RunOutcome.RUNNING)
    return None


def default_conditions(api_version: str, kind: str) -> tuple[str, str]:
    """``(success, failure)`` for a hand-made Trial that names neither: the batch Job's defaults
    for a Job (Katib applies them at admission only, so such a Trial would run forever), and
    none for any other kind."""
    if kind == "Job" and api_version == "batch/v1":
        return JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION
    return "", ""
