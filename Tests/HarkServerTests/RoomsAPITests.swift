import Foundation
import HarkAppliance
import HarkCore
import HarkHTTP
import HarkHTTPTestSupport
import HarkRooms
import Testing
@testable import HarkServer

/// The drop-in app's API over real sockets against real SQLite files: names, rooms, membership, deletion,
/// idle closing, persistence across a restart, and member events reaching only the room's members.
@Suite("Rooms API")
struct RoomsAPITests {
    @Test("a paired device picks a name; a person creates, lists, joins, sees the members of, leaves and deletes a room")
    func lifecycle() throws {
        let bench = try RoomsBench()
        try bench.withRoomsServer { server, rooms in
            let ada = try RoomsClient(port: server.port, token: try bench.deviceToken())
            let named = try ada.call("POST", "/auth", json: #"{"name": "  Ada  "}"#)
            #expect(named.status == 200)
            #expect(named.json?["name"]?.stringValue == "Ada")
            let jwt = try #require(named.json?["jwt"]?.stringValue)
            let claims = try bench.auth.verify(token: jwt)
            let adaID = try #require(named.json?["id"]?.stringValue)
            #expect(claims.subject == "person:\(adaID)")
            ada.token = jwt

            let id = try ada.create("Kitchen chat")
            let listed = try ada.call("GET", "/rooms")
            #expect(listed.status == 200)
            #expect(listed.json == [["id": .string(id), "display_name": "Kitchen chat"]])

            let joined = try ada.call("POST", "/rooms/\(id)/join")
            #expect(joined.status == 200)
            #expect(joined.json?["state"]?.stringValue == "joined")
            #expect(rooms.isJoined(adaID, in: id))

            let bob = try RoomsClient(port: server.port, token: try bench.deviceToken())
            let bobID = try bob.pickName("Bob")
            #expect(try bob.call("POST", "/rooms/\(id)/join").status == 200)
            #expect(rooms.joinedMembers(of: id) == [adaID, bobID].sorted())
            #expect(try bob.call("POST", "/rooms/\(id)/leave").json?["state"]?.stringValue == "left")
            let again = try bob.call("POST", "/rooms/\(id)/leave")
            #expect(again.status == 200 && again.json?["state"]?.stringValue == "left", "leaving again is no change")

            let members = try ada.call("GET", "/rooms/\(id)/members")
            #expect(members.status == 200)
            let list = try #require(members.json?.arrayValue)
            let byName = Dictionary(uniqueKeysWithValues: list.map { ($0["name"]?.stringValue ?? "", $0) })
            #expect(byName["Ada"] == ["id": .string(adaID), "name": "Ada", "kind": "person", "state": "joined", "speaking": false])
            #expect(byName["Bob"]?["state"]?.stringValue == "left")
            #expect(list.count == 2)

            let refused = try bob.call("DELETE", "/rooms/\(id)")
            #expect(refused.status == 403)
            #expect(refused.errorCode == "forbidden")
            #expect(refused.json?["error"]?["message"]?.stringValue?.contains("Ada") == true)

            let deleted = try ada.call("DELETE", "/rooms/\(id)")
            #expect(deleted.status == 200)
            #expect(try ada.call("DELETE", "/rooms/\(id)").status == 200, "deleting again is no change")
            #expect(try bob.call("DELETE", "/rooms/\(id)").status == 403)
            #expect(try ada.call("GET", "/rooms").json == [])
            let gone = try bob.call("POST", "/rooms/\(id)/join")
            #expect(gone.status == 410)
            #expect(gone.errorCode == "gone")
            #expect(gone.json?["error"]?["message"]?.stringValue?.contains("deleted") == true)
            #expect(!rooms.isJoined(adaID, in: id))
        }
    }

    @Test("a person's token expires with, and is revoked with, the device token it was picked on")
    func personTokenFollowsDevice() throws {
        let bench = try RoomsBench()
        try bench.withRoomsServer { server, _ in
            let device = try bench.deviceToken()
            let deviceClaims = try bench.auth.verify(token: device)
            let ada = try RoomsClient(port: server.port, token: device)
            try ada.pickName("Ada")
            let claims = try bench.auth.verify(token: ada.token)
            #expect(claims.expires <= deviceClaims.expires)
            #expect(claims.id.hasPrefix(deviceClaims.id + "."))
            // Renaming keeps the person and the tie to the device.
            let renamed = try ada.call("POST", "/auth", json: #"{"name": "Ada L."}"#)
            #expect(renamed.json?["name"]?.stringValue == "Ada L.")
            let renamedToken = try #require(renamed.json?["jwt"]?.stringValue)
            #expect(try bench.auth.verify(token: renamedToken).id.hasPrefix(deviceClaims.id + "."))
            #expect(try ada.call("GET", "/rooms").status == 200)

            // The owner revokes the lost phone's token: the names picked on it stop working too.
            let revoke = try RoomsClient(port: server.port, token: try bench.deviceToken())
            #expect(try revoke.call("POST", "/api/tokens/revoke", json: #"{"id": "\#(deviceClaims.id)"}"#).status == 200)
            let refused = try ada.call("GET", "/rooms")
            #expect(refused.status == 401)
            #expect(try ada.call("GET", "/rooms", token: renamedToken).status == 401)

            // A person's own token can be revoked by its (dotted) id alone.
            let bob = try RoomsClient(port: server.port, token: try bench.deviceToken())
            try bob.pickName("Bob")
            let bobID = try bench.auth.verify(token: bob.token).id
            #expect(try revoke.call("POST", "/api/tokens/revoke", json: #"{"id": "\#(bobID)"}"#).status == 200)
            #expect(try bob.call("GET", "/rooms").status == 401)
        }
    }

    @Test("bad input gets a clear JSON error naming the field, and the server keeps answering")
    func badInput() throws {
        let bench = try RoomsBench()
        try bench.withRoomsServer { server, _ in
            let device = try bench.deviceToken()
            let client = try RoomsClient(port: server.port, token: device)
            let long = String(repeating: "x", count: Rooms.maximumNameLength + 1)
            for (body, field) in [("{}", "name"), (#"{"name": ""}"#, "name"), (#"{"name": "   "}"#, "name"), (#"{"name": 7}"#, "name"),
                                  (#"{"name": "\#(long)"}"#, "name"), (#"{"name": "a\u0007b"}"#, "name")] {
                let r = try client.call("POST", "/auth", json: body)
                #expect(r.status == 400, "\(body)")
                #expect(r.errorCode == "bad_request")
                #expect(r.json?["error"]?["message"]?.stringValue?.contains(field) == true, "\(body): \(r.text)")
            }
            #expect(try client.call("POST", "/auth", json: "[1, 2").status == 400)

            // A device that has not picked a name may not use rooms.
            let unnamed = try client.call("GET", "/rooms")
            #expect(unnamed.status == 403)
            #expect(unnamed.json?["error"]?["message"]?.stringValue?.contains("POST /auth") == true)

            try client.pickName("Cy")
            let tooLong = String(repeating: "é", count: Rooms.maximumDisplayNameLength + 1)
            for body in ["{}", #"{"display_name": ""}"#, #"{"display_name": null}"#, #"{"display_name": "\#(tooLong)"}"#, #"{"name": "x"}"#] {
                let r = try client.call("POST", "/rooms", json: body)
                #expect(r.status == 400, "\(body)")
                #expect(r.json?["error"]?["message"]?.stringValue?.contains("display_name") == true, "\(body): \(r.text)")
            }
            let plain = try client.http.request("POST", "/rooms", headers: ["Authorization": "Bearer \(client.token)", "Content-Type": "text/plain"],
                                                body: Array(#"{"display_name": "x"}"#.utf8))
            #expect(plain.status == 415)

            for (method, path) in [("POST", "/rooms/0000000000000000/join"), ("POST", "/rooms/nope/leave"),
                                   ("GET", "/rooms/nope/members"), ("DELETE", "/rooms/nope")] {
                let r = try client.call(method, path)
                #expect(r.status == 404, "\(method) \(path)")
                #expect(r.errorCode == "not_found")
                #expect(r.json?["error"]?["message"]?.stringValue?.contains("no room") == true)
            }
            let id = try client.create("Den")
            let notJoined = try client.call("POST", "/rooms/\(id)/leave")
            #expect(notJoined.status == 409)
            #expect(notJoined.errorCode == "conflict")
            #expect(try client.call("PUT", "/rooms/\(id)").status == 405)

            // No token, a bad one: 401 before anything else.
            for (method, path) in [("POST", "/auth"), ("GET", "/rooms"), ("POST", "/rooms"), ("POST", "/rooms/\(id)/join"), ("DELETE", "/rooms/\(id)")] {
                let none = try client.call(method, path, json: "{}", token: .some(nil))
                #expect(none.status == 401, "\(method) \(path)")
                #expect(none.errorCode == "unauthorized")
                #expect(try client.call(method, path, json: "{}", token: "not.a.token").status == 401)
            }
            // Still serving.
            #expect(try client.call("GET", "/rooms").status == 200)
        }
    }

    @Test("rooms, names and memberships survive a restart of the server")
    func persistence() throws {
        let bench = try RoomsBench()
        let device = try bench.deviceToken()
        let (token, person, id) = try bench.withRoomsServer { server, _ in
            let client = try RoomsClient(port: server.port, token: device)
            let person = try client.pickName("Ada")
            let id = try client.create("Attic")
            _ = try client.create("Cellar")
            #expect(try client.call("POST", "/rooms/\(id)/join").status == 200)
            return (client.token, person, id)
        }
        try bench.withRoomsServer { server, rooms in
            let client = try RoomsClient(port: server.port, token: token)
            let names = try #require(client.call("GET", "/rooms").json?.arrayValue).compactMap { $0["display_name"]?.stringValue }
            #expect(names == ["Attic", "Cellar"])
            #expect(try client.call("GET", "/rooms/\(id)/members").json == [["id": .string(person), "name": "Ada", "kind": "person", "state": "joined", "speaking": false]])
            #expect(rooms.isJoined(person, in: id))
        }
    }

    @Test("a room nobody has joined for the idle time closes; one with a member stays open")
    func idleClose() throws {
        let bench = try RoomsBench(idleClose: .seconds(60))
        try bench.withRoomsServer { server, _ in
            let client = try RoomsClient(port: server.port, token: try bench.deviceToken())
            try client.pickName("Ada")
            let empty = try client.create("Empty")
            let busy = try client.create("Busy")
            let left = try client.create("Left")
            #expect(try client.call("POST", "/rooms/\(busy)/join").status == 200)
            #expect(try client.call("POST", "/rooms/\(left)/join").status == 200)
            bench.clock.advance(59)
            #expect(try client.call("POST", "/rooms/\(left)/leave").status == 200)
            #expect(try client.call("GET", "/rooms").json?.arrayValue?.count == 3)
            bench.clock.advance(2)
            // "Empty" has been idle 61 s; "Left" only 2 s since its last member left; "Busy" has a member.
            #expect(try client.call("GET", "/rooms").json?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted() == [busy, left].sorted())
            let closed = try client.call("POST", "/rooms/\(empty)/join")
            #expect(closed.status == 410)
            #expect(closed.json?["error"]?["message"]?.stringValue?.contains("closed") == true)
            bench.clock.advance(60)
            #expect(try client.call("GET", "/rooms").json?.arrayValue?.compactMap { $0["id"]?.stringValue } == [busy])
        }
        // Closed stays closed after a restart.
        let rooms = try bench.openRooms()
        #expect(try rooms.openRooms().count == 1)
    }

    @Test("member events reach the room's joined members only; a non-member's events socket receives nothing")
    func memberEvents() throws {
        let bench = try RoomsBench()
        try bench.withRoomsServer { server, rooms in
            let ada = try RoomsClient(port: server.port, token: try bench.deviceToken())
            let bob = try RoomsClient(port: server.port, token: try bench.deviceToken())
            let cy = try RoomsClient(port: server.port, token: try bench.deviceToken())
            let adaID = try ada.pickName("Ada")
            let bobID = try bob.pickName("Bob")
            try cy.pickName("Cy")
            let device = try bench.deviceToken()
            let adaEvents = try EventsListener(port: server.port, token: ada.token, store: bench.store)
            let bobEvents = try EventsListener(port: server.port, token: bob.token, store: bench.store)
            let cyEvents = try EventsListener(port: server.port, token: cy.token, store: bench.store)
            let deviceEvents = try EventsListener(port: server.port, token: device, store: bench.store)
            let everyone = [adaEvents, bobEvents, cyEvents, deviceEvents]
            // Once the marker arrives, every socket is subscribed.
            try bench.mark("ready")
            for listener in everyone { #expect(try listener.roomEvents(until: "ready").isEmpty) }

            let id = try ada.create("Porch")
            let other = try cy.create("Elsewhere")
            #expect(try ada.call("POST", "/rooms/\(id)/join").status == 200)
            #expect(try bob.call("POST", "/rooms/\(id)/join").status == 200)
            #expect(try cy.call("POST", "/rooms/\(other)/join").status == 200)
            try bench.mark("joined")
            let adaSaw = try adaEvents.roomEvents(until: "joined")
            #expect(adaSaw.map { $0["kind"]?.stringValue } == ["member:joined", "member:joined"])
            #expect(adaSaw.map { $0["member"]?["name"]?.stringValue } == ["Ada", "Bob"])
            #expect(adaSaw.allSatisfy { $0["room"]?.stringValue == id })
            #expect(try bobEvents.roomEvents(until: "joined").map { $0["member"]?["id"]?.stringValue } == [bobID])
            // Cy is in another room: only Cy's own join there.
            #expect(try cyEvents.roomEvents(until: "joined").map { $0["room"]?.stringValue } == [other])
            #expect(try deviceEvents.roomEvents(until: "joined").isEmpty)

            // What the audio path reports goes to the room's members, the speaker included.
            rooms.reportAudio(room: id, member: bobID, level: 0.5, speaking: true)
            try bench.mark("spoke")
            for listener in [adaEvents, bobEvents] {
                let seen = try listener.roomEvents(until: "spoke")
                #expect(seen.map { $0["kind"]?.stringValue } == ["audio:speaking:on", "audio:level"])
                #expect(seen.map { $0["member"]?.stringValue } == [bobID, bobID])
                #expect(seen.last?["level"]?.doubleValue == 0.5)
            }
            let speaking = try ada.call("GET", "/rooms/\(id)/members").json?.arrayValue?.first { $0["id"]?.stringValue == bobID }
            #expect(speaking?["speaking"]?.boolValue == true)
            for listener in [cyEvents, deviceEvents] { #expect(try listener.roomEvents(until: "spoke").isEmpty) }

            let bobLeft = try bob.call("POST", "/rooms/\(id)/leave")
            #expect(bobLeft.status == 200, "\(bobLeft.text)")
            rooms.reportAudio(room: id, member: bobID, level: 0.9, speaking: true)
            try bench.mark("left")
            for listener in [adaEvents, bobEvents] {
                let seen = try listener.roomEvents(until: "left")
                #expect(seen.map { $0["kind"]?.stringValue } == ["member:left"], "a member who left is no longer heard")
                #expect(seen.first?["member"]?["state"]?.stringValue == "left")
            }
            // Bob has left: Ada's own audio no longer reaches him.
            rooms.reportAudio(room: id, member: adaID, level: 0.1, speaking: false)
            try bench.mark("after")
            #expect(try adaEvents.roomEvents(until: "after").map { $0["kind"]?.stringValue } == ["audio:level"])
            #expect(try bobEvents.roomEvents(until: "after").isEmpty)

            #expect(try ada.call("DELETE", "/rooms/\(id)").status == 200)
            try bench.mark("deleted")
            #expect(try adaEvents.roomEvents(until: "deleted").map { $0["kind"]?.stringValue } == ["room:closed"])
            for listener in [bobEvents, cyEvents, deviceEvents] {
                let seen = try listener.roomEvents(until: "deleted")
                #expect(seen.isEmpty, "\(seen.map { $0.serialized() })")
            }
        }
    }
}
