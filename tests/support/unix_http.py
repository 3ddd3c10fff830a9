"""A tiny HTTP/1.1 server on a Unix socket for `ingestbench http --unix-socket` tests.

Usage: unix_http.py SOCKET_PATH. Answers every GET with 200 "unix ok\n" on kept connections
and exits after 60 s by itself. (disable_nagle_algorithm stays off: TCP_NODELAY does not exist
on a Unix socket, and nothing there waits for a delayed ACK.)
"""
import socketserver
import sys
import threading
import http.server


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_GET(self):
        body = b"unix ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Server(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True

    def get_request(self):
        req, _ = self.socket.accept()
        return req, ("unix", 0)


def main():
    server = Server(sys.argv[1], Handler)
    threading.Timer(60.0, server.shutdown).start()
    print("listening", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
