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
                                          200, else why (exit 1)

    httpprobe.py flood PORT N ADDRS SECONDS   N slow connections from ADDRS loopback addresses
                                          (127.0.0.1 onwards), each sending a header line every
                                          4 s and opened again when the server closes it, for
                                          SECONDS; meanwhile GETs of /metrics one after another,
                                          each of which must answer within SCRAPE_TIMEOUT (1 s;
                                          more on a loaded machine, as the suite's HANG); prints
                                          "ok scrapes=S closed=C" (C: slow connections the
                                          server closed), else why (exit 1)
    httpprobe.py oneaddr PORT N           N slow connections from 127.0.0.2, then a GET from
                                          127.0.0.2 and one from 127.0.0.1; prints "ok open=O"
                                          (O: the slow ones still open once 16 or fewer are,
                                          or 10 s after), else why (exit 1)
    httpprobe.py unread PORT N SECONDS    N connections that each send a whole GET of /metrics
                                          and read its answer 64 bytes at a time (a receive
                                          buffer and segments as small as the kernel lets them
                                          be: the answer stays unsent), and 5 more each round,
                                          for SECONDS; meanwhile GETs of /metrics one after
                                          another, each of which must answer within
                                          SCRAPE_TIMEOUT; prints "ok scrapes=S", else why
                                          (exit 1)
    httpprobe.py pinned PORT N KEEP       N connections, opened 0.6 s apart (each answer a read
                                          of its own), that each send a whole GET of /metrics
                                          and read its answer as unread does, then each read to
                                          its end; prints "ok cut=C" when the server closed C of
                                          them before their whole answer, 1 to N - KEEP, the
                                          oldest, and the others' answers came whole; else why
                                          (exit 1)
    httpprobe.py trickle PORT SECONDS     one connection that sends a header line every 0.25 s
                                          for up to SECONDS; prints "closed lines=L" when the
                                          server closed it first, else "open" (exit 1)

Every connection is to 127.0.0.1:PORT. No time bound but a generous socket timeout that only
a hang meets (the suite's HANG).
"""
import random
import socket
import sys
import threading
import time

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


SCRAPE_TIMEOUT = float(__import__("os").environ.get("SCRAPE_TIMEOUT", "1"))


def slow_open(port, source):
    s = socket.socket()
    s.settimeout(TIMEOUT)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return s


def closed_by_server(s):
    """The server closed s (a read sees its end, or the connection was reset)."""
    s.setblocking(False)
    try:
        return s.recv(1) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True
    finally:
        s.settimeout(TIMEOUT)


def scrape(source="127.0.0.1"):
    s = socket.socket()
    s.settimeout(SCRAPE_TIMEOUT)
    s.bind((source, 0))
    s.connect(("127.0.0.1", PORT[0]))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return head.startswith(b"HTTP/1.1 200") and whole(body)


PORT = [0]


def cmd_flood(port, n, addrs, seconds):
    PORT[0] = port
    sources = ["127.0.0.%d" % (1 + i % addrs) for i in range(n)]
    slow = [slow_open(port, src) for src in sources]
    closed = scrapes = line = 0
    end = time.monotonic() + seconds
    next_line = time.monotonic() + 4
    while time.monotonic() < end:
        if time.monotonic() >= next_line:
            line += 1
            next_line += 4
            for i, s in enumerate(slow):
                try:
                    s.sendall(b"X-Slow-%d: a\r\n" % line)
                except OSError:
                    pass
        for i, s in enumerate(slow):
            if closed_by_server(s):
                closed += 1
                s.close()
                slow[i] = slow_open(port, sources[i])  # she keeps on
        try:
            ok = scrape()
        except OSError as e:
            print("scrape %d beside %d slow connections: %s" % (scrapes + 1, n, e))
            return 1
        if not ok:
            print("scrape %d beside %d slow connections: not a 200 with the whole document"
                  % (scrapes + 1, n))
            return 1
        scrapes += 1
        time.sleep(0.2)
    for s in slow:
        s.close()
    print("ok scrapes=%d closed=%d" % (scrapes, closed))
    return 0


def cmd_oneaddr(port, n):
    PORT[0] = port
    slow = [slow_open(port, "127.0.0.2") for _ in range(n)]
    for src in ("127.0.0.2", "127.0.0.1"):
        if not scrape(src):
            print("the GET from %s beside %d slow connections failed" % (src, n))
            return 1
    # The server closes the connections over its limit as each is accepted and counted, some
    # of them (those its threads took at once) after the GETs were answered: the count is
    # taken once it reaches the limit (16), or after 10 s.
    end = time.monotonic() + 10
    while True:
        still = sum(1 for s in slow if not closed_by_server(s))
        if still <= 16 or time.monotonic() > end:
            break
        time.sleep(0.05)
    for s in slow:
        s.close()
    print("ok open=%d" % still)
    return 0


def unread_open(port):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_MAXSEG, 88)
    s.settimeout(TIMEOUT)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    s.setblocking(False)
    return s


def cmd_unread(port, n, seconds):
    PORT[0] = port
    slow = []

    def more(k):
        for _ in range(k):
            try:
                slow.append(unread_open(port))
            except OSError:
                pass  # refused, or closed before its request: what a server may do

    more(n)
    scrapes = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        # 64 bytes of each answer: none is idle long enough for the server to close it.
        for s in list(slow):
            try:
                if s.recv(64) == b"":
                    slow.remove(s)
                    s.close()
            except BlockingIOError:
                pass
            except OSError:
                slow.remove(s)
                s.close()
        more(5)  # she keeps on
        try:
            ok = scrape()
        except OSError as e:
            print("scrape %d beside %d unread answers: %s" % (scrapes + 1, len(slow), e))
            return 1
        if not ok:
            print("scrape %d beside %d unread answers: not a 200 with the whole document"
                  % (scrapes + 1, len(slow)))
            return 1
        scrapes += 1
        time.sleep(0.2)
    for s in slow:
        s.close()
    print("ok scrapes=%d" % scrapes)
    return 0


def cmd_pinned(port, n, keep):
    conns, got = [], []

    def nibble():
        # 64 bytes of each answer: none is idle long enough for the server to close it
        for i, s in enumerate(conns):
            try:
                got[i] += s.recv(64)
            except (BlockingIOError, OSError):
                pass

    for _ in range(n):
        conns.append(unread_open(port))
        got.append(b"")
        begun = time.monotonic()
        while time.monotonic() < begun + 0.6:
            nibble()
            time.sleep(0.05)
    # Then each read to its end: its whole document, or what the server sent before it closed it.
    cut = []
    for i, s in enumerate(conns):
        s.setblocking(True)
        s.settimeout(TIMEOUT)
        while not whole(got[i].partition(b"\r\n\r\n")[2]):
            try:
                chunk = s.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                cut.append(i)
                break
            got[i] += chunk
        s.close()
    if not cut or cut != list(range(len(cut))) or len(cut) > n - keep:
        print("the server cut answers %s of %d unread ones: not the oldest, at most %d"
              % (cut, n, n - keep))
        return 1
    print("ok cut=%d" % len(cut))
    return 0


def cmd_trickle(port, seconds):
    s = slow_open(port, "127.0.0.1")
    for line in range(int(seconds * 4)):
        try:
            s.sendall(b"X-Trickle-%d: a\r\n" % line)
        except OSError:
            print("closed lines=%d" % line)
            return 0
        time.sleep(0.25)
        if closed_by_server(s):
            print("closed lines=%d" % (line + 1))
            return 0
    print("open")
    return 1


def cmd_slow(port, n):
    slow = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
        s.sendall(b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        slow.append(s)
    for round_ in range(3):
        # One more byte on each slow connection (a slowloris keeps each alive so), then a GET.
        # (those the server closed, past what one address may hold, are closed)
        for s in slow:
            try:
                s.sendall(b"a")
            except OSError:
                pass
        status, _, body = request(port)
        if status != 200 or not whole(body):
            print("GET %d beside %d slow connections: status %d, %d bytes"
                  % (round_ + 1, n, status, len(body)))
            return 1
    for s in slow:
        s.close()
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
    if len(argv) == 5 and argv[0] == "flood":
        return cmd_flood(int(argv[1]), int(argv[2]), int(argv[3]), float(argv[4]))
    if len(argv) == 3 and argv[0] == "oneaddr":
        return cmd_oneaddr(int(argv[1]), int(argv[2]))
    if len(argv) == 4 and argv[0] == "unread":
        return cmd_unread(int(argv[1]), int(argv[2]), float(argv[3]))
    if len(argv) == 4 and argv[0] == "pinned":
        return cmd_pinned(int(argv[1]), int(argv[2]), int(argv[3]))
    if len(argv) == 3 and argv[0] == "trickle":
        return cmd_trickle(int(argv[1]), float(argv[2]))
    if len(argv) == 3 and argv[0] == "slow":
        return cmd_slow(int(argv[1]), int(argv[2]))
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
