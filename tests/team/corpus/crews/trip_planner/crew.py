from crewai import Crew, Process


def build(agents, tasks, manager_llm):
    return Crew(agents=agents, tasks=tasks, process=Process.hierarchical, manager_llm=manager_llm)
