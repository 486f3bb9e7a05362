#!/usr/bin/env python3
"""A stand-in OCI runtime that applies CDI specs, for tests/e2e/cdi.sh.

    cdirun.py [--pidns | --host-pidns] [--uid U] [--userns OUTSIDE] [--pid-file F] [--env NAME=VALUE]...
              [--id ID]
              --bundle DIR --spec-dir DIR --device VENDOR/CLASS=NAME [--device ...] -- COMMAND...

As podman and runc do with nvtaskset's spec (docs/containers.md): resolves
each device in the spec files of --spec-dir, gathers the spec's and the
device's edits (later variables over earlier ones), makes the container's
first process and holds it before its exec, writes the bundle's config.json
(process.user, process.env and the hooks), runs each createRuntime hook with the
runtime's state on its standard input and the hook's own environment, then
lets the process exec COMMAND with the container's environment, waits for
it, and runs the poststop hooks. A hook that fails ends it all: the process
is killed, the hook's message is printed, and the exit status is 126.

Mounts are not made, but one: a variable whose value is a mount's container path gets
its host path instead in the process's environment (config.json holds the values as
the spec gives them, as a runtime's does), and the file mounted over /etc/ld.so.preload
is given in LD_PRELOAD, so the process sees what it would see through the mounts.
--pidns gives the process a PID namespace, a mount namespace and /proc of its own (it is
PID 1 there, as in a container); as root it is the default (a runtime's container has
them; --host-pidns: none), and the run directory's mount (/run/nvtaskset) is made, at
BUNDLE/rootfs/run/nvtaskset (config.json's root.path is BUNDLE/rootfs) in the process's
mount namespace, where the hooks find it as runc leaves it before pivot_root: its
variable names that path. So is the MPS pipe directory's (--with-mps), at BUNDLE/rootfs
and its path. --uid runs COMMAND as uid U
(the image's user; default: ours); --userns puts the process in a user namespace where uid
0 is uid OUTSIDE. --pid-file gets the process's PID (as this /proc numbers it).
--id gives the container that id (default: cdirun-PID, PID its first process's).
--env sets a variable as `podman run -e` does: first in config.json's
process.env, before the devices' variables of the same name, and the one the
process's getenv finds.

Its own failures (usage, an unresolvable device, a runtime call) exit 2; a
container this machine cannot make (a namespace the kernel refuses) exits
CANNOT_HERE, 77, saying which, so that a test skips on that alone.
"""
import ctypes
import glob
import json
import os
import signal
import subprocess
import sys

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18
libc = ctypes.CDLL(None, use_errno=True)
# The status of a container this machine cannot make (module docstring).
CANNOT_HERE = 77


def fail(msg, rc=2):
    print("cdirun: " + msg, file=sys.stderr)
    sys.exit(rc)


def check(rc, what):
    if rc != 0:
        err = ctypes.get_errno()
        fail("%s: %s" % (what, os.strerror(err)))


def check_here(rc, what):
    """In the container's process before it is ready: a namespace call the kernel refused
    ends it with CANNOT_HERE."""
    if rc != 0:
        err = ctypes.get_errno()
        print("cdirun: cannot make the container here: %s: %s" % (what, os.strerror(err)),
              file=sys.stderr)
        os._exit(CANNOT_HERE)


def parse_args(argv):
    opts = {"devices": [], "uid": os.getuid(), "pidns": None, "userns": None, "pid_file": None,
            "bundle": None, "spec_dir": None, "env": [], "id": None}
    i = 0
    while i < len(argv) and argv[i] != "--":
        a = argv[i]
        if a in ("--pidns", "--host-pidns"):
            opts["pidns"] = a == "--pidns"
            i += 1
            continue
        if i + 1 >= len(argv):
            fail("option %s takes a value" % a)
        v = argv[i + 1]
        key = {"--device": "devices", "--uid": "uid", "--userns": "userns",
               "--pid-file": "pid_file", "--bundle": "bundle", "--spec-dir": "spec_dir",
               "--env": "env", "--id": "id"}.get(a)
        if key is None:
            fail("unknown option " + a)
        if key in ("devices", "env"):
            opts[key].append(v)
        elif key in ("uid", "userns"):
            opts[key] = int(v)
        else:
            opts[key] = v
        i += 2
    if i >= len(argv) - 1 or not opts["bundle"] or not opts["spec_dir"]:
        fail("usage: cdirun.py [options] --bundle DIR --spec-dir DIR --device D... -- COMMAND...")
    opts["command"] = argv[i + 1:]
    if opts["pidns"] is None:
        opts["pidns"] = os.geteuid() == 0 and opts["userns"] is None
    return opts


def resolve(spec_dir, devices):
    """The edits of each device, the spec's own first (once per spec)."""
    specs = {}
    for path in sorted(glob.glob(os.path.join(spec_dir, "*.json"))):
        with open(path) as f:
            spec = json.load(f)
        specs[spec["kind"]] = spec
    edits, used = [], set()
    for qualified in devices:
        kind, _, name = qualified.partition("=")
        spec = specs.get(kind)
        found = [d for d in (spec or {}).get("devices", []) if d["name"] == name]
        if not found:
            fail("unresolvable CDI devices " + qualified)
        if kind not in used:
            used.add(kind)
            edits.append(spec.get("containerEdits", {}))
        edits.append(found[0].get("containerEdits", {}))
    return edits


def mounts_of(edits):
    """Each mount's container path and its host path."""
    return {m["containerPath"]: m["hostPath"] for e in edits for m in e.get("mounts", [])}


# The mounts made for real (with --pidns), at BUNDLE/rootfs + their container paths: the run
# directory's, and the MPS pipe directory's (--with-mps), over which a hook may bind another.
RUNDIR_MOUNT = "/run/nvtaskset"


def real_mounts(edits):
    """The container paths of the mounts made for real."""
    mounts = mounts_of(edits)
    pipe = [v.partition("=")[2] for e in edits for v in e.get("env", [])
            if v.startswith("CUDA_MPS_PIPE_DIRECTORY=")]
    return [p for p in [RUNDIR_MOUNT] + pipe[-1:] if p in mounts]


def container_env(edits, rootfs):
    """The test's environment, then each edit's variables: as config.json holds them (the
    spec's values), and as the process sees them (values through the mounts)."""
    config, env = dict(os.environ), dict(os.environ)
    mounts = mounts_of(edits)
    for path in real_mounts(edits) if rootfs else []:
        mounts[path] = rootfs + path
    # /etc/ld.so.preload, which the loader reads in the container: LD_PRELOAD here.
    if "/etc/ld.so.preload" in mounts:
        with open(mounts["/etc/ld.so.preload"]) as f:
            env["LD_PRELOAD"] = " ".join(f.read().split())
    for e in edits:
        for var in e.get("env", []):
            name, _, value = var.partition("=")
            config[name] = value
            env[name] = mounts.get(value, value)
    return config, env


def hooks_of(edits, stage):
    return [h for e in edits for h in e.get("hooks", []) if h["hookName"] == stage]


def run_hook(hook, state):
    env = dict(v.partition("=")[::2] for v in hook.get("env", []))
    p = subprocess.run(hook.get("args") or [hook["path"]], executable=hook["path"], env=env,
                       input=json.dumps(state).encode(), capture_output=True)
    return p.returncode, p.stderr.decode(errors="replace")


def mount_rundir(opts, edits):
    """In the process's mount namespace: the spec's mounts made for real (real_mounts) at
    BUNDLE/rootfs + their container paths, read-only where the spec says so."""
    MS_BIND, MS_RDONLY, MS_REMOUNT, MS_NOSUID, MS_NODEV, MS_NOEXEC = 4096, 1, 32, 2, 4, 8
    done = set()
    for e in edits:
        for m in e.get("mounts", []):
            path = m["containerPath"]
            if path not in real_mounts(edits) or path in done:
                continue
            done.add(path)
            target = (opts["rootfs"] + path).encode()
            check_here(libc.mount(m["hostPath"].encode(), target, None, MS_BIND | MS_REC, None),
                       "mount --rbind " + m["hostPath"])
            flags = MS_BIND | MS_REMOUNT | MS_NOSUID | MS_NODEV | MS_NOEXEC
            flags |= MS_RDONLY if "ro" in m.get("options", []) else 0
            check_here(libc.mount(None, target, None, flags, None), "mount -o remount " + m["hostPath"])


def start_process(opts, env, edits):
    """Forks the container's first process, held until a byte arrives on go.
    Returns (its PID as this /proc numbers it, the write end of go, the PID to wait for)."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(go_w)
        if opts["userns"] is not None:
            check_here(libc.unshare(CLONE_NEWUSER), "unshare(CLONE_NEWUSER)")
        me = os.getpid()
        if opts["pidns"]:
            check_here(libc.unshare(CLONE_NEWPID | CLONE_NEWNS), "unshare(CLONE_NEWPID)")
            # (the mount namespace is this process's too: mounted before the hooks run)
            check_here(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None),
                       "mount --make-rprivate /")
            mount_rundir(opts, edits)
            inner = os.fork()
            if inner:
                os.write(ready_w, str(inner).encode())
                os.close(ready_w)
                _, status = os.waitpid(inner, 0)
                os._exit(os.waitstatus_to_exitcode(status) & 0xff)
            check_here(libc.mount(b"proc", b"/proc", b"proc", 0, None), "mount /proc")
        else:
            os.write(ready_w, str(me).encode())
            os.close(ready_w)
        if not os.read(go_r, 1):
            os._exit(127)
        if opts["uid"] != os.getuid():
            os.setgroups([])
            os.setgid(opts["uid"])
            os.setuid(opts["uid"])
        try:
            os.execvpe(opts["command"][0], opts["command"], env)
        except OSError as e:
            print("cdirun: %s: %s" % (opts["command"][0], e), file=sys.stderr)
            os._exit(127)
    os.close(ready_w)
    os.close(go_r)
    ready = os.read(ready_r, 32)
    os.close(ready_r)
    if not ready:
        _, status = os.waitpid(pid, 0)
        code = os.waitstatus_to_exitcode(status)
        if code == CANNOT_HERE:
            sys.exit(CANNOT_HERE)
        fail("the container's process ended before it was ready (status %d)" % code)
    first = int(ready)
    if opts["userns"] is not None:
        with open("/proc/%d/setgroups" % pid, "w") as f:
            f.write("deny")
        with open("/proc/%d/uid_map" % pid, "w") as f:
            f.write("0 %d 1\n" % opts["userns"])
        with open("/proc/%d/gid_map" % pid, "w") as f:
            f.write("0 %d 1\n" % opts["userns"])
    return first, go_w, pid


def main():
    opts = parse_args(sys.argv[1:])
    edits = resolve(opts["spec_dir"], opts["devices"])
    opts["rootfs"] = os.path.join(opts["bundle"], "rootfs") if opts["pidns"] else None
    for path in real_mounts(edits) if opts["rootfs"] else []:
        os.makedirs(opts["rootfs"] + path, exist_ok=True)
    config, env = container_env(edits, opts["rootfs"])
    given = [v.partition("=")[::2] for v in opts["env"]]
    os.makedirs(opts["bundle"], exist_ok=True)
    os.chmod(opts["bundle"], 0o755)  # (its rootfs is the container's user's to reach)
    with open(os.path.join(opts["bundle"], "config.json"), "w") as f:
        json.dump({"ociVersion": "1.0.2", "process": {
            "user": {"uid": opts["uid"], "gid": opts["uid"]},
            "env": ["%s=%s" % kv for kv in given + list(config.items())], "args": opts["command"]},
            "root": {"path": opts["rootfs"] or "/"},
            # The devices' hooks, as the runtime is given them (OCI's hooks, by stage).
            "hooks": {stage: [{k: v for k, v in h.items() if k != "hookName"} for h in hooks_of(edits, stage)]
                      for stage in ("createRuntime", "poststop")}}, f)
    mounts = mounts_of(edits)
    env.update({name: mounts.get(value, value) for name, value in given})
    first, go, waited = start_process(opts, env, edits)
    if opts["pid_file"]:
        with open(opts["pid_file"], "w") as f:
            f.write("%d\n" % first)
    state = {"ociVersion": "1.0.2", "id": opts["id"] or "cdirun-%d" % first, "status": "creating",
             "pid": first, "bundle": opts["bundle"], "annotations": {}}
    stopped = {"ociVersion": "1.0.2", "id": state["id"], "status": "stopped",
               "bundle": opts["bundle"], "annotations": {}}
    for i, hook in enumerate(hooks_of(edits, "createRuntime")):
        rc, err = run_hook(hook, state)
        if rc != 0:
            os.kill(waited, signal.SIGKILL)
            os.waitpid(waited, 0)
            for h in hooks_of(edits, "poststop"):
                run_hook(h, stopped)
            fail("error running hook #%d: exit status %d, stderr: %s" % (i, rc, err.strip()), 126)
    os.write(go, b"g")
    os.close(go)
    _, status = os.waitpid(waited, 0)
    for h in hooks_of(edits, "poststop"):
        run_hook(h, stopped)
    code = os.waitstatus_to_exitcode(status)
    sys.exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    main()
