"""``get -l``'s label selectors: what is printed parses back to itself, and matching is the rule.

Selectors are drawn as structures (valid keys and values, every operator), printed with
``format_selector`` and parsed again; the parse must give the same requirements. Matching is
checked against a naive oracle that states each operator's meaning from the Kubernetes API
conventions directly, over label sets drawn from the same small alphabet of keys and values so
that matches and misses are both common.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from katib_resume.app.cli.selector import (
    Requirement,
    Selector,
    SelectorError,
    format_selector,
    matches,
    parse,
)

names = st.from_regex(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,8}[A-Za-z0-9])?", fullmatch=True)
prefixes = st.from_regex(r"[a-z0-9]{1,5}(\.[a-z0-9]{1,5}){0,2}", fullmatch=True)
keys = st.one_of(names, st.builds(lambda p, n: f"{p}/{n}", prefixes, names))
values = st.one_of(st.just(""), names)
small_keys = st.sampled_from(["app", "tier", "example.com/team", "k"])
small_values = st.sampled_from(["", "a", "b", "web"])


def requirements(
    key: st.SearchStrategy[str], value: st.SearchStrategy[str]
) -> st.SearchStrategy[Requirement]:
    one = st.tuples(value)
    some = st.frozensets(value, min_size=1, max_size=4).filter(lambda s: s != {""})
    return st.one_of(
        st.builds(Requirement, key, st.sampled_from(["=", "!="]), one),
        st.builds(
            lambda k, op, vs: Requirement(k, op, tuple(sorted(vs))),
            key,
            st.sampled_from(["in", "notin"]),
            some,
        ),
        st.builds(Requirement, key, st.sampled_from(["exists", "!"])),
    )


selectors = st.lists(requirements(keys, values), max_size=5).map(tuple)
small_selectors = st.lists(requirements(small_keys, small_values), max_size=4).map(tuple)
label_sets = st.dictionaries(small_keys, small_values, max_size=4)


def oracle(selector: Selector, labels: dict[str, str]) -> bool:
    """Each operator's meaning, written out independently of ``Requirement.matches``."""
    for requirement in selector:
        key, wanted = requirement.key, set(requirement.values)
        has = key in labels
        holds = {
            "exists": has,
            "!": not has,
            "=": has and {labels.get(key)} <= wanted,
            "in": has and labels.get(key) in wanted,
            "!=": not (has and labels[key] in wanted),
            "notin": not (has and labels[key] in wanted),
        }[requirement.operator]
        if not holds:
            return False
    return True


@given(selectors)
def test_a_printed_selector_parses_back_to_itself(selector: Selector) -> None:
    assert parse(format_selector(selector)) == selector


@given(selectors)
def test_blanks_between_tokens_do_not_change_the_selector(selector: Selector) -> None:
    spaced = format_selector(selector).replace(",", " , ").replace("(", " ( ")
    assert parse(spaced) == selector


@given(small_selectors, label_sets)
def test_matching_agrees_with_the_oracle(selector: Selector, labels: dict[str, str]) -> None:
    assert matches(selector, labels) == oracle(selector, labels)


@given(label_sets)
def test_the_empty_selector_matches_everything(labels: dict[str, str]) -> None:
    assert matches(parse(""), labels)


@pytest.mark.parametrize(
    ("text", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web", {"app": "api"}, False),
        ("app!=web", {}, True),  # a missing key is "not web"
        ("app", {"app": ""}, True),
        ("!app", {"app": ""}, False),
        ("tier in (a, b)", {"tier": "b"}, True),
        ("tier notin (a,b)", {}, True),
        ("tier in (a,b)", {}, False),
        ("app=web,tier", {"app": "web"}, False),
    ],
)
def test_kubectl_selectors_match_as_kubectl_matches(
    text: str, labels: dict[str, str], expected: bool
) -> None:
    assert matches(parse(text), labels) is expected


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("app in web", "expected '(' after 'in'"),
        ("app in ()", "'in' needs at least one value"),
        ("app,", "expected a requirement after ','"),
        ("app web", "expected an operator"),
        ("=web", "expected a label key"),
        ("app=web tier", "expected ',' between requirements"),
        ("-app=x", "invalid label key '-app'"),
        ("Example.com/app=x", "the prefix must be a DNS subdomain"),
        ("app=" + "v" * 64, "invalid label value"),
        ("tier in (a,b", "expected ')'"),
    ],
)
def test_a_bad_selector_says_why(text: str, reason: str) -> None:
    with pytest.raises(SelectorError, match=re.escape(reason)):
        parse(text)
