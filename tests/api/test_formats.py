"""api/formats.py: an answer's spreadsheet forms, rendered from its JSON: the `key,value` CSV (unique keys, floats
written to round-trip, within one spreadsheet cell) and one value as plain text (a float, or the exact fraction
where the answer has it).
"""

from __future__ import annotations

import csv
import io
from typing import Any

import pytest
from flask.testing import FlaskClient

from analysis.position import POSITION_FIELDS
from api import spec
from api.formats import NotExact, csv_table, one_value, rows

from ..responses import query

WORKED = {"footprints": ["green", "red"], "brains": ["green"], "shotguns": ["red"], "banked": 0}


def test_csv_for_spreadsheets(client: FlaskClient) -> None:
    response = client.get("/v1/odds", query_string={**query(WORKED), "format": "csv"})
    assert response.status_code == 200 and response.mimetype == "text/csv"
    table = list(csv.reader(io.StringIO(response.get_data(as_text=True))))
    assert table[0] == ["key", "value"]
    values = dict(table[1:])
    assert len(values) == len(table) - 1, "keys are unique"
    body = client.get("/v1/odds", query_string=query(WORKED)).get_json()
    assert float(values["bust"]) == body["next_roll"]["bust"]["value"]
    assert float(values["roll"]) == body["decision"]["roll"]["value"]
    assert values["action"] == body["decision"]["action"]
    assert values["footprints"] == "green red"
    assert sum(float(v) for k, v in values.items() if k.startswith("score_distribution.")) == pytest.approx(1)
    assert sum(float(v) for k, v in values.items() if k.startswith("outcome.")) == pytest.approx(1)


def test_the_longest_csv_fits_a_spreadsheet_cell(client: FlaskClient) -> None:
    """The start of a turn has the longest score distribution; Excel's WEBSERVICE stops at 32,767 characters."""
    response = client.get("/v1/odds?format=csv")
    assert response.status_code == 200
    assert len(response.get_data(as_text=True)) < 32_767


@pytest.mark.parametrize("field", ["bust", "action", "roll", "stop"])
def test_one_value_as_text(client: FlaskClient, field: str) -> None:
    """A value as text: the float of the answer (from the stored solution), or with exact=true the exact one's."""
    floats = client.get("/v1/odds", query_string=query(WORKED)).get_json()
    fractions = client.get("/v1/odds", query_string={**query(WORKED), "exact": "true"}).get_json()

    def pick(body: dict[str, Any]) -> Any:
        return body["decision"]["action"] if field == "action" else (
            body["next_roll"]["bust"] if field == "bust" else body["decision"][field])

    as_float = client.get("/v1/odds.txt", query_string={**query(WORKED), "field": field})
    as_exact = client.get("/v1/odds.txt", query_string={**query(WORKED), "field": field, "exact": "true"})
    for response in (as_float, as_exact):
        assert response.status_code == 200 and response.mimetype == "text/plain"
    if field == "action":
        assert as_float.get_data(as_text=True) == as_exact.get_data(as_text=True) == pick(floats) == pick(fractions)
    else:
        assert float(as_float.get_data(as_text=True)) == pick(floats)["value"]
        assert as_exact.get_data(as_text=True) == pick(fractions)["exact"]
        assert abs(pick(floats)["value"] - pick(fractions)["value"]) <= pick(floats).get("within", 0)


def test_bust_as_text_at_the_start(client: FlaskClient) -> None:
    assert client.get("/v1/odds.txt?field=bust&exact=true&_=42").get_data(as_text=True) == "94/3861"


# The spec's `school-bus-riding` example: a Double Feature mode with the School Bus, near the end of the turn.
RIDING_BODY = {"mode": "big-summer-action-movie", "school_bus": True, "riding": True, "footprints": ["hottie"],
               "brains": ["hunk", "green", "green"], "double_brains": ["hunk"], "shotguns": ["red", "red"]}


def test_the_csv_has_a_row_per_field_of_the_position(client: FlaskClient) -> None:
    """Every field of a position (analysis.position's), then `first_roll` and `score`, in the order the spec
    documents them, which names every one; then the cup."""
    response = client.get("/v1/odds", query_string={**query(RIDING_BODY), "format": "csv"})
    assert response.status_code == 200, response.get_data(as_text=True)
    keys = [key for key, _ in list(csv.reader(io.StringIO(response.get_data(as_text=True))))[1:]]
    before_recycle = [f for f in POSITION_FIELDS if f != "recycle"]
    assert keys[:len(POSITION_FIELDS) + 2] == [*before_recycle, "first_roll", "recycle", "score"]
    assert keys[len(POSITION_FIELDS) + 2].startswith("cup.")
    documented = spec.load()[1]["paths"]["/v1/odds"]["get"]["description"]
    assert all(f"`{key}`" in documented for key in (*POSITION_FIELDS, "first_roll", "score"))


# A School Bus answer riding the bus, as answers.answer renders it (values from the stored solution: floats only,
# but the bust chance of the next roll).
RIDING = {
    "position": {"mode": "original", "footprints": ["green"], "brains": ["yellow", "green"], "shotguns": [],
                 "banked": 0, "school_bus": True, "riding": True, "bus_brains": 1, "recycle": "before-draw",
                 "score": 2, "cup": {"green": 4, "yellow": 3, "red": 3}},
    "next_roll": {"bust": {"exact": "1/7", "value": 1 / 7}, "expected_brains": {"value": 0.1 + 0.2},
                  "recycles": False, "outcomes": [{"brains": 0, "shotguns": 0, "value": 0.5},
                                                  {"brains": 1, "shotguns": 0, "value": 0.5}]},
    "decision": {"objective": "expected-brains", "action": "stay",
                 "roll": {"value": 3.25, "within": 1e-9}, "stop": {"exact": "3/1", "value": 3.0},
                 "actions": [{"action": "stop", "value": {"exact": "3/1", "value": 3.0}},
                             {"action": "stay", "value": {"value": 3.25, "within": 1e-9},
                              "next_roll": {"bust": {"value": 0.125}}}]},
    "turn": {"score_distribution": [{"score": 0, "value": 0.25}, {"score": 4, "value": 0.75}], "within": 1e-9},
}


def test_the_csv_rows_of_a_school_bus_answer() -> None:
    """The position's own fields as cells (a boolean `true`, a number as is), each action with its roll, the
    outcomes and the distribution; floats as Python writes them back (0.1 + 0.2 whole)."""
    table = list(csv.reader(io.StringIO(csv_table(RIDING))))
    assert table[0] == ["key", "value"] and [tuple(r) for r in table[1:]] == [
        (k, repr(v) if isinstance(v, float) else str(v)) for k, v in rows(RIDING)]
    values = dict(table[1:])
    assert (values["school_bus"], values["riding"], values["bus_brains"]) == ("true", "true", "1")
    assert (values["brains"], values["cup.red"], values["recycles"]) == ("yellow green", "3", "false")
    assert float(values["expected_brains"]) == 0.1 + 0.2 and values["expected_brains"] == "0.30000000000000004"
    assert (values["actions.stop"], values["actions.stay"], values["actions.stay.bust"]) == ("3.0", "3.25", "0.125")
    assert (values["outcome.b1.s0"], values["score_distribution.4"]) == ("0.5", "0.75")
    assert "cost" not in values and [k for k, _ in rows(RIDING)][:2] == ["mode", "footprints"]


@pytest.mark.parametrize(("field", "exact", "text"), [("bust", True, "1/7"), ("bust", False, repr(1 / 7)),
                                                     ("stop", True, "3/1"), ("roll", False, "3.25"),
                                                     ("action", False, "stay"), ("stay", False, "3.25"),
                                                     ("stop", False, "3.0")])
def test_one_value(field: str, exact: bool, text: str) -> None:
    assert one_value(RIDING, field, exact) == text


def test_one_value_the_answer_has_no_exact_form_of() -> None:
    with pytest.raises(NotExact):
        one_value(RIDING, "roll", exact=True)
    with pytest.raises(NotExact):
        one_value(RIDING, "stay", exact=True)
    with pytest.raises(KeyError):
        one_value(RIDING, "get-off")  # not legal here


def test_a_win_answer_has_its_cost_and_no_distribution() -> None:
    win: dict[str, Any] = {**RIDING, "decision": {**RIDING["decision"], "objective": "win", "cost": {"value": 0.01}}}
    del win["turn"]
    keys = dict(rows(win))
    assert keys["objective"] == "win" and keys["cost"] == 0.01
    assert not any(k.startswith("score_distribution.") for k in keys)
