#!/usr/bin/env python3
"""A HEC event collector for tests/mix_sources.rs: it takes concatenated JSON envelopes on
POST /services/collector/event, answers 200 {"text":"Success","code":0}, and counts what a mix
of sources sent: events per sourcetype, requests carrying one sourcetype or several, and the
e-mail-like identities the events of the first DECODED requests of each sourcetype name, by sourcetype (to see
entities shared across packs). Those requests are held raw and decoded when /stats is asked,
so no answer waits on Python decoding JSON.

Usage: mix_collector.py PORT_FILE
GET /stats returns {"events": {st: n}, "requests": n, "mixed_requests": n,
"identities": {st: [sorted identities]}, "hosts": {Host header: requests}, "bad": [problems]}. Listens on 127.0.0.1 only,
writes its port to PORT_FILE, and exits by itself after 90 s.
"""

import json
import os
import re
import sys
import threading
from http.server import ThreadingHTTPServer

from hec_common import JsonHandler, envelopes

EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
LOCK = threading.Lock()
EVENTS, IDENTITIES, BAD, HOSTS = {}, {}, [], {}
SOURCETYPE = re.compile(rb'"sourcetype":"([^"]*)"')
DECODED = 8  # requests decoded whole per first sourcetype (the rest only counted)
HELD_BY_KIND = {}  # first sourcetype: requests held
REQUESTS = [0, 0]  # requests, requests with more than one sourcetype
HELD = []  # (body, sourcetypes counted) of the requests to decode, not yet decoded


def decode_whole(body, kinds):
    """Checks one request's envelopes against the sourcetypes counted and collects the
    identities its events name."""
    try:
        evs = envelopes(body.decode())
    except Exception as e:
        with LOCK:
            BAD.append(f"not JSON envelopes: {e}")
        return
    with LOCK:
        if [ev.get("sourcetype") for ev in evs] != kinds:
            BAD.append("the envelopes' sourcetypes are not what was counted")
        for ev in evs:
            if "event" not in ev:
                BAD.append(f"envelope without event: {str(ev)[:100]}")
                continue
            e = ev["event"]
            text = e if isinstance(e, str) else json.dumps(e)
            IDENTITIES.setdefault(ev["sourcetype"], set()).update(
                m.lower() for m in EMAIL.findall(text))


class Handler(JsonHandler):

    def do_GET(self):
        if self.path != "/stats":
            return self.reply(404, {"text": "not found"})
        with LOCK:
            held, HELD[:] = list(HELD), []
        for body, kinds in held:
            decode_whole(body, kinds)
        with LOCK:
            self.reply(200, {
                "events": EVENTS,
                "requests": REQUESTS[0],
                "mixed_requests": REQUESTS[1],
                "identities": {k: sorted(v) for k, v in IDENTITIES.items()},
                "hosts": HOSTS,
                "bad": BAD[:20],
            })

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != "/services/collector/event":
            with LOCK:
                BAD.append(f"path {self.path}")
            return self.reply(404, {"text": "not found", "code": 404})
        # Every envelope's sourcetype, counted at C speed; the first requests are also held
        # to be decoded whole, checked, and their events' identities collected.
        kinds = [k.decode() for k in SOURCETYPE.findall(body)]
        with LOCK:
            REQUESTS[0] += 1
            first = kinds[0] if kinds else ""
            decode = HELD_BY_KIND.get(first, 0) < DECODED
            if decode:
                HELD_BY_KIND[first] = HELD_BY_KIND.get(first, 0) + 1
            host = self.headers.get("Host", "")
            HOSTS[host] = HOSTS.get(host, 0) + 1
        if decode:
            # Kept raw and decoded when /stats is asked: decoding here would stall the answers.
            with LOCK:
                HELD.append((body, kinds))
        with LOCK:
            if not kinds:
                BAD.append("a request without envelopes")
            for st in kinds:
                EVENTS[st] = EVENTS.get(st, 0) + 1
            if len(set(kinds)) > 1:
                REQUESTS[1] += 1
        self.reply(200, {"text": "Success", "code": 0})


if __name__ == "__main__":
    port_file = sys.argv[1]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Timer(90, server.shutdown).start()
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
