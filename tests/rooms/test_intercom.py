"""Issue 14's intercom between two appliances (docs/rooms.md, "Another appliance's rooms"): two real `hark run`
processes, each with an ALSA file-plugin microphone and speaker and simulated devices. A (the kitchen) joins its own
server's room "Kitchen"; B (the office) is linked to A's server with `hark link` and a pairing code from A, and
joins the same room over the network (`rooms.server`), as a member of kind appliance. What A's microphone says comes
out of B's speaker and the other way round (cross-correlation with the source >= 0.9 after alignment), and neither
hears itself. The kitchen serves HTTPS as on a LAN, so the link pins its self-signed certificate.
"""

import re
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from roomclient import HARK, REPO, RATE, aligned_correlation, intact_fraction, speech
from test_appliance_member import ApplianceRun, room_named

LEAD_SECONDS = 20  # microphone noise before each sentence: time for both appliances to start, link and join
KITCHEN_SAYS = "the kettle has boiled"
OFFICE_SAYS = "dinner is ready in five minutes"


def microphone(pcm, seed):
    floor = np.random.default_rng(seed).normal(0, 20, LEAD_SECONDS * RATE)
    return np.concatenate([floor, pcm, np.zeros(30 * RATE)]).astype(np.int16)


def test_two_appliances_intercom_across_servers():
    kitchen_pcm, office_pcm = speech(KITCHEN_SAYS, seed=5), speech(OFFICE_SAYS, seed=6)
    # No echo cancellation: these file devices have no acoustic path from speaker to microphone, so the canceller
    # has no echo to take out and its residual suppressor only reshapes the voice, by how much depending on what
    # was played just before (office to kitchen 0.89-0.93 with it on, 0.992 off). The canceller is measured where
    # there is an echo: bench/aec.py and HarkRoomsTests; the one-appliance test keeps it on.
    # The kitchen serves the LAN as an appliance on a network would: HTTPS with its self-signed certificate, which the
    # office pins when it links.
    kitchen = ApplianceRun(microphone(kitchen_pcm, 9), rooms={"name": "Kitchen Hark", "join": "Kitchen", "echo_cancellation": False},
                           server={"lan": True})
    office = None
    try:
        started = time.monotonic()
        office_data = tempfile.mkdtemp(prefix="hark-intercom-office.")
        # A wrong code is refused with the server's reason, and nothing is written.
        refused = subprocess.run([str(HARK), "link", kitchen.base, "000000", "--data", office_data],
                                 capture_output=True, text=True, timeout=60, cwd=REPO)
        assert refused.returncode != 0 and "refused the code" in refused.stderr, refused.stderr
        linked = subprocess.run([str(HARK), "link", kitchen.base, kitchen.pairing_code(), "--data", office_data],
                                capture_output=True, text=True, timeout=60, cwd=REPO)
        assert linked.returncode == 0, linked.stdout + linked.stderr
        assert kitchen.base.startswith("https://"), kitchen.base
        printed = re.search(r"HTTPS certificate SHA-256 ([0-9A-F:]{95})", kitchen.log_path.read_text())
        assert printed and printed.group(1) in linked.stdout, f"the link's fingerprint is not the kitchen's: {linked.stdout}"
        link_file = Path(office_data) / "rooms-link.json"
        assert link_file.stat().st_mode & 0o777 == 0o600
        office = ApplianceRun(microphone(office_pcm, 10), data=office_data,
                              rooms={"name": "Office Hark", "join": "Kitchen", "server": kitchen.base, "echo_cancellation": False})

        # The office is in the kitchen's room, shown as an appliance.
        ada = kitchen.person(kitchen.device_token(), "Ada")
        room = room_named(ada, "Kitchen")
        deadline = time.monotonic() + 20
        office_member = None
        while time.monotonic() < deadline and office_member is None:
            status, members = ada.call("GET", f"/rooms/{room}/members")
            assert status == 200, members
            office_member = next((m for m in members if m["name"] == "Office Hark" and m["state"] == "joined"), None)
            time.sleep(0.2)
        assert office_member, f"the office never joined the kitchen's room; its log:\n{office.log_path.read_text()}"
        assert office_member["kind"] == "appliance", office_member
        joined_at = time.monotonic() - started
        assert joined_at < LEAD_SECONDS - 3, f"the office joined {joined_at:.1f} s in, too late for the kitchen's sentence"

        # Both sentences said (each LEAD_SECONDS into its own run) and heard out.
        time.sleep(LEAD_SECONDS + max(len(kitchen_pcm), len(office_pcm)) / RATE + 6 - (time.monotonic() - started) + 3)
        office_log = office.log_path.read_text()
        assert f"in room Kitchen on {kitchen.base} as Office Hark" in office_log, office_log
        office_heard = office.speaker_pcm()
        kitchen_heard = kitchen.speaker_pcm()
    finally:
        stopped = []
        for name, run in (("office", office), ("kitchen", kitchen)):
            if run is not None:
                log = run.log_path.read_text()  # stop() removes the data directory the log is in
                stopped.append((name, run.stop(), log))
        for name, code, log in stopped:
            assert code == 0, f"the {name}'s hark run did not stop cleanly; its log:\n{log}"

    to_office, _, _ = intact_fraction(kitchen_pcm, office_heard)
    to_kitchen, _, _ = intact_fraction(office_pcm, kitchen_heard)
    office_own, _ = aligned_correlation(office_pcm, office_heard)
    kitchen_own, _ = aligned_correlation(kitchen_pcm, kitchen_heard)
    print(f"kitchen → office {to_office:.0%} intact, office → kitchen {to_kitchen:.0%}, own sentences {kitchen_own:.3f} / {office_own:.3f}")
    assert to_office >= 0.9, f"the office's speaker played {to_office:.0%} of the kitchen's sentence intact"
    assert to_kitchen >= 0.9, f"the kitchen's speaker played {to_kitchen:.0%} of the office's sentence intact"
    assert abs(office_own) < 0.3 and abs(kitchen_own) < 0.3, "an appliance heard its own sentence back"
