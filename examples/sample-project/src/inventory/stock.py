"""Items on shelves, and what to order when they run low."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Stock:
    """Quantities per item; never negative."""

    quantities: dict[str, int] = field(default_factory=dict)

    def add(self, item: str, count: int) -> None:
        if count <= 0:
            raise ValueError(f"count must be positive, got {count}")
        self.quantities[item] = self.quantities.get(item, 0) + count

    def take(self, item: str, count: int) -> int:
        """Take up to ``count``; returns how many were really taken."""
        available = self.quantities.get(item, 0)
        taken = min(available, count)
        if taken:
            self.quantities[item] = available - taken
        return taken

    def low(self, floor: int) -> list[str]:
        return sorted(item for item, count in self.quantities.items() if count < floor)


def restock_plan(stock: Stock, floor: int, batch: int = 10) -> dict[str, int]:
    """How much of each low item to order to get back to ``floor`` in whole batches."""
    plan = {}
    for item in stock.low(floor):
        missing = floor - stock.quantities[item]
        batches = -(-missing // batch)
        plan[item] = batches * batch
    return plan
