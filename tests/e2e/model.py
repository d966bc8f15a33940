"""A fake model server on 127.0.0.1 that speaks each agent's model API and follows a script.

The agents under test (tests/e2e/agents.py) are pointed at it with their own settings for a
custom endpoint. Every request body is recorded (decompressed) so the harness can look for
secrets in what the model would have read. The server is stateless across requests: from the
conversation an agent sends, it counts the tool results so far and answers with the next tool
call of the script, or with a final text once the script is done. Requests that carry no
tools (title generation, quota checks, routing) get a short text answer.

Dialects: Anthropic Messages (SSE and plain JSON), OpenAI Responses (SSE), OpenAI Chat
Completions (SSE and plain JSON), Gemini generateContent / streamGenerateContent (SSE).
"""

import gzip
import json
import re

import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FINAL_TEXT = "All done."
# How many one-second waits the model asks for while an MCP server is not up yet.
MAX_WAITS = 60

class Step:
    """One tool call the model asks for: `kind` is "shell", "read" or "mcp"; `arg` is the
    command, the absolute path, or the MCP tool's qualified name (server, tool)."""

    def __init__(self, kind, arg):
        self.kind = kind
        self.arg = arg

    def __repr__(self):
        return f"Step({self.kind}, {self.arg!r})"

def sse(events):
    """Server-sent events from (event name or None, JSON-able data) pairs."""
    out = []
    for name, data in events:
        if name:
            out.append(f"event: {name}\n")
        out.append(f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()

class Recorder:
    """Every request the agents made, in order: (method, path, decoded body text)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.requests = []
        self.errors = []

    def add(self, method, path, body):
        with self.lock:
            self.requests.append((method, path, body))

    def error(self, what):
        with self.lock:
            self.errors.append(what)

def decode_body(raw, encoding):
    encoding = (encoding or "").lower()
    if encoding in ("", "identity"):
        return raw
    if encoding == "gzip":
        return gzip.decompress(raw)
    if encoding == "deflate":
        return zlib.decompress(raw)
    if encoding == "zstd":
        try:
            import zstandard  # noqa: PLC0415 (only some agents compress with zstd)
        except ImportError as e:
            raise RuntimeError("a request is zstd-compressed and zstandard is missing") from e
        return zstandard.ZstdDecompressor().decompressobj().decompress(raw)
    raise RuntimeError(f"a request body has Content-Encoding {encoding!r}")

# ---- the script position, per dialect -------------------------------------------------------

def anthropic_results(req):
    n = 0
    for m in req.get("messages", []):
        content = m.get("content")
        if isinstance(content, list):
            n += sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool_result")
    return n

def responses_results(req):
    items = req.get("input", [])
    if not isinstance(items, list):
        return 0
    return sum(
        1
        for i in items
        if isinstance(i, dict)
        and i.get("type") in ("function_call_output", "custom_tool_call_output", "mcp_call_output")
    )

def chat_results(req):
    return sum(1 for m in req.get("messages", []) if m.get("role") == "tool")

def gemini_results(req):
    n = 0
    for c in req.get("contents", []):
        for p in c.get("parts", []) or []:
            if "functionResponse" in p:
                n += 1
    return n

# ---- choosing the agent's own tool for a step -------------------------------------------------

def tool_schemas(tools):
    """name -> JSON schema of its parameters, in the order offered, from any of the dialects'
    shapes (an OpenAI Responses namespace's tools, Codex's MCP servers, as namespace__tool)."""
    out = {}
    for t in tools or []:
        if not isinstance(t, dict):
            continue
        if t.get("type") == "namespace":
            for x in t.get("tools", []):
                out[f"{t['name']}__{x.get('name')}"] = x.get("parameters") or {}
        elif "name" in t:
            out[t["name"]] = t.get("input_schema") or t.get("parameters") or {}
        elif "function" in t and isinstance(t["function"], dict):
            out[t["function"].get("name")] = t["function"].get("parameters") or {}
        for fd in t.get("functionDeclarations", []) or t.get("function_declarations", []) or []:
            out[fd.get("name")] = (
                fd.get("parameters") or fd.get("parametersJsonSchema") or fd.get("parameters_json_schema") or {}
            )
    return out

SHELL_TOOLS = ["Bash", "shell", "exec_command", "shell_command", "run_shell_command", "bash", "local_shell"]
READ_TOOLS = ["Read", "read_file", "view", "read"]

def call_for(step, tools):
    """(tool name, arguments) that asks this agent's tools to perform `step`."""
    schemas = tool_schemas(tools)
    names = [n for n in schemas if n]
    if step.kind == "shell":
        name = next((n for n in SHELL_TOOLS if n in names), None)
        if name is None:
            raise RuntimeError(f"no shell tool among {names}")
        props = (schemas.get(name) or {}).get("properties", {})
        if "command" in props and props["command"].get("type") == "array":
            args = {"command": ["bash", "-lc", step.arg]}
        elif "cmd" in props:
            args = {"cmd": step.arg}
        else:
            args = {"command": step.arg}
        if "description" in props:
            args["description"] = "print a file"
        return name, args
    if step.kind == "read":
        name = next((n for n in READ_TOOLS if n in names), None)
        if name is None:
            # An agent without a file-read tool (Codex) reads files with its shell.
            return call_for(Step("shell", f"cat {step.arg}"), tools)
        props = (schemas.get(name) or {}).get("properties", {})
        key = next((k for k in ("file_path", "absolute_path", "path", "filePath") if k in props), "file_path")
        return name, {key: step.arg}
    if step.kind == "mcp":
        server, tool = step.arg
        # Each agent qualifies an MCP tool its own way: mcp__server__tool (Claude), server__tool
        # or server-tool (Copilot), mcp_server_tool, or the bare name (Gemini, Codex).
        want = [f"mcp__{server}__{tool}", f"{server}__{tool}", f"{server}-{tool}", f"mcp_{server}_{tool}", f"{server}.{tool}"]
        name = next((n for n in want if n in names), None)
        if name is None:
            # Gemini names a tool by its bare name unless two servers share it.
            matches = [n for n in names if n.endswith(tool) and server in n]
            if len(matches) == 1:
                name = matches[0]
        if name is None:
            raise RuntimeError(f"no tool for MCP {server}/{tool} among {names}")
        return name, {}
    raise ValueError(step.kind)

# ---- the server -----------------------------------------------------------------------------

class Model:
    """The fake model: `script` is the list of Steps; it runs on a thread until `close()`."""

    def __init__(self, script):
        self.script = script
        self.recorder = Recorder()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_):
                pass

            def do_GET(self):
                model.recorder.add("GET", self.path, "")
                self.reply(200, "application/json", json.dumps(model.get(self.path)).encode())

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                try:
                    body = decode_body(raw, self.headers.get("Content-Encoding")).decode("utf-8", "replace")
                except Exception as e:  # noqa: BLE001 (reported as a harness error)
                    model.recorder.error(f"POST {self.path}: {e}")
                    body = raw.decode("latin-1")
                model.recorder.add("POST", self.path, body)
                try:
                    status, ctype, payload = model.post(self.path, body)
                except Exception as e:  # noqa: BLE001
                    model.recorder.error(f"POST {self.path}: {type(e).__name__}: {e}")
                    status, ctype, payload = 500, "application/json", b'{"error": "fake model"}'
                self.reply(status, ctype, payload)

            def reply(self, status, ctype, payload):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(payload)
                self.close_connection = True

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()

    def get(self, path):
        if "/models" in path:
            return {
                "object": "list",
                "data": [{"id": "fake-model", "object": "model", "owned_by": "leakhound"}],
                "models": [{"name": "models/fake-model", "supportedGenerationMethods": ["generateContent"]}],
            }
        return {}

    def next_step(self, results, tools, body):
        """The step after the tool results so far, or None when the script is over (or the
        request offers no tools: an agent's side request).

        An agent may start its MCP servers while the first turns run (Codex does): while a
        step's MCP tool is not offered yet, the model asks for a short wait in the shell
        instead, numbered so the waits can be told apart from the script's own steps."""
        if not tools:
            return None
        waits = len(set(re.findall(r"lh-e2e-wait-(\d+)", body)))
        done = results - waits
        if done >= len(self.script):
            return None
        step = self.script[done]
        if step.kind == "mcp" and waits < MAX_WAITS:
            try:
                call_for(step, tools)
            except RuntimeError:
                return Step("shell", f"sleep 1 # lh-e2e-wait-{waits}")
        return step

    def post(self, path, body):
        req = json.loads(body) if body.strip() else {}
        if "/messages" in path and "count_tokens" not in path:
            return self.anthropic(req, body)
        if "count_tokens" in path or ":countTokens" in path:
            return 200, "application/json", json.dumps({"input_tokens": 10, "totalTokens": 10}).encode()
        if path.rstrip("/").endswith("/responses") or "/responses?" in path:
            return self.responses(req, body)
        if "/chat/completions" in path:
            return self.chat(req, body)
        if "generatecontent" in path.lower():
            return self.gemini(req, body, stream="streamGenerateContent" in path)
        raise RuntimeError(f"no dialect for {path}")

    # -- Anthropic Messages

    def anthropic(self, req, body):
        step = self.next_step(anthropic_results(req), req.get("tools"), body)
        if step is None:
            content = [{"type": "text", "text": FINAL_TEXT}]
            stop = "end_turn"
        else:
            name, args = call_for(step, req["tools"])
            content = [{"type": "tool_use", "id": f"toolu_{anthropic_results(req)}", "name": name, "input": args}]
            stop = "tool_use"
        usage = {"input_tokens": 10, "output_tokens": 5}
        msg = {"id": "msg_fake", "type": "message", "role": "assistant", "model": req.get("model", "fake"),
               "content": content, "stop_reason": stop, "stop_sequence": None, "usage": usage}
        if not req.get("stream"):
            return 200, "application/json", json.dumps(msg).encode()
        events = [("message_start", {"type": "message_start", "message": {**msg, "content": [], "stop_reason": None}})]
        for i, block in enumerate(content):
            if block["type"] == "text":
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": i, "content_block": {"type": "text", "text": ""}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "text_delta", "text": block["text"]}}),
                ]
            else:
                events += [
                    ("content_block_start", {"type": "content_block_start", "index": i, "content_block": {**block, "input": {}}}),
                    ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}}),
                ]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        events += [
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, "text/event-stream", sse(events)

    # -- OpenAI Responses

    def responses(self, req, body):
        done = responses_results(req)
        step = self.next_step(done, req.get("tools"), body)
        rid = f"resp_{done}"
        if step is None:
            item = {"type": "message", "id": f"msg_{done}", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": FINAL_TEXT, "annotations": []}]}
        else:
            name, args = call_for(step, req["tools"])
            item = {"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}", "name": name,
                    "arguments": json.dumps(args), "status": "completed"}
            namespaces = [t["name"] for t in req["tools"] if t.get("type") == "namespace"]
            ns = next((n for n in namespaces if name.startswith(n + "__")), None)
            if ns:
                item["namespace"] = ns
                item["name"] = name[len(ns) + 2 :]
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                 "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 15}
        response = {"id": rid, "object": "response", "status": "completed", "model": req.get("model", "fake"),
                    "output": [item], "usage": usage}
        if not req.get("stream"):
            return 200, "application/json", json.dumps(response).encode()
        events = [
            ("response.created", {"type": "response.created", "response": {**response, "status": "in_progress", "output": []}}),
            ("response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": item}),
            ("response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}),
            ("response.completed", {"type": "response.completed", "response": response}),
        ]
        return 200, "text/event-stream", sse(events)

    # -- OpenAI Chat Completions

    def chat(self, req, body):
        done = chat_results(req)
        step = self.next_step(done, req.get("tools"), body)
        if step is None:
            message = {"role": "assistant", "content": FINAL_TEXT}
            finish = "stop"
        else:
            name, args = call_for(step, req["tools"])
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": f"call_{done}", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}]}
            finish = "tool_calls"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        if not req.get("stream"):
            body = {"id": "chatcmpl-fake", "object": "chat.completion", "created": 0, "model": req.get("model", "fake"),
                    "choices": [{"index": 0, "message": message, "finish_reason": finish}], "usage": usage}
            return 200, "application/json", json.dumps(body).encode()
        delta = dict(message)
        if "tool_calls" in delta:
            delta["tool_calls"] = [{**delta["tool_calls"][0], "index": 0}]
        chunks = [
            {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": req.get("model", "fake"),
             "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0, "model": req.get("model", "fake"),
             "choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
        ]
        payload = b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"
        return 200, "text/event-stream", payload

    # -- Gemini

    def gemini(self, req, body, stream):
        tools = req.get("tools")
        step = self.next_step(gemini_results(req), tools, body)
        if step is None:
            # A side request that asks for JSON (Gemini CLI's routing and next-speaker checks)
            # gets JSON; anything else a plain final answer.
            cfg = req.get("generationConfig") or {}
            if cfg.get("responseMimeType") == "application/json":
                text = json.dumps({"reasoning": "fake", "next_speaker": "user", "model_choice": "flash"})
            else:
                text = FINAL_TEXT
            parts = [{"text": text}]
        else:
            name, args = call_for(step, tools)
            parts = [{"functionCall": {"name": name, "args": args}}]
        body = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                "modelVersion": "fake-model"}
        if not stream:
            return 200, "application/json", json.dumps(body).encode()
        return 200, "text/event-stream", f"data: {json.dumps(body)}\n\n".encode()

# ---- what the model read --------------------------------------------------------------------

def strings_in(text, depth=0):
    """The body itself and every JSON string inside it, JSON held in strings decoded too."""
    out = [text]
    if depth > 3:
        return out
    try:
        value = json.loads(text)
    except ValueError:
        return out

    def walk(v):
        if isinstance(v, str):
            out.append(v)
            s = v.strip()
            if s[:1] in "[{" and depth < 3:
                out.extend(strings_in(s, depth + 1)[1:])
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                out.append(k)
                walk(x)

    walk(value)
    return out

def pieces(secret, n=8):
    return {secret[i : i + n] for i in range(len(secret) - n + 1)}

def seen(recorder, secret, n=8):
    """Requests (index, path) whose text holds an n-character piece of `secret`."""
    want = pieces(secret, n)
    hits = []
    for i, (_, path, body) in enumerate(recorder.requests):
        texts = strings_in(body)
        if any(p in t for t in texts for p in want):
            hits.append((i, path))
    return hits

def holds_whole(recorder, secret):
    return any(secret in t for _, _, body in recorder.requests for t in strings_in(body))

