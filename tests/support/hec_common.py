"""What the Python HEC collectors of the tests share (hec_checker.py, mix_collector.py):
reading a body of concatenated JSON envelopes, and a handler base that answers JSON over
HTTP/1.1 keep-alive with Nagle off (else every answer on a reused connection waits 40 ms for
a delayed ACK) and logs nothing."""

import json
from http.server import BaseHTTPRequestHandler


def envelopes(text):
    """The JSON values of `text`, written one after the other (HEC's event endpoint body)."""
    dec = json.JSONDecoder()
    i, out = 0, []
    while True:
        while i < len(text) and text[i] in " \t\r\n":
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


class JsonHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args):
        pass

    def reply(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
