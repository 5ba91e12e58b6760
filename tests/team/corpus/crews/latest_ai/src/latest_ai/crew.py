from crewai import Crew, Process
from crewai.project import CrewBase, crew


@CrewBase
class LatestAi:
    agents_config = "config/agents.yaml"
    tasks_config = "config/tasks.yaml"

    @crew
    def crew(self) -> Crew:
        return Crew(agents=self.agents, tasks=self.tasks, process=Process.sequential)
