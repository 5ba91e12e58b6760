from typing import Optional

from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, task
from pydantic import BaseModel, Field, field_validator

from lead_scoring.schemas import LeadScore


class EmailDraft(BaseModel):
    subject: str
    body: str

    @field_validator("body")
    @classmethod
    def short(cls, value: str) -> str:
        if len(value.split()) > 120:
            raise ValueError("too long")
        return value


@CrewBase
class LeadScoringCrew:
    """Scores a lead and writes to it."""

    agents_config = "agents.yaml"
    tasks_config = "tasks.yaml"

    @agent
    def lead_researcher(self) -> Agent:
        return Agent(config=self.agents_config["lead_researcher"])

    @agent
    def lead_scorer(self) -> Agent:
        return Agent(config=self.agents_config["lead_scorer"])

    @agent
    def email_writer(self) -> Agent:
        return Agent(config=self.agents_config["email_writer"])

    @task
    def research_task(self) -> Task:
        return Task(config=self.tasks_config["research_task"])

    @task
    def scoring(self) -> Task:
        return Task(config=self.tasks_config["score_task"], output_pydantic=LeadScore)

    @task
    def email_task(self) -> Task:
        return Task(config=self.tasks_config["email_task"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
