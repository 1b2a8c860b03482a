"""A tiny stock-keeping library used to show what the gate reports."""

from inventory.stock import Stock, restock_plan

__all__ = ["Stock", "restock_plan"]
