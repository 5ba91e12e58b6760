from crewai import Crew, Process
from crewai.project import CrewBase, crew


@CrewBase
class MeetingPrep:
    @crew
    def crew(self) -> Crew:
        return Crew(
            agents=self.agents,
            tasks=self.tasks,
            process=Process.hierarchical,
            manager_llm="gpt-4o",
        )
