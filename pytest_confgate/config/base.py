"""Leaf: the value types and base model every configuration section shares."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field


class ConfigModel(BaseModel):
    """Every configuration section: frozen, an unknown key is an error, and nothing
    is coerced (issue 17): ``threshold: "0.85"`` or ``enabled: "yes"`` is an error, not a
    number or a boolean; an integer is still a valid number."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)


Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
Count = Annotated[int, Field(ge=0)]
Text = Annotated[str, Field(min_length=1)]
Glob = Annotated[str, Field(min_length=1, max_length=500)]
Scope = Literal["all", "changed"]
"""``changed``: only what the change touched since ``base_ref`` counts (issue 3)."""
AgentName = Annotated[str, Field(min_length=1, max_length=100)]
EnvName = Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=200)]
Milliseconds = Annotated[int, Field(gt=0, le=3_600_000)]
Condition_ = Annotated[str, Field(min_length=1, max_length=1000)]
"""An exit condition (CEL, compiled by the overlays); capped so no expression is huge."""
