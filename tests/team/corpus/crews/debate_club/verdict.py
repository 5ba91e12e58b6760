from enum import Enum

from pydantic import BaseModel, Field


class Side(str, Enum):
    PROPOSER = "proposer"
    OPPOSER = "opposer"


class Verdict(BaseModel):
    """The judge's decision."""

    winner: Side
    margin: int = Field(description="points between the two sides", ge=0)
    summary: str | None = None
    scores: dict[str, int] = {}
