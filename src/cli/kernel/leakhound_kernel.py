"""leakhound's Jupyter kernel proxy (written by `leakhound kernel install`; see docs/jupyter.md).

The client starts this file as its kernel. It starts the real kernel on a second connection
(Unix sockets in a private directory, a new key), relays the five channels between the two, and has every
message the kernel sends masked by one `leakhound kernel mask` process before the client gets
it: iopub (streams, displays, results, errors, everything), shell and control replies, stdin
prompts. Messages from the client go to the kernel unchanged, re-signed.

Fail closed: a message that cannot be masked (the masker died, a frame is not JSON) is
replaced by a notice in the same place, never forwarded as it was.

Stream text goes through a streaming masker per stream name, which holds back a tail that
could still be the start of a secret (a token printed in pieces): what it releases is sent at
once, the rest when the stream is idle, and everything before the kernel reports idle.
"""

import argparse
import base64
import codecs
import hashlib
import hmac
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import datetime, timezone

import zmq
from jupyter_client.connect import write_connection_file

DELIM = b"<IDS|MSG>"
# A partial line goes out after this long without more output on its stream, as with
# `leakhound filter`'s default --idle-ms.
IDLE = 0.05
CHANNELS = ("shell", "control", "stdin")
# sockaddr_un's sun_path holds 108 bytes with the NUL on Linux (104 on the BSDs and macOS).
IPC_PATH_MAX = 103


def log(msg):
    print(f"leakhound kernel: {msg}", file=sys.stderr, flush=True)


class Signer:
    """HMAC over a message's four JSON frames, as Jupyter's Session signs them."""

    def __init__(self, key, scheme):
        self.mac = None
        if key:
            algo = scheme.split("-", 1)[1] if "-" in scheme else "sha256"
            self.mac = hmac.HMAC(key, digestmod=getattr(hashlib, algo))

    def sign(self, four):
        if self.mac is None:
            return b""
        h = self.mac.copy()
        for f in four:
            h.update(f)
        return h.hexdigest().encode()

    def valid(self, sig, four):
        return self.mac is None or hmac.compare_digest(sig, self.sign(four))


def split(frames):
    """(routing frames, signature, [header, parent, metadata, content], buffers), or None."""
    try:
        i = frames.index(DELIM)
    except ValueError:
        return None
    if len(frames) < i + 6:
        return None
    return frames[:i], frames[i + 1], frames[i + 2 : i + 6], frames[i + 6 :]


def pack(obj):
    # What jupyter_client's json_packer writes.
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf8", "surrogateescape")


def new_header(msg_type, session):
    return {
        "msg_id": uuid.uuid4().hex,
        "msg_type": msg_type,
        "username": "leakhound",
        "session": session,
        "date": datetime.now(timezone.utc).isoformat(),
        "version": "5.3",
    }


class Masker:
    """The `leakhound kernel mask` child: one request line, one answer line. Any failure
    marks it broken for good: later messages are withheld rather than sent unmasked, and
    a new masker would not know the secrets seen so far."""

    def __init__(self, argv):
        self.broken = False
        try:
            self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        except OSError as e:
            log(f"cannot start the masker: {e}")
            self.broken = True

    def ask(self, line):
        if self.broken:
            return None
        try:
            self.p.stdin.write(line + b"\n")
            self.p.stdin.flush()
            ans = self.p.stdout.readline()
        except (OSError, ValueError):
            ans = b""
        if not ans.endswith(b"\n"):
            log("the masker stopped; kernel output is withheld from now on")
            self.broken = True
            return None
        return ans[:-1]

    def frames(self, frames):
        """JSON frames masked together (one request), each byte for byte when clean; None
        when they cannot be masked."""
        doc = b"[" + b",".join(frames) + b"]"
        if b"\n" in doc or b"\r" in doc:
            return None
        ans = self.ask(b"D" + doc)
        if ans is None or ans[:1] != b"D":
            return None
        if ans[1:] == doc:
            return list(frames)
        try:
            return [pack(v) for v in json.loads(ans[1:])]
        except ValueError:
            return None

    def buffer(self, b):
        ans = self.ask(b"B" + base64.b64encode(b))
        if ans is None or ans[:1] != b"B":
            return None
        return base64.b64decode(ans[1:])

    def stream(self, op, name, text=""):
        """(text to send now, whether more is held), or None."""
        req = op + name.encode()
        if op == b"P":
            req += b"\t" + json.dumps(text).encode()
        ans = self.ask(req)
        if ans is None or ans[:1] != b"T":
            return None
        try:
            return json.loads(ans[2:]), ans[1:2] == b"1"
        except ValueError:
            return None

    def close(self):
        if not self.broken:
            try:
                self.p.stdin.close()
                self.p.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.p.kill()


class Held:
    """A stream whose masker holds text back, and the last message it came in, whose
    header and parent the released text is sent with."""

    def __init__(self):
        self.pending = False
        self.since = 0.0
        self.last = None  # (routing frames, header dict, parent frame, metadata frame)


class Proxy:
    def __init__(self, args, inner_argv):
        self.args = args
        with open(args.f) as f:
            conn = json.load(f)
        scheme = conn.get("signature_scheme", "hmac-sha256")
        self.outer = Signer(conn.get("key", "").encode(), scheme)
        inner_key = uuid.uuid4().hex.encode()
        self.inner = Signer(inner_key, "hmac-sha256")
        # The kernel behind the proxy listens on Unix sockets in a directory of its own (0700):
        # no TCP ports picked, released and bound later, which another kernel starting at the
        # same moment can be handed too, and nothing another local user can connect to. TCP on
        # 127.0.0.1 where a socket's path would be too long for the system.
        self.inner_dir = tempfile.mkdtemp(prefix="leakhound-kernel-")
        try:
            self.start(args, inner_argv, conn, inner_key)
        except BaseException:
            # The inner connection file holds a key: nothing of it stays behind a failed start.
            shutil.rmtree(self.inner_dir, ignore_errors=True)
            raise

    def start(self, args, inner_argv, conn, inner_key):
        ipc = os.path.join(self.inner_dir, "k")
        transport = "ipc" if len(ipc) + 8 <= IPC_PATH_MAX and hasattr(socket, "AF_UNIX") else "tcp"
        self.inner_file, inner = write_connection_file(
            os.path.join(self.inner_dir, "kernel.json"),
            ip=ipc if transport == "ipc" else "127.0.0.1",
            key=inner_key,
            transport=transport,
            signature_scheme="hmac-sha256",
        )

        masker = [args.leakhound, "kernel", "mask"]
        if args.config:
            masker += ["--config", args.config]
        self.masker = Masker(masker)

        argv = [a.replace(args.f, self.inner_file) for a in inner_argv]
        self.kernel = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            # What the kernel process itself writes (what a subprocess writes past
            # ipykernel's capture, warnings) goes to the Jupyter server's log: masked as
            # well, in the same context, so a value seen in a cell is known there too.
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # Its own process group, which an interrupt signals as jupyter_client would.
            start_new_session=True,
            preexec_fn=die_with_parent,
        )
        self.logs = {
            self.kernel.stdout.fileno(): ("log:stdout", codecs.getincrementaldecoder("utf-8")("replace")),
            self.kernel.stderr.fileno(): ("log:stderr", codecs.getincrementaldecoder("utf-8")("replace")),
        }

        self.ctx = zmq.Context()
        transport = conn.get("transport", "tcp")

        def url(port, ip, transport=transport):
            return f"ipc://{ip}-{port}" if transport == "ipc" else f"tcp://{ip}:{port}"

        ip = conn["ip"]
        self.front, self.back = {}, {}
        ident = uuid.uuid4().hex.encode()
        for ch in CHANNELS + ("hb",):
            s = self.ctx.socket(zmq.ROUTER)
            s.linger = 1000
            s.bind(url(conn[f"{ch}_port"], ip))
            self.front[ch] = s
            d = self.ctx.socket(zmq.DEALER)
            d.linger = 0
            if ch != "hb":
                # One identity on shell and stdin: the kernel sends input_request to the
                # identity the execute_request came from.
                d.identity = ident
            d.connect(url(inner[f"{ch}_port"], inner["ip"], inner["transport"]))
            self.back[ch] = d
        self.pub = self.ctx.socket(zmq.PUB)
        self.pub.linger = 1000
        self.pub.bind(url(conn["iopub_port"], ip))
        self.sub = self.ctx.socket(zmq.SUB)
        self.sub.linger = 0
        self.sub.setsockopt(zmq.SUBSCRIBE, b"")
        self.sub.connect(url(inner["iopub_port"], inner["ip"], inner["transport"]))

        # Where each request came from (routing frames by msg_id), so replies, and the
        # kernel's input_request for an execute_request, reach the client that asked.
        self.routes = {}
        self.last_route = {}
        self.streams = {}

    # ---- client -> kernel ----

    def from_client(self, ch, frames):
        parts = split(frames)
        if parts is None:
            return
        idents, sig, four, bufs = parts
        if not self.outer.valid(sig, four):
            log(f"dropped a {ch} message with a bad signature")
            return
        try:
            header = json.loads(four[0])
        except ValueError:
            return
        self.last_route[ch] = idents
        if ch != "stdin":
            self.routes[header.get("msg_id")] = idents
            if len(self.routes) > 10000:
                self.routes.pop(next(iter(self.routes)))
        if ch == "control" and header.get("msg_type") == "interrupt_request":
            if self.args.interrupt_mode == "signal":
                self.interrupt()
                self.reply(ch, idents, header, "interrupt_reply", {"status": "ok"})
                return
        self.back[ch].send_multipart([DELIM, self.inner.sign(four)] + four + bufs)

    def interrupt(self):
        self.signal(signal.SIGINT)

    def signal(self, sig):
        try:
            os.killpg(self.kernel.pid, sig)
        except OSError:
            pass

    def reply(self, ch, idents, parent, msg_type, content):
        four = [pack(new_header(msg_type, parent.get("session", ""))), pack(parent), b"{}", pack(content)]
        self.front[ch].send_multipart(idents + [DELIM, self.outer.sign(four)] + four)

    # ---- kernel -> client ----

    def checked(self, frames):
        parts = split(frames)
        if parts is None:
            return None
        if not self.inner.valid(parts[1], parts[2]):
            log("dropped a kernel message with a bad signature")
            return None
        return parts

    def mask(self, four, bufs):
        """The message masked, or None."""
        masked = self.masker.frames(four)
        if masked is None:
            return None
        out = []
        for b in bufs:
            m = self.masker.buffer(b)
            if m is None:
                return None
            out.append(m)
        return masked, out

    def from_kernel(self, ch, frames):
        parts = self.checked(frames)
        if parts is None:
            return
        _, _, four, bufs = parts
        try:
            header, parent, content = json.loads(four[0]), json.loads(four[1]), json.loads(four[3])
        except ValueError:
            return
        pid = parent.get("msg_id")
        if ch == "stdin":
            # An input_request answers the execute_request on shell.
            idents = self.routes.get(pid, self.last_route.get("shell"))
        elif header.get("msg_type", "").endswith("_reply"):
            idents = self.routes.pop(pid, self.last_route.get(ch))
        else:
            idents = self.routes.get(pid, self.last_route.get(ch))
        if idents is None:
            return
        masked = self.mask(four, bufs)
        if masked is None:
            masked = self.withheld(header, parent, content), []
        m4, mb = masked
        self.front[ch].send_multipart(idents + [DELIM, self.outer.sign(m4)] + m4 + mb)

    def withheld(self, header, parent, content):
        """A stand-in for a message that could not be masked, of the same type and with
        the fields clients read, so the client still gets the reply it waits for."""
        t = header.get("msg_type", "")
        notice = "leakhound withheld this message: it could not be masked"
        if t == "input_request":
            c = {"prompt": "[leakhound: prompt withheld] ", "password": False}
        else:
            c = {"status": "error", "ename": "LeakhoundWithheld", "evalue": notice, "traceback": [notice]}
            if isinstance(content.get("execution_count"), int):
                c["execution_count"] = content["execution_count"]
            if t == "kernel_info_reply":
                c.update(protocol_version="5.3", implementation="leakhound", implementation_version="",
                         language_info={"name": ""}, banner=notice)
        return [pack(new_header(t, header.get("session", ""))), pack(minimal(parent)), b"{}", pack(c)]

    def from_iopub(self, frames):
        parts = self.checked(frames)
        if parts is None:
            return
        topic, _, four, bufs = parts
        try:
            header = json.loads(four[0])
            content = json.loads(four[3])
        except ValueError:
            return
        t = header.get("msg_type")
        if t == "stream" and isinstance(content.get("text"), str) and not bufs:
            return self.stream(topic, header, four, content)
        # Held stream text came first: release it before this message. When the kernel
        # goes idle its output for the request is complete, so nothing is held past it.
        done = t == "status" and content.get("execution_state") == "idle"
        for name in list(self.streams):
            if not name.startswith("log:"):
                self.release(name, b"F" if done else b"I")
        masked = self.mask(four, bufs)
        if masked is None:
            if t == "execute_input":
                return  # the client's own code, echoed: nothing is lost
            masked = self.iopub_withheld(header, json.loads(four[1]) if is_json(four[1]) else {}, content), []
        m4, mb = masked
        self.pub.send_multipart(topic + [DELIM, self.outer.sign(m4)] + m4 + mb)

    def iopub_withheld(self, header, parent, content):
        t = header.get("msg_type")
        session = header.get("session", "")
        if t == "status":
            state = content.get("execution_state")
            c = {"execution_state": state if state in ("busy", "idle", "starting") else "idle"}
            return [pack(new_header(t, session)), pack(minimal(parent)), b"{}", pack(c)]
        c = {"name": "stderr", "text": f"[leakhound: withheld output ({t}): it could not be masked]\n"}
        return [pack(new_header("stream", session)), pack(minimal(parent)), b"{}", pack(c)]

    def stream(self, topic, header, four, content):
        name = content.get("name", "stdout")
        st = self.streams.setdefault(name, Held())
        masked_hpm = self.masker.frames(four[:3])
        got = self.masker.stream(b"P", name, content["text"]) if masked_hpm else None
        if got is None:
            self.send_stream(topic, header, four[1], name, "[leakhound: output withheld: it could not be masked]\n", fresh=True)
            return
        text, held = got
        h, p, m = masked_hpm
        try:
            mheader = json.loads(h)
        except ValueError:
            return
        if text == content["text"] and not st.pending and not held:
            # Clean, whole, nothing held before it: the message as the kernel sent it.
            four = [h, p, m, four[3]]
            self.pub.send_multipart(topic + [DELIM, self.outer.sign(four)] + four)
        elif text:
            self.send_stream(topic, mheader, p, name, text, fresh=False, meta=m)
        st.pending = held
        st.since = time.monotonic()
        st.last = (topic, mheader, p, m)

    def send_stream(self, topic, header, parent, name, text, fresh, meta=b"{}"):
        if fresh:
            header = dict(header, msg_id=uuid.uuid4().hex, date=datetime.now(timezone.utc).isoformat())
        four = [pack(header), parent, meta, pack({"name": name, "text": text})]
        self.pub.send_multipart(topic + [DELIM, self.outer.sign(four)] + four)

    def from_log(self, fd):
        name, decoder = self.logs[fd]
        data = os.read(fd, 65536)
        if not data:
            return False
        text = decoder.decode(data)
        got = self.masker.stream(b"P", name, text) if text else ("", False)
        st = self.streams.setdefault(name, Held())
        if got is None:
            sys.stderr.write("[leakhound: kernel output withheld: it could not be masked]\n")
        else:
            sys.stderr.write(got[0])
            st.pending, st.since = got[1], time.monotonic()
        sys.stderr.flush()
        return True

    def release(self, name, op):
        st = self.streams.get(name)
        if st is None or not st.pending:
            return
        got = self.masker.stream(op, name)
        if name.startswith("log:"):
            st.pending = bool(got and got[1])
            sys.stderr.write(got[0] if got else "[leakhound: kernel output withheld]\n")
            sys.stderr.flush()
            return
        topic, header, parent, meta = st.last
        if got is None:
            st.pending = False
            self.send_stream(topic, header, parent, name, "[leakhound: output withheld: it could not be masked]\n", fresh=True)
            return
        text, held = got
        if text:
            self.send_stream(topic, header, parent, name, text, fresh=True, meta=meta)
        st.pending = held
        st.since = time.monotonic()

    def idle_streams(self):
        now = time.monotonic()
        for name, st in list(self.streams.items()):
            if st.pending and now - st.since >= IDLE:
                self.release(name, b"I")

    # ---- the loop ----

    def run(self):
        poller = zmq.Poller()
        for ch in CHANNELS + ("hb",):
            poller.register(self.front[ch], zmq.POLLIN)
            poller.register(self.back[ch], zmq.POLLIN)
        poller.register(self.sub, zmq.POLLIN)
        for fd in self.logs:
            poller.register(fd, zmq.POLLIN)
        exited_at = None
        while True:
            pending = any(st.pending for st in self.streams.values())
            events = dict(poller.poll(int(IDLE * 1000) if pending else 200))
            # The kernel's output first: a reply is never sent ahead of output it follows.
            if self.sub in events:
                guarded(self.from_iopub, self.sub.recv_multipart())
            for ch in CHANNELS:
                if self.back[ch] in events:
                    guarded(self.from_kernel, ch, self.back[ch].recv_multipart())
                if self.front[ch] in events:
                    guarded(self.from_client, ch, self.front[ch].recv_multipart())
            # Heartbeats are echoed by the kernel itself, so they say whether it is alive.
            if self.front["hb"] in events:
                self.back["hb"].send_multipart(self.front["hb"].recv_multipart())
            if self.back["hb"] in events:
                self.front["hb"].send_multipart(self.back["hb"].recv_multipart())
            for fd in self.logs:
                if fd in events and not self.from_log(fd):
                    poller.unregister(fd)
            self.idle_streams()
            if exited_at is None and self.kernel.poll() is not None:
                exited_at = time.monotonic()
            # After the kernel exits, what it sent last is still relayed, briefly.
            if exited_at is not None and (not events or time.monotonic() - exited_at > 1):
                break
        for name in list(self.streams):
            self.release(name, b"F")
        return self.kernel.returncode

    def close(self):
        if self.kernel.poll() is None:
            try:
                os.killpg(self.kernel.pid, signal.SIGTERM)
                self.kernel.wait(5)
            except (OSError, subprocess.TimeoutExpired):
                self.kernel.kill()
        self.masker.close()
        for s in list(self.front.values()) + list(self.back.values()) + [self.pub, self.sub]:
            s.close()
        self.ctx.term()
        shutil.rmtree(self.inner_dir, ignore_errors=True)


def guarded(handle, *args):
    """Handle one message; one the proxy cannot handle (JSON of an unexpected shape) is
    dropped, never forwarded as it was, and the session goes on. The log names the error's
    type only: its text could quote the message."""
    try:
        handle(*args)
    except (zmq.ZMQError, OSError):
        raise
    except Exception as e:
        log(f"dropped a message it could not handle ({type(e).__name__})")


def minimal(parent):
    """A parent header's identifying fields (what the client sent), nothing else."""
    keys = ("msg_id", "msg_type", "session", "username", "date", "version")
    return {k: parent[k] for k in keys if k in parent}


def is_json(b):
    try:
        json.loads(b)
        return True
    except ValueError:
        return False


def die_with_parent():
    # The kernel must not outlive the proxy when the client kills it (SIGKILL cannot be
    # relayed): Linux's PR_SET_PDEATHSIG, where there is one.
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL)
    except Exception:
        pass


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("leakhound kernel: usage: leakhound_kernel.py -f CONNECTION_FILE --leakhound PATH -- KERNEL_ARGV...")
    cut = argv.index("--")
    ap = argparse.ArgumentParser(prog="leakhound_kernel.py")
    ap.add_argument("-f", required=True)
    ap.add_argument("--leakhound", required=True)
    ap.add_argument("--config")
    ap.add_argument("--interrupt-mode", default="signal", choices=("signal", "message"))
    args = ap.parse_args(argv[:cut])
    proxy = Proxy(args, argv[cut + 1 :])
    # A client that signals the proxy means the kernel.
    signal.signal(signal.SIGINT, lambda *_: proxy.interrupt())
    signal.signal(signal.SIGTERM, lambda *_: proxy.signal(signal.SIGTERM))
    code = 1
    try:
        code = proxy.run()
    finally:
        proxy.close()
    sys.exit(code or 0)


if __name__ == "__main__":
    main()
