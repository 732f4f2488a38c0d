#!/usr/bin/env python3
"""A real HTTPS git server on loopback, for restore's clone tests.

    https_git.py REPOS_DIR CERT_DIR PORT_FILE

Serves git's smart HTTP protocol (git http-backend, the CGI program git
ships) for every repository under REPOS_DIR at
https://localhost:PORT/git/NAME.git, with CERT_DIR/server.pem and
server.key, and writes the port it listens on to PORT_FILE. It stops by
itself after 120 s, so a test that dies cannot leave it behind.
"""
import http.server
import os
import ssl
import subprocess
import sys
import threading

repos, certs, port_file = sys.argv[1:4]


class GitHandler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def log_message(self, *args):
        pass

    def run_backend(self):
        path, _, query = self.path.partition("?")
        if not path.startswith("/git/"):
            self.send_error(404)
            return
        body = b""
        if self.command == "POST":
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "GIT_PROJECT_ROOT": repos,
            "GIT_HTTP_EXPORT_ALL": "1",
            "REQUEST_METHOD": self.command,
            "PATH_INFO": path[len("/git"):],
            "QUERY_STRING": query,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
        }
        out = subprocess.run(["git", "http-backend"], input=body, env=env,
                             stdout=subprocess.PIPE, check=False).stdout
        head, _, payload = out.partition(b"\r\n\r\n")
        status = 200
        headers = []
        for line in head.split(b"\r\n"):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            elif name:
                headers.append((name, value.strip()))
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = run_backend
    do_POST = run_backend


class TLSServer(http.server.HTTPServer):
    def shutdown_request(self, request):
        try:
            request.unwrap()  # close_notify: TLS clients expect it before the end
        except (OSError, ValueError):
            pass
        super().shutdown_request(request)


server = TLSServer(("127.0.0.1", 0), GitHandler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(os.path.join(certs, "server.pem"), os.path.join(certs, "server.key"))
server.socket = ctx.wrap_socket(server.socket, server_side=True)
threading.Timer(120, server.shutdown).start()
with open(port_file + ".new", "w") as f:
    f.write("%d\n" % server.server_address[1])
os.rename(port_file + ".new", port_file)
server.serve_forever()
