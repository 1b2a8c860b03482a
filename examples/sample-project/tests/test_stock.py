import pytest

from inventory import Stock, restock_plan
from inventory.report import render, save


def test_add_and_take():
    stock = Stock()
    stock.add("bolts", 5)
    assert stock.take("bolts", 3) == 3
    assert stock.take("bolts", 9) == 2
    assert stock.quantities["bolts"] == 0


def test_take_of_an_unknown_item_takes_nothing():
    assert Stock().take("nuts", 1) == 0


def test_add_rejects_non_positive_counts():
    with pytest.raises(ValueError, match="positive"):
        Stock().add("bolts", 0)


def test_restock_orders_whole_batches():
    stock = Stock({"bolts": 3, "nuts": 50})
    assert restock_plan(stock, floor=20, batch=10) == {"bolts": 20}


def test_render_aligns_columns(tmp_path):
    text = render({"nuts": 50, "bolts": 3})
    assert text.splitlines() == ["bolts      3", "nuts      50"]
    save(text, tmp_path / "stock.txt")
    assert (tmp_path / "stock.txt").read_text(encoding="utf-8").startswith("bolts")
