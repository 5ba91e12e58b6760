from datetime import date

from pydantic import BaseModel, Field


class Section(BaseModel):
    heading: str
    text: str


class MarketReport(BaseModel):
    """A one-page market report."""

    title: str
    published: date
    sections: list[Section] = Field(min_length=1, max_length=6)
    tags: tuple[str, ...] = ()
