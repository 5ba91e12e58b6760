from typing import List

from crewai import Agent, Crew, Process, Task
from crewai.project import CrewBase, agent, crew, output_pydantic, task
from pydantic import BaseModel

from market_report.models.report import MarketReport
from shared_schemas.charts import Chart


@CrewBase
class MarketReportCrew:
    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @output_pydantic
    class TrendList(BaseModel):
        """The year's trends, strongest first."""

        trends: List[str]
        sector: str

    @agent
    def market_analyst(self) -> Agent:
        return Agent(config=self.agents_config["market_analyst"])

    @agent
    def report_writer(self) -> Agent:
        return Agent(config=self.agents_config["report_writer"])

    @agent
    def chart_maker(self) -> Agent:
        return Agent(config=self.agents_config["chart_maker"])

    @task
    def trends_task(self) -> Task:
        return Task(config=self.tasks_config["trends_task"])

    @task
    def report_task(self) -> Task:
        return Task(config=self.tasks_config["report_task"], output_pydantic=MarketReport)

    @task
    def chart_task(self) -> Task:
        return Task(config=self.tasks_config["chart_task"])

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
