"""A CrewAI task's ``output_pydantic``/``output_json`` class read from the crew's Python
files without running them: the schema agrees with pydantic's own reading of the class,
what cannot be read is said once with its file and line, and the task runs untyped."""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path
from typing import Any

import pytest

from swarm.contracts import OutputContract
from swarm.errors import ConfigError
from swarm.team.crew_models import ModelProblem, ProjectModels
from swarm.team.crewai import Crew, crew_files, load_crew

CREWS = Path(__file__).parent / "corpus" / "crews"

AGENTS = "writer:\n  role: Writer\n  goal: Write\n  backstory: You write.\n"


def _crew(tmp_path: Path, tasks: str, files: dict[str, str]) -> Path:
    home = tmp_path / "crew"
    (home / "config").mkdir(parents=True)
    (home / "config" / "agents.yaml").write_text(AGENTS)
    (home / "config" / "tasks.yaml").write_text(tasks)
    for name, text in files.items():
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(text)
    return home


def _load(home: Path) -> Crew:
    found = crew_files(home)
    assert found is not None
    return load_crew(*found)


def _task(key: str, value: str) -> str:
    return f"report:\n  description: Report.\n  agent: writer\n  {key}: {value}\n"


def _pydantic(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(f"corpus_{path.stem}_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


# each corpus model: its crew's folder, its file, its class, answers pydantic accepts or not
MODELS = [
    (
        "stock_analysis",
        "stock_analysis/models.py",
        "Recommendation",
        [
            {"ticker": "ACME", "action": "buy"},
            {"ticker": "ACME", "action": "buy", "prices": [{"date": "2025-01-02", "close": 3.5}]},
        ],
        [
            {"ticker": "ACME", "action": "short"},
            {"ticker": "ACME", "action": "buy", "confidence": 2},
            {"ticker": "ACME", "action": "hold", "prices": [{"close": 3.5}]},
            {"action": "sell"},
        ],
    ),
    (
        "debate_club",
        "debate_club/verdict.py",
        "Verdict",
        [{"winner": "opposer", "margin": 3}, {"winner": "proposer", "margin": 0, "summary": None}],
        [{"winner": "jury", "margin": 3}, {"winner": "opposer", "margin": -1}, {"margin": 1}],
    ),
    (
        "lead_scoring",
        "lead_scoring/schemas.py",
        "LeadScore",
        [{"score": 10, "reasons": ["x"], "decision_maker": {"name": "Ada"}}],
        [
            {"score": 101, "reasons": ["x"]},
            {"score": 10, "reasons": []},
            {"score": 10, "reasons": ["x"], "decision_maker": {"title": "CEO"}},
        ],
    ),
    (
        "market_report/src/market_report",
        "market_report/src/market_report/models/report.py",
        "MarketReport",
        [{"title": "T", "published": "2025-03-01", "sections": [{"heading": "h", "text": "t"}]}],
        [
            {"title": "T", "published": "2025-03-01", "sections": []},
            {"title": "T", "published": "2025-03-01"},
        ],
    ),
]


@pytest.mark.parametrize(("home", "file", "name", "good", "bad"), MODELS)
def test_the_static_schema_agrees_with_pydantic(
    home: str, file: str, name: str, good: list[Any], bad: list[Any]
) -> None:
    import pydantic

    schema = ProjectModels(CREWS / home).schema(name)
    assert not isinstance(schema, ModelProblem), schema
    model = _pydantic(CREWS / file, name)
    theirs = model.model_json_schema()
    assert list(schema["properties"]) == list(theirs["properties"])
    assert schema.get("required", []) == theirs.get("required", [])
    assert schema.get("description") == theirs.get("description")
    contract = OutputContract.of(schema)
    for answer in good:
        model.model_validate(answer)
        assert contract.check(answer)[1] == [], answer
    for answer in bad:
        with pytest.raises(pydantic.ValidationError):
            model.model_validate(answer)
        assert contract.check(answer)[1] != [], answer


def test_each_typed_task_of_the_corpus_gets_its_schema() -> None:
    typed = {}
    for name in ("stock_analysis", "debate_club", "lead_scoring", "market_report"):
        found = crew_files(CREWS / name)
        assert found is not None
        for task in load_crew(*found).tasks:
            if task.output is not None:
                typed[f"{name}.{task.name}"] = task.output.schema["title"]
    assert typed == {
        "stock_analysis.recommend": "Recommendation",  # tasks.yml, a dotted module path
        "debate_club.judge": "Verdict",  # output_json, in a module beside the config
        "lead_scoring.score_task": "LeadScore",  # crew.py's Task(..., output_pydantic=)
        "market_report.trends_task": "TrendList",  # a class nested in the @CrewBase class
        "market_report.report_task": "MarketReport",  # imported from the package's models/
    }


def test_what_cannot_be_read_is_said_once_with_its_line_and_the_task_is_untyped() -> None:
    for name, where, said in (
        ("lead_scoring", "lead_scoring/crew.py:14:", "'EmailDraft.short' is a field_validator"),
        (
            "market_report",
            "market_report/crew.py:8:",
            "'Chart' is imported from 'shared_schemas.charts', which swarm does not read",
        ),
    ):
        found = crew_files(CREWS / name)
        assert found is not None
        crew = load_crew(*found)
        lines = [w for w in crew.warnings if "runs untyped" in w]
        assert len(lines) == 1 and where in lines[0] and said in lines[0], crew.warnings
        untyped = [t for t in crew.tasks if t.name in lines[0] and t.output is None]
        assert untyped


@pytest.mark.parametrize(
    ("source", "said"),
    [
        (
            "from pydantic import BaseModel, conint\n\nclass Report(BaseModel):\n"
            "    pages: conint(ge=1)\n",
            "crew.py:4: the type 'conint(ge=1)' cannot be read statically",
        ),
        (
            "from pydantic import BaseModel, model_validator\n\nclass Report(BaseModel):\n"
            "    a: int\n\n    @model_validator(mode='after')\n    def check(self):\n"
            "        return self\n",
            "crew.py:6: 'Report.check' is a model_validator",
        ),
        (
            "from typing import Generic, TypeVar\nfrom pydantic import BaseModel\n"
            "T = TypeVar('T')\n\nclass Report(BaseModel, Generic[T]):\n    a: T\n",
            "crew.py:5: the base 'Generic[T]' is not read",
        ),
        ("class Report:\n    a: int\n", "crew.py:1: 'Report' is not a pydantic model"),
        ("x = 1\n", "crew.py: no class 'Report' in crew's Python files"),
        ("class Report(BaseModel:\n", "crew.py:1: not read: "),
    ],
)
def test_each_kind_of_unreadable_class_is_named(tmp_path: Path, source: str, said: str) -> None:
    home = _crew(tmp_path, _task("output_pydantic", "Report"), {"crew.py": source})
    crew = _load(home)
    assert crew.tasks[0].output is None
    assert any(said in w and "the task 'report' runs untyped" in w for w in crew.warnings), (
        crew.warnings
    )


def test_one_model_two_tasks_is_said_once(tmp_path: Path) -> None:
    tasks = _task("output_json", "Report") + (
        "again:\n  description: Again.\n  agent: writer\n  output_pydantic: Report\n"
    )
    home = _crew(tmp_path, tasks, {"crew.py": "from elsewhere import Report\n"})
    crew = _load(home)
    said = [w for w in crew.warnings if "Report" in w]
    assert said == [
        f"{home / 'crew.py'}:1: 'Report' is imported from 'elsewhere', which swarm does not"
        " read: the tasks 'report', 'again' run untyped"
    ]


def test_the_crews_code_is_never_run(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    source = (
        f"open({str(marker)!r}, 'w').write('imported')\n"
        "from pydantic import BaseModel\n\nclass Report(BaseModel):\n    title: str\n"
    )
    home = _crew(tmp_path, _task("output_pydantic", "Report"), {"models.py": source})
    crew = _load(home)
    assert crew.tasks[0].output is not None
    assert crew.tasks[0].output.schema["required"] == ["title"]
    assert not marker.exists()


def test_types_and_fields_read(tmp_path: Path) -> None:
    source = '''\
from typing import Annotated, Dict, List, Literal, Optional, Union
from pydantic import BaseModel, Field

class Node(BaseModel):
    """A tree."""
    label: str = Field(alias="name", description="what it is")
    children: List["Node"] = []

class Report(BaseModel):
    root: Node
    kind: Literal["a", "b", None] = None
    size: Union[int, float]
    pair: tuple[int, str]
    tags: set[str] = Field(default_factory=set, max_length=3)
    meta: Dict[str, Optional[int]] = {}
    note: Annotated[Optional[str], Field(description="free text")] = None
    ratio: float | int | None = 0.5
'''
    home = _crew(tmp_path, _task("output_pydantic", "Report"), {"models/report.py": source})
    crew = _load(home)
    output = crew.tasks[0].output
    assert output is not None, crew.warnings
    schema = json.loads(json.dumps(dict(output.schema)))
    properties = schema["properties"]
    assert schema["required"] == ["root", "size", "pair"]
    assert properties["root"] == {"$ref": "#/$defs/Node"}
    node = schema["$defs"]["Node"]
    assert node["properties"]["name"] == {"type": "string", "description": "what it is"}
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert properties["kind"] == {"enum": ["a", "b", None], "default": None}
    assert properties["size"] == {"anyOf": [{"type": "integer"}, {"type": "number"}]}
    assert properties["pair"]["prefixItems"] == [{"type": "integer"}, {"type": "string"}]
    assert properties["tags"] == {"type": "array", "items": {"type": "string"}, "maxItems": 3}
    assert properties["meta"]["additionalProperties"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}]
    }
    assert properties["note"]["description"] == "free text"
    assert properties["ratio"]["anyOf"] == [
        {"type": "number"},
        {"type": "integer"},
        {"type": "null"},
    ]
    good = {"root": {"name": "r", "children": [{"name": "c"}]}, "size": 2, "pair": [1, "x"]}
    assert output.check(good)[1] == []
    assert output.check({**good, "pair": [1, 2]})[1] != []
    assert output.check({**good, "root": {"name": "r", "children": [{}]}})[1] != []


def test_both_keys_on_one_task_is_an_error(tmp_path: Path) -> None:
    tasks = _task("output_pydantic", "Report") + "  output_json: Report\n"
    home = _crew(tmp_path, tasks, {})
    with pytest.raises(ConfigError, match=r"tasks.yaml:5: field 'report.output_json': a task"):
        _load(home)


def test_a_class_that_inherits_from_itself_is_said_not_a_crash(tmp_path: Path) -> None:
    source = (
        "from pydantic import BaseModel\n\nclass Report(Base):\n    a: int\n\n"
        "class Base(Report, BaseModel):\n    b: int\n"
    )
    crew = _load(_crew(tmp_path, _task("output_pydantic", "Report"), {"crew.py": source}))
    assert crew.tasks[0].output is None
    assert any("'Report' inherits from itself" in w for w in crew.warnings), crew.warnings


def test_a_type_nested_beyond_reading_is_said_not_a_crash(tmp_path: Path) -> None:
    deep = "list[" * 400 + "int" + "]" * 400
    source = f"from pydantic import BaseModel\n\nclass Report(BaseModel):\n    a: {deep}\n"
    crew = _load(_crew(tmp_path, _task("output_pydantic", "Report"), {"crew.py": source}))
    assert crew.tasks[0].output is None
    assert any("runs untyped" in w for w in crew.warnings), crew.warnings


def test_a_python_file_that_is_not_a_regular_file_is_never_opened(tmp_path: Path) -> None:
    home = _crew(tmp_path, _task("output_pydantic", "Report"), {})
    os.mkfifo(home / "crew.py")  # opening it for reading would wait for a writer forever
    (home / "models.py").write_text(
        "from pydantic import BaseModel\n\nclass Report(BaseModel):\n    a: int\n"
    )
    crew = _load(home)
    assert crew.tasks[0].output is not None


def test_the_files_typed_outputs_are_read_from_pin_a_crews_run(tmp_path: Path) -> None:
    from swarm.record.pinning import defining_files
    from swarm.scenario import Scenario

    source = "from pydantic import BaseModel\n\nclass Report(BaseModel):\n    a: int\n"
    home = _crew(tmp_path, _task("output_pydantic", "Report"), {"models/report.py": source})
    pinned = defining_files(Scenario(name="s", task="t", team=home), [])
    assert str(Path(os.path.realpath(home)) / "models" / "report.py") in pinned
