"""A catalogue of impossible and hostile input: each is a 4xx problem+json that names the field at fault.

Nothing here may reach the engine, be silently corrected, or become a 500: every case checks the
status, the media type and the field named in `errors` (and, with TESTING on, the answer is checked
against openapi.yaml too).
"""

from __future__ import annotations

import http.client
import io
import json
import re
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode

import pytest
from flask.testing import FlaskClient
from werkzeug.serving import make_server

from api import create_app
from api.spec import load

ODDS = "/v1/odds"
JSON = "application/json"
WORKED = "footprints=green,red&brains=green&shotguns=red"  # a valid position: only the parameter added is at fault
BSAM = "mode=big-summer-action-movie"


def get(path: str) -> Callable[[FlaskClient], Any]:
    return lambda client: client.get(path)


def post(body: Any) -> Callable[[FlaskClient], Any]:
    return lambda client: client.post(ODDS, json=body)


def raw(data: bytes | str, content_type: str | None = JSON) -> Callable[[FlaskClient], Any]:
    headers = {"Content-Type": content_type} if content_type else {}
    return lambda client: client.post(ODDS, data=data, headers=headers)


def chunked(data: bytes) -> Callable[[FlaskClient], Any]:
    """A body sent `Transfer-Encoding: chunked` (no Content-Length), as a WSGI server passes it on: dechunked,
    with `wsgi.input_terminated` set (werkzeug's and gunicorn's servers set it; without it werkzeug reads no
    body at all)."""
    return lambda client: client.post(ODDS, input_stream=io.BytesIO(data),
                                      headers={"Content-Type": JSON, "Transfer-Encoding": "chunked"},
                                      environ_base={"wsgi.input_terminated": True})


# A body whose first 16 KiB are valid JSON (an impossible position: 422 if it were read): over the limit, 413.
PADDED_BUST = b'{"shotguns": ["red", "red", "red"]}' + b" " * 20_000


CATALOGUE = {
    # impossible positions (the game's rules)
    "too many dice of a colour": (get(f"{ODDS}?footprints=green,green,green&brains=green,green,green,green"),
                                  422, "brains"),
    "three shotguns already": (get(f"{ODDS}?shotguns=red,red,red"), 422, "shotguns"),
    "four footprints": (get(f"{ODDS}?footprints=green,green,green,green"), 422, "footprints"),
    "unknown mode": (get(f"{ODDS}?mode=chess"), 422, "mode"),
    "unknown die": (get(f"{ODDS}?footprints=purple"), 422, "footprints[0]"),
    "die of another mode": (get(f"{ODDS}?footprints=hunk"), 422, "footprints[0]"),
    "a Santa effect without Santa": (post({"effects": ["helmet"]}), 422, "effects[0]"),
    "Santa kept out of a game without him": (post({"kept_out": ["santa"]}), 422, "kept_out[0]"),
    "a double brain not in the brains": (post({"mode": "big-summer-action-movie", "double_brains": ["hunk"]}),
                                         422, "double_brains"),
    "bus fields without the bus": (get(f"{ODDS}?bus_brains=1"), 422, "bus_brains"),
    "riding a bus that is not there": (post({"riding": True}), 422, "riding"),
    "brains noted though the cup never ran out": (get(f"{ODDS}?banked=3"), 422, "banked"),
    "objective beyond its range": (get(f"{ODDS}?objective=reach:41"), 422, "objective"),
    "a game decision without scores": (post({"seat": 1}), 422, "scores"),
    "Hunk's brain without his double brain": (get(f"{ODDS}?{BSAM}&footprints=hottie&brains=hunk,green"
                                                  "&shotguns=red,red"), 422, "brains"),
    "Hunk's brain without his double brain (JSON)": (post({"mode": "big-summer-action-movie", "footprints": ["red"],
                                                           "brains": ["hunk", "green"]}), 422, "brains"),
    # unknown query parameters (a misspelt one would be ignored: a different question answered)
    "unknown parameter on a POST": (lambda client: client.post(f"{ODDS}?dry_run=1", json={}), 422, "dry_run"),
    # numbers
    "negative number": (get(f"{ODDS}?banked=-1"), 422, "banked"),
    "huge number": (post({"banked": 10**30}), 422, "banked"),
    "number too long to parse": (raw('{"banked": 1' + "0" * 5000 + "}"), 400, "body"),
    "fraction for an integer": (post({"banked": 1.5}), 422, "banked"),
    "boolean for an integer": (post({"banked": True}), 422, "banked"),
    "NaN": (raw('{"banked": NaN}'), 400, "body"),
    # shapes
    "null for a list": (post({"footprints": None}), 422, "footprints"),
    "huge array": (post({"brains": ["green"] * 1000}), 422, "brains"),
    "huge array in a query": (get(f"{ODDS}?footprints=" + ",".join(["green"] * 3000)), 422, "footprints"),
    "deep JSON": (raw("[" * 5000 + "]" * 5000), 400, "body"),
    "deep JSON in a field": (raw('{"footprints": ' + "[" * 900 + "]" * 900 + "}"), 422, "footprints[0]"),
    "not an object": (post([1, 2]), 422, "body"),
    "unknown field": (post({"dice": 3}), 422, "dice"),
    "duplicate JSON key": (raw('{"banked": 1, "banked": 2}'), 422, "banked"),
    "duplicate query parameter": (get(f"{ODDS}?banked=1&banked=2"), 422, "banked"),
    "control character in a value": (get(f"{ODDS}?mode=orig%00inal"), 422, "mode"),
    # the body itself
    "wrong content type": (raw("footprints=green", "application/x-www-form-urlencoded"), 415, "Content-Type"),
    "no content type": (raw("{}", None), 415, "Content-Type"),
    "JSON in UTF-16": (raw("{}".encode("utf-16"), "application/json; charset=utf-16"), 415, "Content-Type"),
    "body over the size limit": (raw(json.dumps({"brains": ["green"] * 3000})), 413, "body"),
    "chunked body over the size limit": (chunked(PADDED_BUST), 413, "body"),
    "chunked body over the limit, not JSON": (chunked(b"[" * 20_000), 413, "body"),
    "invalid UTF-8": (raw(b'{"mode": "\xff"}'), 400, "body"),
    "empty body": (raw(b""), 400, "body"),
    # ids and names in paths
    "path traversal in a job id": (get("/v1/jobs/..%2F..%2Fetc%2Fpasswd"), 404, "id"),
    "backslash traversal in a job id": (get("/v1/jobs/..%5C..%5Cwin.ini"), 404, "id"),
    "dot-dot as a job id": (get("/v1/jobs/%2e%2e"), 404, "id"),
    "path traversal in a report id": (get("/v1/reports/..%2F..%2Fvar%2Fstore"), 404, "id"),
    "path traversal in a table mode": (get("/v1/tables/..%2F..%2Fetc"), 404, "mode"),
    "path traversal in a docs asset": (get("/docs/..%2F..%2Fpyproject.toml"), 404, "asset"),
    # Lightning Dice
    "a die showing 7": (get("/v1/lightning/advice?card=kind:4&dice=1,2,3,4,5,7"), 422, "dice[5]"),
    "a card over 200 characters": (get("/v1/lightning/advice?dice=1,2,3,4,5,6&card=" + "kind:4%7C" * 40 + "kind:4"),
                                   422, "card"),
}


@pytest.fixture(scope="module")
def bad_app() -> Any:
    return create_app({"TESTING": True})


@pytest.fixture(scope="module")
def bad_client(bad_app: Any) -> FlaskClient:
    """No warm-up: not one of these requests may reach the engine."""
    return bad_app.test_client()


def test_the_catalogue_is_large() -> None:
    assert len(CATALOGUE) >= 20


@pytest.mark.parametrize("case", CATALOGUE)
def test_refused_with_a_problem_naming_the_field(bad_client: FlaskClient, case: str) -> None:
    send, status, field = CATALOGUE[case]
    answer = send(bad_client)
    assert answer.status_code == status, answer.json
    assert answer.mimetype == "application/problem+json"
    problem = answer.json
    assert problem["status"] == status and problem["title"] and problem["detail"]
    assert field in [e["field"] for e in problem.get("errors", [])], problem
    assert len(answer.data) < 4096  # a reason never echoes a huge input back


def refused(answer: Any, status: int, field: str) -> dict[str, Any]:
    """The answer is a `status` problem naming `field`; its reasons by field."""
    assert answer.status_code == status, answer.get_data(as_text=True)
    assert answer.mimetype == "application/problem+json"
    reasons = {e["field"]: e["reason"] for e in answer.json.get("errors", [])}
    assert field in reasons, answer.json
    return reasons


# -- query parameters: only the declared ones, written as openapi.yaml writes them -----------------------

# (URL, the field at fault, words of its reason). Each would be answered (200) if the parameter were ignored
# or its value read leniently.
QUERIES = {
    # misspelt or unknown parameters: the nearest declared name
    "shotgun on advice.txt": ("/v1/advice.txt?footprints=green,red&brains=green&shotgun=red,red", "shotgun",
                              "unknown parameter `shotgun`: did you mean `shotguns`?"),
    "footprint on odds": (f"{ODDS}?footprint=green,red&brains=green&shotguns=red", "footprint",
                          "did you mean `footprints`?"),
    "a capital letter": (f"{ODDS}?{WORKED}&Banked=0", "Banked", "did you mean `banked`?"),
    "PHP-style array": (f"{ODDS}?{WORKED}&shotguns[]=red", "shotguns[]", "did you mean `shotguns`?"),
    "objectve on odds": (f"{ODDS}?{WORKED}&objectve=reach:3", "objectve", "did you mean `objective`?"),
    "bank on bust.txt": (f"/v1/bust.txt?{WORKED}&bank=11", "bank", "did you mean `banked`?"),
    "objective on bust.txt (not its parameter)": (f"/v1/bust.txt?{WORKED}&objective=reach:3", "objective",
                                                  "unknown parameter"),
    "feild on odds.txt": (f"/v1/odds.txt?{WORKED}&feild=bust", "feild", "did you mean `field`?"),
    "exacts on odds.txt": (f"/v1/odds.txt?{WORKED}&field=bust&exacts=true", "exacts", "did you mean `exact`?"),
    "score on win.txt": (f"/v1/win.txt?{WORKED}&score=5,9&seat=1", "score", "did you mean `scores`?"),
    "sheet on win.txt": (f"/v1/win.txt?{WORKED}&scores=5,9&sheet=1", "sheet", "did you mean `seat`?"),
    "schoolbus on advice.txt": (f"/v1/advice.txt?{WORKED}&schoolbus=true", "schoolbus",
                                "did you mean `school_bus`?"),
    "die on lightning advice": ("/v1/lightning/advice?card=kind:4&dice=1,2,3,4,5,6&die=1", "die",
                                "did you mean `dice`?"),
    "an unencoded & in a card": ("/v1/lightning/advice?card=all-even&sum:20-30&dice=1,2,3,4,5,6", "sum:20-30",
                                 "unknown parameter"),
    "variants on a table": ("/v1/tables/original?variants=draw-then-recycle", "variants",
                            "did you mean `variant`?"),
    "modes on reports": ("/v1/reports?modes=original", "modes", "did you mean `mode`?"),
    "a misspelt cache-buster": (f"/v1/bust.txt?{WORKED}&__=1712345678", "__", "did you mean `_`?"),
    "a cache-buster other than _": (f"/v1/bust.txt?{WORKED}&nocache=1", "nocache", "unknown parameter"),
    "refresh as a cache-buster": (f"/v1/odds?{WORKED}&refresh=3", "refresh", "and `_`, the cache-buster"),
    "a parameter on an operation that takes none": ("/healthz?verbose=true", "verbose",
                                                    "takes none but `_`, the cache-buster"),
    # integers: ASCII digits only (and no minus: no integer parameter takes a negative)
    "underscore in an integer": (f"/v1/bust.txt?{WORKED}&banked=0_0", "banked", "ASCII digits"),
    "space before an integer": (f"/v1/bust.txt?{WORKED}&banked=%200", "banked", "ASCII digits"),
    "space after an integer": (f"/v1/bust.txt?{WORKED}&banked=0%20", "banked", "ASCII digits"),
    "newline after an integer": (f"/v1/bust.txt?{WORKED}&banked=0%0A", "banked", "ASCII digits"),
    "Arabic-Indic digit": (f"/v1/bust.txt?{WORKED}&banked=%D9%A0", "banked", "ASCII digits"),
    "fullwidth digit": (f"/v1/bust.txt?{WORKED}&banked=%EF%BC%90", "banked", "ASCII digits"),
    "plus sign": (f"/v1/bust.txt?{WORKED}&banked=%2B0", "banked", "ASCII digits"),
    "minus zero": (f"/v1/bust.txt?{WORKED}&banked=-0", "banked", "below the minimum 0"),
    "Arabic-Indic digit, School Bus tokens": (f"/v1/bust.txt?{WORKED}&school_bus=true&riding=true"
                                              "&bus_brains=%D9%A1", "bus_brains", "ASCII digits"),
    "Arabic-Indic digit in a list": ("/v1/lightning/advice?card=kind:4&dice=1,2,3,4,5,%D9%A3", "dice[5]",
                                     "ASCII digits"),
    "underscore in a list": (f"/v1/win.txt?{WORKED}&scores=5,1_0&seat=1", "scores[1]", "ASCII digits"),
    "Bengali digit for a player count": ("/v1/tables/original?players=%E0%A7%A8", "players", "ASCII digits"),
    # booleans: exactly true or false
    "yes for a boolean": (f"/v1/bust.txt?{WORKED}&school_bus=yes", "school_bus", "true or false"),
    "1 for a boolean": (f"/v1/odds.txt?{WORKED}&field=bust&exact=1", "exact", "true or false"),
    "capitalised boolean": (f"/v1/bust.txt?{WORKED}&exact=True", "exact", "true or false"),
    "off for a boolean": (f"/v1/advice.txt?{WORKED}&school_bus=off", "school_bus", "true or false"),
    # an empty list where the schema needs items (an empty pile is the empty pile: openapi.yaml's info)
    "empty scores": (f"/v1/advice.txt?{WORKED}&scores=", "scores", "0 items; at least 2"),
    "empty dice": ("/v1/lightning/advice?card=kind:4&dice=", "dice", "0 items; at least 6"),
}


@pytest.mark.parametrize("case", QUERIES)
def test_a_query_parameter_is_declared_and_strictly_written(bad_client: FlaskClient, case: str) -> None:
    url, field, words = QUERIES[case]
    reasons = refused(bad_client.get(url), 422, field)
    assert words in reasons[field], reasons


def _typo_cases() -> Iterator[Any]:
    """Every GET operation of openapi.yaml (each documents a 422: an unknown parameter is refused everywhere),
    its first query parameter misspelt (its last letter dropped), or the cache-buster `_` misspelt (doubled)
    where it declares none: `/healthz`, `/v1/modes`, the files, jobs and charts."""
    spec = load()[1]
    values = {"mode": "original", "asset": "swagger-ui.css", "chart": "win_heatmap",
              "id": "original--before-draw--p2--v1--20261129-030000-959562a34aaf"}  # a valid id, of no report
    for path, item in spec["paths"].items():
        if "get" not in item:
            continue
        assert "422" in item["get"]["responses"], f"GET {path} documents no 422"
        names = [p["name"] for p in (_resolved(spec, p) for p in item["get"].get("parameters", []))
                 if p["in"] == "query"]
        typo, meant = (names[0][:-1], names[0]) if names else ("__", "_")
        url = re.sub(r"\{(\w+)\}", lambda m: values.get(m[1], "x"), path)
        yield pytest.param(url, typo, meant, id=path)


def _resolved(spec: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = spec["components"]["parameters"][node["$ref"].rsplit("/", 1)[1]]
    return node


@pytest.mark.parametrize(("url", "typo", "meant"), list(_typo_cases()))
def test_every_get_operation_names_a_misspelt_parameter(bad_client: FlaskClient, url: str, typo: str,
                                                        meant: str) -> None:
    reasons = refused(bad_client.get(f"{url}?{typo}=1"), 422, typo)
    assert reasons[typo] == f"unknown parameter `{typo}`: did you mean `{meant}`?"
    reasons = refused(bad_client.get(f"{url}?nocache=1"), 422, "nocache")  # the cache-buster is `_`, not that
    assert reasons["nocache"].startswith("unknown parameter `nocache`"), reasons


LIGHTNING = "/v1/lightning/advice?card=kind:4&dice=1,1,3,4,6,6"


def test_the_cache_buster_is_taken_everywhere_with_any_value(bad_client: FlaskClient) -> None:
    plain = bad_client.get(LIGHTNING)
    for url in ("/healthz", "/v1/modes", "/openapi.yaml", "/embed/widget.js", "/v1/lightning/cards", LIGHTNING):
        for value in ("", "1712345678", "anything at all", "1_0"):
            answer = bad_client.get(f"{url}{'&' if '?' in url else '?'}{urlencode({'_': value})}")
            assert answer.status_code == 200, (url, value, answer.get_data(as_text=True)[:300])
            if url == LIGHTNING:
                assert answer.data == plain.data
    # with a position, it passes the query's check and the position is judged as without it
    reasons = refused(bad_client.get(f"{ODDS}?shotguns=red,red,red&_=42"), 422, "shotguns")
    assert "_" not in reasons


def test_every_fault_of_a_query_is_named_at_once(bad_client: FlaskClient) -> None:
    """Unknown parameters, values not written as the spec writes them and values the schema refuses: one
    problem names them all, in the spec's order of the parameters, the unknown ones last."""
    answer = bad_client.get(f"/v1/bust.txt?shotgun=red&{WORKED}&bank=3&exact=yes&mode=chess&banked=1_0")
    refused(answer, 422, "shotgun")
    assert [e["field"] for e in answer.json["errors"]] == ["banked", "mode", "exact", "shotgun", "bank"]


def test_the_response_cache_does_not_hide_a_misspelt_parameter() -> None:
    """The cache's key leaves unknown parameters out; the query is checked before it is looked up."""
    app = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 8})
    client = app.test_client()
    assert client.get(LIGHTNING).status_code == 200
    assert len(app.extensions["response_cache"]) == 1
    refused(client.get(f"{LIGHTNING}&dise=1,1,1,1,1,1"), 422, "dise")
    refused(client.get(f"{LIGHTNING}&nocache=3"), 422, "nocache")  # not the cache-buster: refused, not a hit
    assert client.get(f"{LIGHTNING}&_=3").status_code == 200  # and the cache-buster still hits
    assert len(app.extensions["response_cache"]) == 1


# -- bodies sent chunked: the size limit holds without a Content-Length -----------------------------------


@pytest.mark.parametrize(("size", "status"), [(16 * 1024, 422), (16 * 1024 + 1, 413), (1 << 20, 413)])
def test_a_chunked_body_is_read_up_to_the_limit_and_no_further(bad_client: FlaskClient, size: int,
                                                                status: int) -> None:
    body = PADDED_BUST[:35] + b" " * (size - 35)
    assert len(body) == size
    refused(chunked(body)(bad_client), status, "shotguns" if status == 422 else "body")


@pytest.fixture(scope="module")
def real_server(bad_app: Any) -> Iterator[tuple[str, int]]:
    """werkzeug's threaded server on a free loopback port (it dechunks bodies itself)."""
    server = make_server("127.0.0.1", 0, bad_app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield "127.0.0.1", server.server_port
    server.shutdown()
    thread.join()


@pytest.mark.parametrize(("body", "status", "field"), [(PADDED_BUST, 413, "body"), (PADDED_BUST[:35], 422, "shotguns")],
                         ids=["over the limit", "within it"])
def test_a_chunked_body_over_the_limit_on_a_real_server(real_server: tuple[str, int], body: bytes, status: int,
                                                        field: str) -> None:
    connection = http.client.HTTPConnection(*real_server, timeout=30)
    try:
        chunks = (body[i:i + 1000] for i in range(0, len(body), 1000))
        connection.request("POST", ODDS, body=chunks, headers={"Content-Type": JSON}, encode_chunked=True)
        answer = connection.getresponse()
        data = answer.read()
    finally:
        connection.close()
    assert answer.status == status and answer.getheader("Content-Type") == "application/problem+json", data
    assert field in [e["field"] for e in json.loads(data)["errors"]]


# -- issue 27, item 6: a refusal costs no more than an answer, and stays small --------------------------------------

# A 16 KiB body of integers gave a 2.16 MB 422 (every item listed, twice) in 0.83 s.
INTEGERS = '{"brains": [' + ",".join(["1"] * 7990) + "]}"
AMPLIFIERS = {
    "16 KiB of integers in a body": (raw(INTEGERS), "brains"),
    "3,000 unknown dice in a query": (get(f"{ODDS}?footprints=" + ",".join(["x"] * 3000)), "footprints[0]"),
    "1,000 unknown fields": (raw(json.dumps({f"f{k}": 0 for k in range(1000)})), "f0"),
    "1,000 unknown parameters": (get(f"{ODDS}?" + "&".join(f"p{k}=1" for k in range(1000))), "p0"),
}


@pytest.mark.parametrize("case", AMPLIFIERS)
def test_a_refusal_lists_the_first_faults_and_counts_the_rest(bad_client: FlaskClient, case: str) -> None:
    send, field = AMPLIFIERS[case]
    answer = send(bad_client)
    refused(answer, 422, field)
    problem = answer.json
    assert len(answer.data) < 10_000, len(answer.data)
    assert len(problem["errors"]) == 20 and problem["errors_omitted"] >= 20, problem.get("errors_omitted")
    assert len(problem["detail"]) <= 1000


def test_validation_stops_at_the_first_faults(bad_client: FlaskClient) -> None:
    """jsonschema is asked for the first 100 faults of 8,000 items and no more (80 counted beyond the 20 listed),
    where it made 16,000: refusing the body costs about what answering a valid one does."""
    answer = raw(INTEGERS)(bad_client)
    problem = answer.json
    assert problem["errors"][0] == {"field": "brains", "reason": "has 7990 items; at most 13 allowed"}
    assert problem["errors_omitted"] == 80


def test_a_memoised_parameter_is_each_requests_own(bad_app: Any) -> None:
    """api/faults.py memoises a parameter's unmarshalled value by its raw value: a request that changes its list
    does not change the next request's."""
    from flask import request

    from api.spec import SpecRequest, openapi

    with bad_app.test_request_context("/v1/odds?footprints=green,red&brains=green"):
        first = openapi().unmarshal_request(SpecRequest(request)).parameters.query
        first["footprints"].append("yellow")
        second = openapi().unmarshal_request(SpecRequest(request)).parameters.query
    assert second["footprints"] == ["green", "red"] and second["brains"] == ["green"]


def test_a_refused_value_is_refused_every_time(bad_client: FlaskClient) -> None:
    """What fails is not memoised: a value refused after valid ones of its parameter, and asked again, is refused
    again, the same way."""
    assert bad_client.get("/v1/odds?recycle=before-draw").status_code == 200
    refused = [bad_client.get("/v1/odds?recycle=sometimes") for _ in range(2)]
    assert [r.status_code for r in refused] == [422, 422]
    assert refused[0].get_json() == refused[1].get_json()
    assert [e["field"] for e in refused[0].get_json()["errors"]] == ["recycle"]
