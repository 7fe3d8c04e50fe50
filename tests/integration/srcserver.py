"""A local HTTP(S) server for the source-fetching tests, on 127.0.0.1 and an ephemeral port.

Paths (NAME is a file in the served directory):
  /files/NAME         the file, with Range support (206)
  /cut/NAME           first request: full Content-Length, half the body, then the connection
                      is closed; later requests are served normally (resume must finish it)
  /cutnorange/NAME    like /cut, but later requests ignore Range (200, the whole file)
  /flaky/NAME         503 with Retry-After: 0 the first time, then the file
  /ratelimit/NAME     429 with Retry-After: 1 the first time, then the file
  /slow/NAME          headers, then one byte every 0.3 s for at most 20 bytes
  /paced/NAME         the whole file in 8 chunks with 0.05 s pauses (overlapping fetches)
  /redirect/NAME      302 to /files/NAME
  /loop               302 to /loop2, which sends 302 back to /loop
  /status/CODE        that status with a small body
  /git/...            git-http-backend (smart HTTP) over the repositories in git_root
Every request is recorded in server.log as (method, path, Range header).
"""
import http.server
import os
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # quiet
        pass

    # ---- helpers ------------------------------------------------------------------
    def _file(self, name):
        p = Path(self.server.root) / name
        return p.read_bytes() if p.is_file() else None

    def _send(self, code, body=b"", headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _serve(self, data, ranges=True):
        rng = self.headers.get("Range")
        if ranges and rng and rng.startswith("bytes=") and rng.endswith("-"):
            start = int(rng[6:-1])
            if start >= len(data):
                return self._send(416, b"", [("Content-Range", f"bytes */{len(data)}")])
            part = data[start:]
            return self._send(206, part, [
                ("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")])
        return self._send(200, data)

    def _first(self, key):
        with self.server.lock:
            n = self.server.counts.get(key, 0)
            self.server.counts[key] = n + 1
        return n == 0

    # ---- dispatch -----------------------------------------------------------------
    def do_GET(self):
        with self.server.lock:
            self.server.log.append((self.command, self.path, self.headers.get("Range")))
        parts = self.path.split("?")[0].split("/", 2)
        kind = parts[1] if len(parts) > 1 else ""
        name = parts[2] if len(parts) > 2 else ""
        if kind == "git":
            return self._git()
        handler = getattr(self, "_h_" + kind, None)
        if not handler:
            return self._send(404, b"not found\n")
        return handler(name)

    do_HEAD = do_GET

    def do_POST(self):
        with self.server.lock:
            self.server.log.append((self.command, self.path, None))
        if self.path.startswith("/git/"):
            return self._git()
        return self._send(405, b"")

    def _need(self, name):
        data = self._file(name)
        if data is None:
            self._send(404, b"no such file\n")
        return data

    def _h_files(self, name):
        data = self._need(name)
        if data is not None:
            self._serve(data)

    def _cut(self, name, ranges):
        data = self._need(name)
        if data is None:
            return
        if not self._first("cut:" + self.path):
            return self._serve(data, ranges=ranges)
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data[:len(data) // 2])
        self.wfile.flush()
        self.close_connection = True
        self.connection.shutdown(socket.SHUT_RDWR)

    def _h_cut(self, name):
        self._cut(name, True)

    def _h_cutnorange(self, name):
        self._cut(name, False)

    def _h_flaky(self, name):
        if self._first(self.path):
            return self._send(503, b"busy\n", [("Retry-After", "0")])
        self._h_files(name)

    def _h_ratelimit(self, name):
        if self._first(self.path):
            return self._send(429, b"slow down\n", [("Retry-After", "1")])
        self._h_files(name)

    def _h_slow(self, name):
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        try:
            for _ in range(20):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.3)
        except OSError:
            pass
        self.close_connection = True

    def _h_paced(self, name):
        data = self._need(name)
        if data is None:
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        step = max(1, len(data) // 8)
        for i in range(0, len(data), step):
            self.wfile.write(data[i:i + step])
            self.wfile.flush()
            time.sleep(0.05)

    def _h_redirect(self, name):
        self._send(302, b"", [("Location", f"/files/{name}")])

    def _h_loop(self, name):
        self._send(302, b"", [("Location", "/loop2/")])

    def _h_loop2(self, name):
        self._send(302, b"", [("Location", "/loop/")])

    def _h_status(self, name):
        self._send(int(name), b"status page\n")

    # ---- git smart HTTP through git-http-backend (CGI) -------------------------------
    def _git(self):
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        env = {
            "GIT_PROJECT_ROOT": str(self.server.git_root),
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path[len("/git"):],
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        }
        if self.headers.get("Git-Protocol"):
            env["GIT_PROTOCOL"] = self.headers["Git-Protocol"]
        out = subprocess.run([self.server.http_backend], input=body, env=env,
                             capture_output=True, timeout=60).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        code, headers = 200, []
        for line in head.decode("latin-1").split("\r\n"):
            k, _, v = line.partition(":")
            if k.lower() == "status":
                code = int(v.strip().split()[0])
            elif k:
                headers.append((k, v.strip()))
        self._send(code, payload, headers)


class Server:
    def __init__(self, root, tls_cert=None, tls_key=None, git_root=None):
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.httpd.root = str(root)
        self.httpd.git_root = str(git_root or root)
        self.httpd.http_backend = shutil.which("git-http-backend") or \
            "/usr/lib/git-core/git-http-backend"
        self.httpd.lock = threading.Lock()
        self.httpd.counts = {}
        self.httpd.log = []
        scheme = "http"
        if tls_cert:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(tls_cert, tls_key)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
            scheme = "https"
        self.port = self.httpd.server_address[1]
        self.base = f"{scheme}://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    @property
    def log(self):
        with self.httpd.lock:
            return list(self.httpd.log)

    def requests(self, path):
        return [e for e in self.log if e[1] == path]

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def make_cert(dir_):
    """A self-signed certificate for 127.0.0.1 made by openssl; returns (cert, key)."""
    cert, key = Path(dir_) / "cert.pem", Path(dir_) / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True,
                   capture_output=True)
    return cert, key
