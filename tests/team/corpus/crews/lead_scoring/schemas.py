from typing import Annotated, Optional

from pydantic import BaseModel, Field


class Contact(BaseModel):
    name: str
    title: Optional[str] = None


class LeadScore(BaseModel):
    """How well the lead fits, and why."""

    score: Annotated[int, Field(ge=0, le=100, description="0 (no fit) to 100")]
    reasons: list[str] = Field(..., min_length=1)
    decision_maker: Contact | None = None
