"""api/cache.py: whole GET answers kept in-process: the same bytes for the same route and declared parameters (the
cache-buster `_` ignored), an LRU of `RESPONSE_CACHE_SIZE` answers, off under TESTING, and never an error, a POST,
an `@uncached` view nor a page outside /v1/.
"""

from __future__ import annotations

from api import create_app


def test_response_cache_serves_the_same_bytes_and_ignores_cache_busters():
    from api import create_app

    app = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 8, "VALIDATE_RESPONSES": True})
    client = app.test_client()
    url = "/v1/odds?footprints=green,red&brains=green&shotguns=red"
    first = client.get(url)
    again = client.get(url + "&_=12345")
    assert first.status_code == again.status_code == 200
    assert first.data == again.data and again.headers["Access-Control-Allow-Origin"] == "*"
    assert len(app.extensions["response_cache"]) == 1
    assert client.get(url + "&nocache=1").status_code == 422  # only `_` is a cache-buster: no hit for another
    assert client.get("/v1/odds?shotguns=red,red,red").status_code == 422  # errors are not cached
    assert len(app.extensions["response_cache"]) == 1
    other = client.get("/v1/odds?footprints=green,red&brains=green&shotguns=red&objective=reach:2")
    assert other.data != first.data and len(app.extensions["response_cache"]) == 2


def test_off_under_testing_and_512_answers_in_production(warm: None) -> None:
    assert create_app({"TESTING": True}).config["RESPONSE_CACHE_SIZE"] == 0
    assert create_app().config["RESPONSE_CACHE_SIZE"] == 512
    app = create_app({"TESTING": True})
    app.test_client().get("/v1/modes")
    assert len(app.extensions["response_cache"]) == 0


def test_the_least_recently_asked_answer_goes_first(warm: None) -> None:
    app = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 2})
    client = app.test_client()
    a, b, c = (f"/v1/odds.txt?field=bust&footprints=green,red&shotguns={s}" for s in ("red", "yellow", "green"))

    def kept() -> list[str]:
        return [dict(key[1])["shotguns"][0] for key in app.extensions["response_cache"]]

    for url in (a, b, a, c):
        assert client.get(url).status_code == 200
    assert kept() == ["red", "green"]  # b was the least recently asked
    served = client.get(a + "&_=9")
    assert served.status_code == 200 and kept() == ["green", "red"]


def test_posts_uncached_views_and_pages_outside_v1_are_never_kept(warm: None) -> None:
    cached = create_app({"TESTING": True, "RESPONSE_CACHE_SIZE": 64})
    client = cached.test_client()
    assert client.post("/v1/odds", json={"footprints": ["green", "red"], "shotguns": ["red"]}).status_code == 200
    for path in ("/v1/solutions", "/healthz", "/openapi.yaml", "/"):
        assert client.get(path).status_code == 200, path
    assert len(cached.extensions["response_cache"]) == 0
    assert getattr(cached.view_functions["solutions.get_solutions"], "uncached", False)
    assert not getattr(cached.view_functions["modes.get_modes"], "uncached", False)
