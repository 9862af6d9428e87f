"""``-o jsonpath=``: kubectl's template around ``python-jsonpath``'s path expressions."""

from __future__ import annotations

import pytest

from katib_resume.app.cli.template import TemplateError, compile_template, text_of

LISTING = {
    "kind": "List",
    "items": [
        {
            "metadata": {"name": "a", "labels": {"app": "web"}},
            "spec": {"maxTrialCount": 12, "ratio": 0.5, "paused": False},
            "status": {"conditions": [{"type": "Created"}, {"type": "Succeeded"}]},
        },
        {"metadata": {"name": "b"}},
    ],
}


@pytest.mark.parametrize(
    ("template", "printed"),
    [
        ("{.items[*].metadata.name}", "a b"),
        ("{$.items[*].metadata.name}", "a b"),
        ("{items[0].metadata.name}", "a"),
        ("{.kind}: {.items[0].spec.maxTrialCount}", "List: 12"),
        ("{.items[0].spec.ratio} {.items[0].spec.paused}", "0.5 false"),
        ("{.items[0].metadata.labels}", '{"app":"web"}'),
        ('{range .items[*]}{.metadata.name}{"\\n"}{end}', "a\nb\n"),
        ("{range .items[*].metadata.name}<{@}>{end}", "<a><b>"),
        (
            "{range .items[*]}{range .status.conditions[*]}{.type},{end};{end}",
            "Created,Succeeded,;;",
        ),
        ("{.items[0].status.conditions[-1:].type}", "Succeeded"),
        ('{.items[?(@.metadata.name=="b")].metadata.name}', "b"),
        ("{..labels.app}", "web"),
        ("{.items[*].nothing}", ""),
        ("{'\\t'}x", "\tx"),
        ("plain text", "plain text"),
    ],
)
def test_kubectl_templates_print_what_kubectl_prints(template: str, printed: str) -> None:
    assert compile_template(template).render(LISTING) == printed


@pytest.mark.parametrize(
    ("template", "reason"),
    [
        ("{.items[", "unclosed action"),
        ("{.items[*]", "unclosed action"),
        ("a}b", "unclosed action"),
        ("{range .items[*]}{.x}", "{range} without {end}"),
        ("{end}", "{end} without {range}"),
        ("{}", "an empty action"),
        ("{.items[?(@.a==)]}", "error parsing jsonpath"),
    ],
)
def test_a_bad_template_is_refused_with_kubectls_words(template: str, reason: str) -> None:
    with pytest.raises(TemplateError) as raised:
        compile_template(template)
    assert reason in str(raised.value)
    assert str(raised.value).startswith(f"error parsing jsonpath {template}")
    assert "\n" not in str(raised.value)


def test_values_print_as_kubectl_prints_them() -> None:
    assert [text_of(v) for v in ("x", 3, 2.0, 0.25, True, None, [1, "a"])] == [
        "x",
        "3",
        "2",
        "0.25",
        "true",
        "<nil>",
        '[1,"a"]',
    ]
