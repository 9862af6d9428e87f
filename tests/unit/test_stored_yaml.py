"""The stored katib-config is read by libyaml's loader: the same document, the same errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from katib_resume.app.common.errors import InputError
from katib_resume.app.common.inputs import embedded_config_text, read_stored_yaml, read_yaml


def test_the_stored_config_reads_as_the_pure_loader_reads_it(tmp_path: Path) -> None:
    path = tmp_path / "katib-config.yaml"
    path.write_text(embedded_config_text(), encoding="utf-8")
    assert read_stored_yaml(str(path)) == read_yaml(str(path))


@pytest.mark.parametrize("text", ["a: [1, 2\n", "", "a: 1\n---\nb: 2\n", "a: b: c\n"])
def test_a_damaged_stored_file_fails_with_the_pure_loaders_message(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "katib-config.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as pure:
        read_yaml(str(path))
    with pytest.raises(InputError) as fast:
        read_stored_yaml(str(path))
    assert str(fast.value) == str(pure.value)
