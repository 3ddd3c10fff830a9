#!/usr/bin/env python3
"""A strict Splunk HEC collector for tests/outcomes.rs: it checks what a HEC client sends as
Splunk documents it, records every violation, and answers per MODE.

Usage: hec_checker.py PORT_FILE MODE TOKEN
  MODE confirm       every ackId is confirmed by the next poll
       never         ackIds are handed out and never confirmed
       refuse-polls  ack polls get 400 (code 6)
Data (POST /services/collector/event): Authorization "Splunk TOKEN", a GUID in
X-Splunk-Request-Channel, Content-Type application/json, a valid gzip body when
Content-Encoding says gzip, concatenated JSON envelopes each with "time" and "event".
Acks (POST /services/collector/ack): the same auth and channel, Content-Type application/json,
no Content-Encoding, a body that is exactly {"acks": [integers]}.
GET /violations returns the list. Listens on 127.0.0.1 only, writes its port to PORT_FILE,
and exits by itself after 60 s.
"""

import gzip
import json
import re
import sys
import threading
from http.server import ThreadingHTTPServer

from hec_common import JsonHandler, envelopes

GUID = re.compile(r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")
LOCK = threading.Lock()
VIOLATIONS = []
NEXT_ACK = {}


def violation(msg):
    with LOCK:
        if len(VIOLATIONS) < 100:
            VIOLATIONS.append(msg)


class Handler(JsonHandler):

    def do_GET(self):
        if self.path == "/violations":
            with LOCK:
                self.reply(200, list(VIOLATIONS))
        else:
            self.reply(404, {"text": "not found"})

    def common(self, what):
        if self.headers.get("Authorization") != f"Splunk {TOKEN}":
            violation(f"{what}: Authorization is {self.headers.get('Authorization')!r}")
        channel = self.headers.get("X-Splunk-Request-Channel", "")
        if not GUID.match(channel):
            violation(f"{what}: channel {channel!r} is not a GUID")
        if self.headers.get("Content-Type", "").split(";")[0].strip() != "application/json":
            violation(f"{what}: Content-Type {self.headers.get('Content-Type')!r}")
        return channel, self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def do_POST(self):
        if self.path.startswith("/services/collector/ack"):
            return self.ack()
        if self.path != "/services/collector/event":
            violation(f"unexpected path {self.path}")
            return self.reply(404, {"text": "not found", "code": 404})
        channel, body = self.common("data")
        if self.headers.get("Content-Encoding") == "gzip":
            try:
                body = gzip.decompress(body)
            except Exception as e:
                violation(f"data: bad gzip: {e}")
                return self.reply(400, {"text": "Invalid data format", "code": 6})
        try:
            evs = envelopes(body.decode())
        except Exception as e:
            violation(f"data: not concatenated JSON envelopes: {e}")
            return self.reply(400, {"text": "Invalid data format", "code": 6})
        for ev in evs:
            if "event" not in ev or not isinstance(ev.get("time"), (int, float)):
                violation(f"data: envelope without event or numeric time: {str(ev)[:120]}")
        with LOCK:
            ack = NEXT_ACK.get(channel, 0)
            NEXT_ACK[channel] = ack + 1
        self.reply(200, {"text": "Success", "code": 0, "ackId": ack})

    def ack(self):
        channel, body = self.common("ack")
        if self.headers.get("Content-Encoding"):
            violation(f"ack: Content-Encoding {self.headers.get('Content-Encoding')!r}")
        try:
            req = json.loads(body)
            ok = set(req) == {"acks"} and all(isinstance(x, int) for x in req["acks"])
        except Exception:
            ok = False
        if not ok:
            violation(f"ack: body is not {{\"acks\":[ints]}}: {body[:120]!r}")
            return self.reply(400, {"text": "Invalid data format", "code": 6})
        if MODE == "refuse-polls":
            return self.reply(400, {"text": "Invalid data format", "code": 6})
        confirmed = MODE == "confirm"
        with LOCK:
            issued = NEXT_ACK.get(channel, 0)
        self.reply(200, {"acks": {str(i): confirmed and i < issued for i in req["acks"]}})


if __name__ == "__main__":
    PORT_FILE, MODE, TOKEN = sys.argv[1], sys.argv[2], sys.argv[3]
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Timer(60, server.shutdown).start()
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    import os
    os.rename(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()
