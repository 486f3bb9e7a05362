#!/usr/bin/env python3
"""HTTP clients, polite and not, for the exporter's tests (tests/e2e/observe.sh).

    httpprobe.py get PORT PATH [METHOD]   one request: prints the status, then the body
    httpprobe.py raw PORT KIND            sends a bad request of KIND (BAD below) on a
                                          connection, reads what comes back until the server
                                          closes it; prints it
    httpprobe.py parallel PORT N          N GETs of /metrics at once, from N threads that start
                                          together; prints "ok N" when all N got a 200 with a
                                          whole document, else what went wrong (exit 1)
    httpprobe.py slow PORT N              opens N connections that each send the start of a
                                          request and then one byte of a header at a time, and
                                          keeps them sending while it GETs /metrics 3 times on
                                          another connection; prints "ok" when each GET got a
                                          200 and every slow connection was still open when the
                                          last one ended (a server that served the GETs only
                                          after dropping them would fail), else why (exit 1)

Every connection is to 127.0.0.1:PORT. No time bound but a generous socket timeout that only
a hang meets (the suite's HANG).
"""
import random
import socket
import sys
import threading

TIMEOUT = float(__import__("os").environ.get("HANG", "120"))

# Requests a server must survive: garbage, an HTTP version it does not speak, a request line of
# 100 KiB, random bytes, a path that climbs, a body where none belongs, nothing at all.
BAD = {
    "garbage": b"GARBAGE\r\n\r\n",
    "version": b"GET /metrics HTTP/9.9\r\n\r\n",
    "long": b"GET /" + b"a" * 102400 + b" HTTP/1.1\r\n\r\n",
    "binary": bytes(random.Random(7).getrandbits(8) for _ in range(4096)),
    "climb": b"GET /../../etc/passwd HTTP/1.0\r\n\r\n",
    "body": b"POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello",
    "headers": b"GET /metrics HTTP/1.1\r\n" + b"X-A: b\r\n" * 20000 + b"\r\n",
    "empty": b"",
}


def request(port, path="/metrics", method="GET"):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    s.sendall(("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
               % (method, path)).encode())
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1]) if head.startswith(b"HTTP/") else 0
    return status, head.decode("latin-1"), body


def whole(body):
    """A whole metrics document: ends with a line, and its last family is there."""
    return body.endswith(b"\n") and b"# TYPE nvtaskset_mps_daemon_up gauge" in body


def cmd_get(port, path, method="GET"):
    status, head, body = request(port, path, method)
    print(status)
    sys.stdout.write(head + "\n\n")
    sys.stdout.write(body.decode("utf-8", "replace"))


def cmd_raw(port, kind):
    s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    try:
        s.sendall(BAD[kind])
    except (ConnectionResetError, BrokenPipeError):
        pass  # the server closed it before the end: what it may do
    try:
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    data = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    s.close()
    sys.stdout.write(data.decode("latin-1"))


def cmd_parallel(port, n):
    start = threading.Barrier(n)
    results = [None] * n

    def one(i):
        start.wait()
        try:
            status, _, body = request(port)
            results[i] = "ok" if status == 200 and whole(body) else "status %d, %d bytes" % (
                status, len(body))
        except OSError as e:
            results[i] = "error: %s" % e

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    bad = [r for r in results if r != "ok"]
    if bad:
        print("%d of %d failed: %s" % (len(bad), n, "; ".join(sorted(set(bad)))))
        return 1
    print("ok %d" % n)
    return 0


def cmd_slow(port, n):
    slow = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        slow.append(s)
    for round_ in range(3):
        # One more byte on each slow connection (a slowloris keeps each alive so), then a GET.
        for s in slow:
            s.sendall(b"a")
        status, _, body = request(port)
        if status != 200 or not whole(body):
            print("GET %d beside %d slow connections: status %d, %d bytes"
                  % (round_ + 1, n, status, len(body)))
            return 1
    # Still open: a byte goes through, and the server has not answered or closed them.
    closed = 0
    for s in slow:
        try:
            s.sendall(b"a")
            s.setblocking(False)
            try:
                if s.recv(1) == b"":
                    closed += 1
            except BlockingIOError:
                pass
        except OSError:
            closed += 1
        s.close()
    if closed:
        print("%d of %d slow connections were dropped before the GETs ended" % (closed, n))
        return 1
    print("ok")
    return 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "get":
        cmd_get(int(argv[1]), argv[2], *(argv[3:4]))
        return 0
    if len(argv) == 3 and argv[0] == "raw":
        cmd_raw(int(argv[1]), argv[2])
        return 0
    if len(argv) == 3 and argv[0] == "parallel":
        return cmd_parallel(int(argv[1]), int(argv[2]))
    if len(argv) == 3 and argv[0] == "slow":
        return cmd_slow(int(argv[1]), int(argv[2]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
