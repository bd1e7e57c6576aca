"""docs/openapi.json: a valid OpenAPI 3.0 document, complete against docs/server-api.md, and true of the server.

The last part sends a few harmless requests (nothing that changes the light for good) and checks each answer
against the document's schemas, so a server and its description cannot drift apart unnoticed.
"""

import json
import re
import ssl
import urllib.error
import urllib.request

import pytest
from openapi_schema_validator import OAS30Validator, oas30_format_checker
from openapi_spec_validator import validate

from conftest import REPO

DOCUMENT = json.loads((REPO / "docs" / "openapi.json").read_text())


def contract_endpoints():
    """(method, path) of every row of the endpoint table in docs/server-api.md."""
    rows = re.findall(r"^\| `(GET|POST|PUT|DELETE|PATCH) (/[^`?\s]*)", (REPO / "docs" / "server-api.md").read_text(), re.MULTILINE)
    return sorted(set(rows))


def test_document_is_valid_openapi_3_0():
    validate(DOCUMENT)
    assert DOCUMENT["openapi"].startswith("3.0.")


@pytest.mark.parametrize("method,path", contract_endpoints())
def test_every_contract_endpoint_is_described(method, path):
    assert path in DOCUMENT["paths"], f"{path} is in docs/server-api.md but not in docs/openapi.json"
    assert method.lower() in DOCUMENT["paths"][path], f"{method} {path} is not described"


def test_nothing_is_described_that_the_contract_lacks():
    described = {(method.upper(), path) for path, item in DOCUMENT["paths"].items() for method in item if method in ("get", "post", "put", "delete", "patch")}
    extra = described - set(contract_endpoints()) - {("GET", "/web/{file}")}  # the static files are prose in the contract
    assert not extra, f"described but not in docs/server-api.md: {sorted(extra)}"


# --- the live server ----------------------------------------------------------------------------------------

def call(base_url, method, path, body=None, token=None):
    """(status, decoded JSON body) of one request."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base_url + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30, context=ssl._create_unverified_context()) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def conforms(value, schema_name):
    schema = {"$ref": f"#/components/schemas/{schema_name}", "components": DOCUMENT["components"]}
    errors = sorted(OAS30Validator(schema, format_checker=oas30_format_checker).iter_errors(value), key=lambda error: list(error.path))
    assert not errors, f"{schema_name}: " + "; ".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


def test_server_answers_as_described(base_url, pairing_code):
    status, served = call(base_url, "GET", "/api/openapi.json")
    assert status == 200 and served["openapi"].startswith("3.0.")
    assert set(served["paths"]) == set(DOCUMENT["paths"]), "the server serves another description than docs/openapi.json"

    status, refused = call(base_url, "GET", "/api/devices")
    assert status == 401
    conforms(refused, "Error")
    assert refused["error"]["code"] == "unauthorized"

    status, token = call(base_url, "POST", "/api/pair", {"code": pairing_code()})
    assert status == 200, token
    conforms(token, "Token")
    token = token["token"]

    status, reply = call(base_url, "POST", "/v1/workspaces/default/message?version=2021-06-14", {"input": {"text": "hello"}}, token)
    assert status == 200, reply
    conforms(reply, "MessageResponse")
    status, follow = call(base_url, "POST", "/v1/workspaces/default/message?version=2021-06-14",
                          {"input": {"text": "is the light on"}, "context": reply["context"]}, token)
    assert status == 200, follow
    assert follow["context"]["conversation_id"] == reply["context"]["conversation_id"], "the context was not carried"

    status, missing = call(base_url, "POST", "/v1/workspaces/no-such-workspace/message?version=2021-06-14", {"input": {"text": "hello"}}, token)
    assert status == 404
    conforms(missing, "Error")

    status, devices = call(base_url, "GET", "/api/devices", token=token)
    assert status == 200
    conforms(devices, "DeviceList")
    light = next(device for device in devices["devices"] if device["name"] == "light")
    for command in ("toggle", "toggle"):  # twice: the light ends as it was
        status, switched = call(base_url, "POST", "/api/devices/light", {"command": command}, token)
        assert status == 200, switched
        conforms(switched, "DeviceState")
    assert switched["state"] == light["state"]

    status, events = call(base_url, "GET", "/api/events?since=0&limit=50", token=token)
    assert status == 200
    conforms(events, "EventList")
    assert events["events"], "no events after two messages and two switches"
    ids = [event["id"] for event in events["events"]]
    assert ids == sorted(ids) and len(ids) <= 50

    status, pictures = call(base_url, "GET", "/api/pictures", token=token)
    assert status == 200
    conforms(pictures, "PictureList")


def test_rooms_answer_as_described(base_url, pairing_code):
    """The drop-in rooms app (`/auth`, `/rooms`): each answer, and each kind of refusal, against its schema."""
    status, device = call(base_url, "POST", "/api/pair", {"code": pairing_code()})
    assert status == 200, device
    device = device["token"]
    status, refused = call(base_url, "GET", "/rooms", token=device)
    if status == 404:
        pytest.skip("this server has no rooms app (the mock server)")
    assert status == 403, refused
    conforms(refused, "Error")

    status, bad = call(base_url, "POST", "/auth", {"name": ""}, device)
    assert status == 400 and "name" in bad["error"]["message"]
    conforms(bad, "Error")
    status, person = call(base_url, "POST", "/auth", {"name": "Ada"}, device)
    assert status == 200, person
    conforms(person, "PersonToken")
    token = person["jwt"]

    status, created = call(base_url, "POST", "/rooms", {"display_name": "Kitchen chat"}, token)
    assert status == 201, created
    conforms(created, "CreatedRoom")
    room = created["id"]
    status, rooms = call(base_url, "GET", "/rooms", token=token)
    assert status == 200 and room in [r["id"] for r in rooms]
    conforms(rooms, "RoomList")
    status, outsider = call(base_url, "POST", f"/rooms/{room}/appliance", {"action": "join"}, token)
    assert status == 403, outsider  # only joined members bring the appliance in
    conforms(outsider, "Error")
    for action in ("join", "leave"):
        status, member = call(base_url, "POST", f"/rooms/{room}/{action}", token=token)
        assert status == 200, member
        conforms(member, "Member")
    status, member = call(base_url, "POST", f"/rooms/{room}/join", token=token)
    assert status == 200, member
    status, bad = call(base_url, "POST", f"/rooms/{room}/appliance", {"action": "dance"}, token)
    assert status == 400 and "action" in bad["error"]["message"], bad
    conforms(bad, "Error")
    # `hark serve` has no appliance to bring in (409); `hark run` has, and it joins and leaves.
    status, moved = call(base_url, "POST", f"/rooms/{room}/appliance", {"action": "join"}, token)
    if status == 409:
        conforms(moved, "Error")
    else:
        assert status == 200 and moved["status"] == "joined", moved
        conforms(moved, "ApplianceMove")
        status, moved = call(base_url, "POST", f"/rooms/{room}/appliance", {"action": "leave"}, token)
        assert status == 200 and moved["status"] == "left", moved
        conforms(moved, "ApplianceMove")
    status, member = call(base_url, "POST", f"/rooms/{room}/leave", token=token)
    assert status == 200, member
    status, other = call(base_url, "POST", "/rooms", {"display_name": "Never joined"}, token)
    assert status == 201, other
    status, conflict = call(base_url, "POST", f"/rooms/{other['id']}/leave", token=token)
    assert status == 409
    conforms(conflict, "Error")
    status, members = call(base_url, "GET", f"/rooms/{room}/members", token=token)
    assert status == 200 and members[0]["name"] == "Ada"
    conforms(members, "MemberList")
    status, deleted = call(base_url, "DELETE", f"/rooms/{room}", token=token)
    assert status == 200
    conforms(deleted, "RoomDeleted")
    status, gone = call(base_url, "POST", f"/rooms/{room}/join", token=token)
    assert status == 410
    conforms(gone, "Error")
    status, missing = call(base_url, "GET", "/rooms/0000000000000000/members", token=token)
    assert status == 404
    conforms(missing, "Error")
