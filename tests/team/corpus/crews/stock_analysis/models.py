"""What the investment advisor hands back (read by swarm without being imported)."""

from typing import List, Literal, Optional

from pydantic import BaseModel, Field


class PricePoint(BaseModel):
    """One price the advisor relies on."""

    date: str = Field(..., description="ISO date of the quote")
    close: float


class Recommendation(BaseModel):
    """A recommendation on one stock."""

    ticker: str = Field(..., description="The stock's ticker symbol")
    action: Literal["buy", "hold", "sell"]
    confidence: float = Field(0.5, ge=0, le=1, description="0 to 1")
    reasons: List[str] = Field(default_factory=list)
    prices: list[PricePoint] = []
    target_price: Optional[float] = None
