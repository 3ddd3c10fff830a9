"""A JSON-batch HTTP collector with a known capacity, for the ceiling search's tests.

    capacity_sink.py PORT_FILE CAPACITY_EPS MODE [LIFETIME_S [BURST_EVENTS]]

Listens on 127.0.0.1 (any free port, written to PORT_FILE once listening) and accepts
POSTed JSON arrays or NDJSON of events, answering {"accepted": N}. Its capacity is
CAPACITY_EPS events per second, enforced one of two ways (MODE):

  refuse  a token bucket refilled at CAPACITY_EPS (holding 0.1 s of events, or
          BURST_EVENTS): a batch that
          finds too few tokens is answered 429 with Retry-After: 1 and not counted;
  slow    a virtual server that serves CAPACITY_EPS events a second: each batch takes
          events / CAPACITY_EPS seconds of it, after the batches before it, and is answered
          when that time has passed — beyond its capacity answers come later and later,
          never refused. (The schedule is kept on a clock, not by sleeping under a lock, so
          the script's own per-request cost does not lower the capacity.)

Exits by itself after LIFETIME_S (default 300) so a failed test cannot leave it running.
"""

import http.server
import json
import os
import sys
import threading
import time

port_file, capacity, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
lifetime = float(sys.argv[4]) if len(sys.argv) > 4 else 300.0
burst = float(sys.argv[5]) if len(sys.argv) > 5 else capacity * 0.1
assert mode in ("refuse", "slow"), mode

lock = threading.Lock()
bucket = {"tokens": burst, "at": time.monotonic()}
server_free_at = {"t": time.monotonic()}
served = {"accepted": 0, "refused": 0}


def count_events(body):
    text = body.strip()
    if text.startswith(b"["):
        return len(json.loads(text))
    return sum(1 for line in text.splitlines() if line.strip())


def take(n):
    """Token bucket: True if n events fit now."""
    with lock:
        now = time.monotonic()
        b = bucket
        b["tokens"] = min(burst, b["tokens"] + (now - b["at"]) * capacity)
        b["at"] = now
        if b["tokens"] >= n:
            b["tokens"] -= n
            return True
        return False


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def answer(self, code, body, extra=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self.answer(200, served)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        n = count_events(body)
        if mode == "refuse":
            if not take(n):
                served["refused"] += 1
                self.answer(429, {"error": "over capacity"}, [("Retry-After", "1")])
                return
        else:
            with lock:
                start = max(time.monotonic(), server_free_at["t"])
                server_free_at["t"] = done = start + n / capacity
            time.sleep(max(0.0, done - time.monotonic()))
        served["accepted"] += n
        self.answer(200, {"accepted": n})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256


server = Server(("127.0.0.1", 0), Handler)
tmp = port_file + ".tmp"
with open(tmp, "w") as f:
    f.write(str(server.server_address[1]))
os.rename(tmp, port_file)
threading.Timer(lifetime, server.shutdown).start()
server.serve_forever()
