"""GJSON judgement of batch Jobs against an independent reading of Katib's defaults
(docs/katib-contract.md#cleanup-and-restart)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from katib_resume.core.katib_trial import JOB_FAILURE_CONDITION, JOB_SUCCESS_CONDITION
from katib_resume.core.run_status import RunOutcome, gjson_match, judge, matches

condition = st.fixed_dictionaries(
    {
        "type": st.sampled_from(["Complete", "Failed", "SuccessCriteriaMet", "FailureTarget"]),
        "status": st.sampled_from(["True", "False", "Unknown"]),
        "reason": st.sampled_from(["", "BackoffLimitExceeded", "Done"]),
        "message": st.sampled_from(["", "a message"]),
    }
)
statuses = st.one_of(
    st.none(),
    st.fixed_dictionaries({}, optional={"conditions": st.lists(condition, max_size=5)}),
)


def _oracle(status: dict[str, Any] | None, running: bool) -> tuple[RunOutcome, str, str] | None:
    conditions = (status or {}).get("conditions") or []
    for type_, outcome in (("Failed", RunOutcome.FAILED), ("Complete", RunOutcome.SUCCEEDED)):
        matching = [c for c in conditions if c["type"] == type_ and c["status"] == "True"]
        if matching:
            return outcome, matching[0]["reason"], matching[0]["message"]
    return None if running else (RunOutcome.RUNNING, "", "")


@given(statuses, st.booleans())
def test_the_default_job_conditions_match_katibs_reading(
    status: dict[str, Any] | None, running: bool
) -> None:
    job: dict[str, Any] = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"}}
    if status is not None:
        job["status"] = status
    verdict = judge(job, JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION, running=running)
    found = None if verdict is None else (verdict.outcome, verdict.reason, verdict.message)
    assert found == _oracle(status, running)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.sampled_from(["True", "Complete", "Failed"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["type", "status", "reason"]), inner, max_size=3)
    ),
    max_leaves=8,
)
# The conditions' elements are objects, arrays or strings, never null, a boolean or a number:
# gjson-py (1.2) drops a whole array when one element is such a scalar (``key in element``
# raises and the query answers ``[]``), where Go's gjson skips that element and matches the
# rest, as the product's own reading does (tests/unit/test_run_status_edges.py pins that case).
elements = st.one_of(
    st.sampled_from(["True", "Complete", "Failed"]),
    st.lists(json_values, max_size=3),
    st.dictionaries(st.sampled_from(["type", "status", "reason"]), json_values, max_size=3),
)
conditions_field = st.one_of(json_values, st.lists(st.one_of(condition, elements), max_size=4))
runs = st.fixed_dictionaries(
    {},
    optional={
        "status": st.one_of(
            json_values, st.fixed_dictionaries({}, optional={"conditions": conditions_field})
        )
    },
)


@given(runs)
def test_the_job_queries_read_without_gjson_agree_with_gjson(run: dict[str, Any]) -> None:
    for query in (JOB_SUCCESS_CONDITION, JOB_FAILURE_CONDITION):
        assert matches(run, query) == gjson_match(run, query)
