"""The prompts folder: every prompt named in code is shipped, every shipped prompt is used, a
workspace's override is what the model receives (real litellm, mock_response), and a broken
override is a one-line error."""

from __future__ import annotations

import ast
import datetime as dt
from pathlib import Path

import pytest
from litellm.integrations.custom_logger import CustomLogger

from lifelong import clock, prompts
from lifelong.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
MODEL = "gemini/gemini-2.5-flash"
NOW = dt.datetime(2026, 3, 24, 9, 0, tzinfo=clock.zone("UTC"))
FILES = {
    "MEMORY.md": "# MEMORY\n\n- I'm Maya Okafor, founder of Tidewater Labs.\n",
    "memory/2026-03-04.md": "# 2026-03-04\n\n## Investor pitch\n- The pitch opens with the live demo.\n",
}


def _prompt_names_in_code() -> dict[str, str]:
    """Every prompt name handed to prompts.render / prompts.texts in lifelong/ and plugins/: a
    string literal, or a module-level constant holding one. name -> the file naming it."""
    found: dict[str, str] = {}
    for path in [*(ROOT / "lifelong").rglob("*.py"), *(ROOT / "plugins").rglob("*.py")]:
        tree = ast.parse(path.read_text(), filename=str(path))
        constants = {
            t.id: node.value.value
            for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("render", "texts")
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "prompts"
                and node.args
            ):
                continue
            arg = node.args[0]
            name = arg.value if isinstance(arg, ast.Constant) else constants.get(getattr(arg, "id", ""))
            assert isinstance(name, str), (
                f"{path.relative_to(ROOT)}:{node.lineno}: prompt name not a constant"
            )
            found[name] = str(path.relative_to(ROOT))
    return found


def test_every_prompt_named_in_code_is_shipped_and_every_shipped_one_is_used() -> None:
    used = _prompt_names_in_code()
    assert len(used) >= 10  # gate, its styles, flush, 3 dreaming, judge, wiki, session summary, chat
    missing = {name: where for name, where in used.items() if name not in prompts.names()}
    assert not missing, f"named in code but not in prompts/: {missing}"
    assert set(prompts.names()) == set(used), (
        f"in prompts/ but never used: {set(prompts.names()) - set(used)}"
    )
    assert prompts.folder() == ROOT / "prompts"  # a source checkout reads the top-level folder


def test_an_unknown_prompt_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="no prompt named 'nope.md.j2'"):
        prompts.render("nope.md.j2")


class Sent(CustomLogger):
    """What litellm was asked to send (its pre-call log, before the mocked provider answers)."""

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[list[dict]] = []

    def log_pre_api_call(self, model, messages, kwargs) -> None:  # noqa: ANN001
        self.messages.append(messages)


@pytest.fixture
def sent():
    import litellm

    logger = Sent()
    before = list(litellm.callbacks)
    litellm.callbacks = [*before, logger]
    yield logger
    litellm.callbacks = before


def _gate_host(make_host, override: dict[str, str] | None = None):
    files = dict(FILES)
    for name, text in (override or {}).items():
        files[f"prompts/{name}"] = text
    config = {
        "embedding": {"provider": "none"},
        "plugins": {
            "gate": {"model": MODEL, "prompt_style": "strict", "model_options": {"mock_response": "NONE"}}
        },
    }
    return make_host(files, config, builtins=("embeddings", "recall", "gate"), entry_points=False)


def _ask(host) -> None:
    with clock.pinned(NOW):
        host.before_reply({"id": "s1"}, "what did we decide about the pitch?")


def test_the_shipped_gate_prompt_is_sent_without_an_override(make_host, sent) -> None:
    _ask(_gate_host(make_host))
    (messages,) = sent.messages
    text = messages[0]["content"]
    assert text.startswith("You are the memory gate of a personal AI assistant.")
    assert "The pitch opens with the live demo." in text  # the hit, rendered into the shipped template


def test_a_workspace_override_replaces_the_shipped_prompt(make_host, sent) -> None:
    override = (
        "HOUSE RULES for {{ today }}: answer NONE unless sure ({{ max_chars }} chars).\n"
        "{% for hit in hits %}[{{ hit.citation }}] {{ hit.text }}\n{% endfor %}"
        "Style: {{ style_instruction }}\n"
    )
    styles = prompts.texts("gate_styles.yaml")
    styles_override = "".join(f"{k}: 'OVERRIDDEN {k}'\n" for k in styles)
    _ask(_gate_host(make_host, {"gate.md.j2": override, "gate_styles.yaml": styles_override}))
    (messages,) = sent.messages
    text = messages[0]["content"]
    assert text.startswith("HOUSE RULES for 2026-03-24: answer NONE unless sure (")
    assert "You are the memory gate" not in text
    assert "The pitch opens with the live demo." in text
    assert "Style: OVERRIDDEN strict\n" in text  # the configured style's sentence, from the override


def test_a_broken_override_is_a_one_line_error_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "supersede_judge.md.j2").write_text("{{ old }} vs {{ nonsense }}\n")
    with pytest.raises(ConfigError) as err:
        prompts.render("supersede_judge.md.j2", tmp_path, old="a", new="b", old_date="x", new_date="y")
    assert str(err.value) == "prompts/supersede_judge.md.j2: 'nonsense' is undefined"
    (tmp_path / "prompts" / "gate_styles.yaml").write_text("strict: only this one\n")
    with pytest.raises(ConfigError, match=r"prompts/gate_styles.yaml: missing balanced, contextual"):
        prompts.texts("gate_styles.yaml", tmp_path)
    # without the override the shipped prompt renders with the same variables
    assert "OLD (x): <<<a>>>" in prompts.render(
        "supersede_judge.md.j2", None, old="a", new="b", old_date="x", new_date="y"
    )
