"""fake.py - stand-ins for the priorities benchmark's programs (PRIO_FAKE=1, selftest.sh):
no GPU, plausible outputs in the real programs' formats, so that prio.py's orchestration
and prio_report.py run end to end anywhere.

    fake.py l IMPL KINDS READY PLAN OUT.csv [measure]   service.py's interface
    fake.py h IMPL STOP READY OUT_PREFIX                 train.py's / hog's (llama-sync20:
                                                         "NS 20" every 20 steps)
    fake.py nvtaskset ARGS...                            --mps, --agent, -l --json, or
                                                         options then COMMAND (exec'd)
PRIO_FAKE_X (prio.py sets it per configuration): L's latency (its measured service times too) /
H's step time multiplier; PRIO_FAKE_FAIL=1: L fails after its warm-up.
"""
import os
import random
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import priolib  # noqa: E402

SERVICE_US = {"torch": {"decode": 600.0, "prefill": 2300.0, "tbt": 5200.0, "tbtsync": 5400.0, "tbtpoll": 5400.0, "tbtsleep": 6000.0, "tbt7b": 16000.0, "async": 1700.0,
                        "asyncside": 1700.0,
                        "generate": 40000.0, "eager": 1500.0},
              "cuda": {"decode": 550.0, "prefill": 3100.0, "tbt": 4400.0}}
STEP_US = {"torch": 9000.0, "hog": 1500.0, "llama": 12000.0, "llama-sync20": 12000.0, "gpt": 12000.0}
# nvtaskset options that take a value (the rest are flags).
VALUED = {"-g", "-c", "-n", "--priority", "--yield", "--guard", "--hold", "--poll", "--strategy", "--gpu",
          "--channels", "--memory-half"}


def fake_l(argv):
    impl, kinds, ready, plan, out = argv[:5]
    x = float(os.environ.get("PRIO_FAKE_X", "1"))
    rng = random.Random(1)

    def serve(us):
        def request():
            tail = 3.0 if rng.random() < 0.02 else 1.0
            time.sleep(us * x * tail * rng.uniform(0.97, 1.05) / 1e6)
        return request
    base = SERVICE_US[impl]
    requests = {k: serve(base[k]) for k in kinds.split(",")}
    service = {k: base[k] * x * 1.04 for k in requests} if argv[5:] == ["measure"] else {}
    with open(ready + ".tmp", "w") as f:  # as service.py: the orchestrator reads it once it exists
        f.write("".join("%s %.1f\n" % kv for kv in service.items()) or "ok\n")
    os.rename(ready + ".tmp", ready)
    if os.environ.get("PRIO_FAKE_FAIL") == "1":
        sys.exit("fake L: failing as asked (PRIO_FAKE_FAIL)")
    while not os.path.exists(plan):
        time.sleep(0.01)
    gap, phases = priolib.read_plan(plan)
    res = priolib.run_phases(gap, phases, requests, lambda lab, b: print("phase %s %d" % (lab, b), flush=True))
    priolib.write_l(out, impl, service, bool(service), res)


def fake_h(argv):
    impl, stop, ready, prefix = argv
    step = STEP_US[impl] * float(os.environ.get("PRIO_FAKE_X", "1")) / 1e6
    sync = 20 if impl.endswith("-sync20") else 1
    ends, i = [], 0
    if sync > 1:  # train.py's llama loop: a start mark, then one line per read
        ends.append("%d 0" % time.monotonic_ns())
        open(ready, "w").close()
    while not os.path.exists(stop):
        time.sleep(step)
        i += 1
        if i % sync == 0:
            ends.append("%d" % time.monotonic_ns() + (" %d" % sync if sync > 1 else ""))
        if i == 3 and sync == 1:
            open(ready, "w").close()
    if i % sync:
        ends.append("%d %d" % (time.monotonic_ns(), i % sync))
    with open(prefix + ".steps", "w") as f:
        f.write("# h impl=%s fake\n" % impl)
        f.write("".join(e + "\n" for e in ends))


def fake_nvtaskset(argv):
    if argv[:1] == ["--mps"]:
        print("fake MPS %s" % argv[1])
        return
    if argv[:2] == ["-l", "--json"]:
        print('{"fake": true, "tasks": []}')
        return
    if argv[:1] == ["--agent"]:
        signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
        sys.stderr.write("fake agent %s\n" % " ".join(argv[1:]))
        sys.stderr.flush()
        while True:
            time.sleep(1)
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        i += 2 if argv[i] in VALUED else 1
    if i >= len(argv):
        sys.exit("fake nvtaskset: no command in %s" % argv)
    os.execvp(argv[i], argv[i:])


def main():
    what, argv = sys.argv[1], sys.argv[2:]
    {"l": fake_l, "h": fake_h, "nvtaskset": fake_nvtaskset}[what](argv)


if __name__ == "__main__":
    main()
