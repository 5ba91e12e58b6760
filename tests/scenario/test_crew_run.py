"""A CrewAI crew's scripted run: three agents, four tasks with ``context``; the tasks run
in order, each from its agent, with the outputs its context names, each run audited."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from swarm.scenario import Scenario
from swarm.scenario.crew import crew_of, run_crew
from swarm.scenario.spec import Script

pytestmark = pytest.mark.anyio

AGENTS = """\
researcher:
  role: >
    {topic} Senior Data Researcher
  goal: >
    Uncover cutting-edge developments in {topic}
  backstory: >
    You find the most relevant information.
  llm: openai/gpt-4o-mini
  verbose: true
analyst:
  role: Reporting Analyst
  goal: Turn research into numbers
  backstory: You are meticulous.
writer:
  role: Writer
  goal: Write clearly about {topic}
  backstory: You write for a wide audience.
  tools: [FileReadTool, SerperDevTool]
"""

TASKS = """\
research_task:
  description: Research {topic}.
  expected_output: A list of 3 findings about {topic}.
  agent: researcher
analysis_task:
  description: Count what the research found.
  expected_output: One number.
  agent: analyst
  context: [research_task]
outline_task:
  description: Outline an article.
  expected_output: Three headings.
  agent: writer
  context: [research_task]
report_task:
  description: Write the report.
  expected_output: A short report in markdown.
  agent: writer
  context: [analysis_task, outline_task]
  output_file: report.md
"""

SCRIPT = {
    "researcher": [{"text": "F1; F2; F3"}],
    "analyst": [{"text": "3 findings"}],
    "writer": [{"text": "# A\n# B\n# C"}, {"text": "REPORT: 3 findings under A, B, C"}],
}


@pytest.fixture
def crew_dir(tmp_path: Path) -> Path:
    config = tmp_path / "crew" / "config"
    config.mkdir(parents=True)
    (config / "agents.yaml").write_text(AGENTS)
    (config / "tasks.yaml").write_text(TASKS)
    return tmp_path / "crew"


async def test_a_crew_runs_its_tasks_in_order_passing_outputs_audited(
    crew_dir: Path, tmp_path: Path
) -> None:
    scenario = Scenario(
        name="crew",
        task="(the crew's tasks)",
        team=crew_dir,
        model=Script(script=SCRIPT),
        inputs={"topic": "AI agents"},
    )
    crew = crew_of(scenario)
    assert crew is not None
    seen: list[str] = []
    events: list[object] = []
    steps = await run_crew(
        scenario,
        crew,
        workspace=tmp_path / "ws",
        runs_dir=tmp_path / "runs",
        on_task=lambda task, role: seen.append(f"{task.name}:{role}"),
        on_event=events.append,
    )
    assert seen == [
        "research_task:researcher",
        "analysis_task:analyst",
        "outline_task:writer",
        "report_task:writer",
    ]
    assert [s.outcome.final_text for s in steps][-1] == "REPORT: 3 findings under A, B, C"
    # each task's text: placeholders filled, expected output, the outputs of its context
    tasks = []
    for step in steps:
        manifest = json.loads((step.outcome.record_dir / "manifest.json").read_text())
        tasks.append(manifest["config"]["task"])
        assert manifest["team"]["entry"] == step.role
    assert tasks[0].startswith("Research AI agents.")
    assert "A list of 3 findings about AI agents." in tasks[0]
    assert "Context from the task 'research_task':\nF1; F2; F3" in tasks[1]
    assert "F1; F2; F3" in tasks[2] and "3 findings" not in tasks[2]
    assert "Context from the task 'analysis_task':\n3 findings" in tasks[3]
    assert "Context from the task 'outline_task':\n# A\n# B\n# C" in tasks[3]
    # every task is a run with its own audited record, entered by the task's agent
    for step in steps:
        assert (step.outcome.record_dir / "audit.jsonl").is_file()
    assert len({s.outcome.record_dir for s in steps}) == 4


def test_the_prompt_is_made_of_role_goal_and_backstory_and_filled(crew_dir: Path) -> None:
    from swarm.team import Team

    crew = crew_of(Scenario(name="c", task="t", team=crew_dir, inputs={"topic": "bees"}))
    assert crew is not None
    researcher = crew.filled({"topic": "bees"})[0]
    assert researcher.system.startswith("You are bees Senior Data Researcher.")
    assert "Your goal: Uncover cutting-edge developments in bees" in researcher.system
    assert researcher.model == "openai:gpt-4o-mini"
    team = Team.load(crew_dir)
    assert team.specs["writer"].tools == ("read_file",)
    said = "\n".join(team.warnings)
    assert "'SerperDevTool' has no equivalent in swarm: dropped" in said
    assert "agents.yaml:9: field 'researcher.verbose'" in said
    assert "tasks.yaml:20: field 'report_task.output_file'" in said


def test_a_missing_input_is_named(crew_dir: Path) -> None:
    from swarm import ConfigError

    with pytest.raises(ConfigError, match=r"needs inputs for \{topic\}: give --input topic="):
        crew_of(Scenario(name="c", task="t", team=crew_dir))


TYPED_AGENTS = """\
researcher:
  role: Researcher
  goal: Profile {company}
  backstory: You read company pages.
scorer:
  role: Scorer
  goal: Score {company} as a lead
  backstory: You have scored thousands of leads.
writer:
  role: Writer
  goal: Write to {company}
  backstory: Your emails get answers.
"""

TYPED_TASKS = """\
research_task:
  description: Profile {company}.
  expected_output: A short profile.
  agent: researcher
score_task:
  description: Score {company}.
  expected_output: A score and its reasons.
  agent: scorer
  context: [research_task]
  output_pydantic: LeadScore
email_task:
  description: Write the first email.
  expected_output: An email.
  agent: writer
  context: [score_task]
"""

TYPED_MODELS = '''\
from pydantic import BaseModel, Field


class LeadScore(BaseModel):
    """How well the lead fits."""

    score: int = Field(ge=0, le=100)
    reasons: list[str]
'''


async def test_a_typed_task_output_is_checked_and_passed_on_as_json(tmp_path: Path) -> None:
    from swarm.events import OutputInvalid

    crew_dir = tmp_path / "leads"
    (crew_dir / "config").mkdir(parents=True)
    (crew_dir / "config" / "agents.yaml").write_text(TYPED_AGENTS)
    (crew_dir / "config" / "tasks.yaml").write_text(TYPED_TASKS)
    (crew_dir / "crew.py").write_text(TYPED_MODELS)
    script = {
        "researcher": [{"text": "Acme makes anvils; 40 people."}],
        "scorer": [
            # wrong: a score out of range, no reasons, a field the model does not have
            {"call": "final_answer", "args": {"score": 140, "tier": "A"}},
            {"call": "final_answer", "args": {"score": 72, "reasons": ["makes anvils"]}},
        ],
        "writer": [{"text": "Dear Acme, ..."}],
    }
    scenario = Scenario(
        name="leads",
        task="(the crew's tasks)",
        team=crew_dir,
        model=Script(script=script),
        inputs={"company": "Acme"},
    )
    crew = crew_of(scenario)
    assert crew is not None and crew.tasks[1].output is not None
    events: list[object] = []
    steps = await run_crew(
        scenario,
        crew,
        workspace=tmp_path / "ws",
        runs_dir=tmp_path / "runs",
        on_event=events.append,
    )
    assert [s.outcome.stop_reason.value for s in steps] == ["end_turn"] * 3
    # the wrong answer went back to the model, naming what was wrong
    invalid = [e for e in events if isinstance(e, OutputInvalid)]
    assert len(invalid) == 1
    said = " ".join(invalid[0].problems)
    assert "score" in said and "missing field 'reasons'" in said and "'tier'" in said
    # the accepted answer is the task's output, and the context task gets it as JSON
    scored = steps[1].outcome
    assert list(scored.outputs.values()) == [{"score": 72, "reasons": ["makes anvils"]}]
    assert json.loads(scored.final_text) == {"score": 72, "reasons": ["makes anvils"]}
    manifest = json.loads((steps[2].outcome.record_dir / "manifest.json").read_text())
    email_task = manifest["config"]["task"]
    assert 'Context from the task \'score_task\':\n{"score": 72, "reasons": ["makes anvils"]}' in (
        email_task
    )
    # the scorer's run records the schema it was held to; the others have none
    recorded = json.loads((scored.record_dir / "manifest.json").read_text())["config"]
    assert recorded["output"]["required"] == ["score", "reasons"]
    assert "output" not in manifest["config"]
    # resuming the scorer's run rebuilds its scenario with the schema it was held to
    from swarm.record.manifest import RunConfig

    again = RunConfig.from_dict(recorded, path=scored.record_dir).scenario()
    assert again.output is not None
    assert again.output.check({"score": 72})[1] == ["missing field 'reasons'"]
    # and the writer, who had no schema, answered in text
    assert steps[2].outcome.final_text == "Dear Acme, ..."
