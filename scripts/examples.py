"""Write the answers openapi.yaml documents for POST /v1/odds's request examples, as the server answers them.

    ZOMBIE_ODDS_SOLUTIONS=DIR PYTHONPATH=. .venv/bin/python scripts/examples.py NAME [NAME ...]

Each NAME is a request example of POST /v1/odds whose answer is documented under the same name in its 200
response; the documented answer is replaced in place (the rest of the file is left as it is). The stored
solutions must be built (`zombie-odds solutions build`); tests/api/test_odds.py checks that every
documented answer is the answer.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from api import create_app, spec

SPEC = Path(__file__).resolve().parent.parent / "openapi.yaml"
INDENT = " " * 16  # a response example's name, under .../application/json/examples


def block(name: str, answer: dict, summary: str) -> list[str]:
    lines = [f"{INDENT}{name}:", f"{INDENT}  summary: {json.dumps(summary)}", f"{INDENT}  value:"]
    for key, value in answer.items():
        if isinstance(value, dict) and key != "position":
            lines.append(f"{INDENT}    {key}:")
            for k, v in value.items():
                if isinstance(v, list) and v and isinstance(v[0], dict):  # a list of objects: one a line
                    lines += [f"{INDENT}      {k}:"] + [f"{INDENT}        - {json.dumps(o)}" for o in v]
                else:
                    lines.append(f"{INDENT}      {k}: {json.dumps(v)}")
        else:
            lines.append(f"{INDENT}    {key}: {json.dumps(value)}")
    return lines


def main(names: list[str]) -> None:
    operation = spec.load()[1]["paths"]["/v1/odds"]["post"]
    requests = operation["requestBody"]["content"]["application/json"]["examples"]
    documented = operation["responses"]["200"]["content"]["application/json"]["examples"]
    client = create_app({"TESTING": True}).test_client()
    lines = SPEC.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip() == "'200':" and i > next(
        k for k, line in enumerate(lines) if "operationId: postOdds" in line))
    for name in names:
        response = client.post("/v1/odds", json=requests[name]["value"])
        if response.status_code != 200:
            sys.exit(f"{name}: {response.status_code} {response.get_data(as_text=True)}")
        at = next(i for i in range(start, len(lines)) if lines[i] == f"{INDENT}{name}:")
        end = next(i for i in range(at + 1, len(lines)) if len(lines[i]) - len(lines[i].lstrip()) <= len(INDENT))
        lines[at:end] = block(name, response.get_json(), documented[name]["summary"])
    SPEC.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
