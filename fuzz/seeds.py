#!/usr/bin/env python3
"""Write the hand-made seed corpus under fuzz/corpus/<target>/seed-*: small, meaningful
inputs for each target. Every credential is a fake one from signatures/*.toml examples.
Run once; the fuzzer grows the corpus from here (`fuzz/run.sh`)."""
import base64, gzip, io, json, os, tarfile, zipfile, bz2, lzma

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
GH = "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"
AKID = "AKIAUJZDEGXDNCF32EPF"
AKSEC = "W3qLy7zKUVQDT7S8sTQCBNR3YbDgbleph1QHt61Q"
PG = "postgres://app:eST7eTrJCr8HoHjSCT9M@db.internal:5432/app"
ENV = f"# app\nexport AWS_ACCESS_KEY_ID={AKID}\nAWS_SECRET_ACCESS_KEY='{AKSEC}'\nDATABASE_URL=\"{PG}\"\nGITHUB_TOKEN={GH}\n"


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    with open(os.path.join(d, "seed-" + name), "wb") as f:
        f.write(data)


def notebook():
    nb = {
        "cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["# Load\n", "data"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {"tags": ["x"]},
             "source": ["import boto3\n", f"aws_secret_access_key = \"{AKSEC}\"\n"],
             "outputs": [
                 {"output_type": "stream", "name": "stdout", "text": [f"token={GH}\n"]},
                 {"output_type": "display_data", "metadata": {},
                  "data": {"image/png": "iVBORw0KGgo=", "text/plain": ["<Figure>"]}},
                 {"output_type": "error", "ename": "E", "evalue": "x",
                  "traceback": ["\u001b[0;31mE\u001b[0m: " + PG]}]},
        ],
        "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5,
    }
    return json.dumps(nb, indent=1)


def tar_of(files):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.USTAR_FORMAT) as t:
        for name, data in files:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            t.addfile(info, io.BytesIO(data))
    return b.getvalue()


def zip_of(files):
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files:
            z.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), data)
    return b.getvalue()


def gz(data):
    return gzip.compress(data, mtime=0)


def main():
    put("rules_toml", "github.toml", f'''[[rules]]
id = "fuzz.token"
name = "Fuzz token"
keywords = ["ghp_"]
pattern = '\\b(?P<secret>ghp_[A-Za-z0-9]{{36}})(?:[^A-Za-z0-9_]|$)'
entropy = 3.0
checksum = "github"
examples = ["GITHUB_TOKEN={GH}"]
negatives = ["ghp_short"]
''')
    put("rules_toml", "requires.toml", f'''[[rules]]
id = "fuzz.id"
name = "Fuzz id"
keywords = ["akia"]
pattern = '\\b(?P<secret>AKIA[A-Z2-7]{{16}})\\b'
public = true
examples = ["{AKID}"]

[[rules]]
id = "fuzz.secret"
name = "Fuzz secret"
keywords = ["secret"]
pattern = 'secret\\s*=\\s*(?P<secret>[A-Za-z0-9/+]{{40}})'
window = 200
requires = {{ rule = "fuzz.id", within = 5 }}
examples = ["{AKID}\\nsecret = {AKSEC}"]
''')
    put("config_toml", "leakhound.toml", '''[allow]
paths = ["tests/fixtures/**", "**/*.lock"]
regexes = ["^EXAMPLE", "(?i)dummy[0-9]+"]
stopwords = ["example", "placeholder"]

[rules]
disable = ["generic.*", "aws.access-key-id"]
files = ["extra-rules.toml"]

[validate]
canary_accounts = ["123456789012"]

[[hooks]]
name = "notify"
when = ["live", "unknown"]
rules = ["aws.*"]
command = ["notify-send", "found"]
timeout = "5s"

[[hooks]]
name = "revoke"
action = "aws-deactivate-key"
''')
    put("config_toml", "empty.toml", "")
    nb = notebook()
    put("notebook", "analysis.ipynb", nb)
    put("notebook", "minified.ipynb", json.dumps(json.loads(nb), separators=(",", ":")))
    put("notebook", "broken.ipynb", nb[: len(nb) // 2])
    put("env_dump", "dotenv", ENV)
    put("env_dump", "environ", ENV.replace("\n", "\0").replace("export ", ""))
    put("env_dump", "docker-inspect.json", json.dumps(
        [{"Id": "abc", "Config": {"Env": ["PATH=/bin", f"GITHUB_TOKEN={GH}"], "Cmd": ["sh"]}}]))
    put("env_dump", "k8s.json", json.dumps(
        {"spec": {"containers": [{"env": [{"name": "DATABASE_URL", "value": PG}, {"name": "B", "valueFrom": {}}]}]}}))
    put("env_dump", "k8s.yaml", f"spec:\n  containers:\n  - env:\n    - name: DATABASE_URL\n      value: \"{PG}\"\n")
    ps = f"\r\nName                           Value\r\n----                           -----\r\nGH_TOKEN                       {GH}\r\n"
    put("env_dump", "powershell.txt", b"\xff\xfe" + ps.encode("utf-16-le"))
    files = [("app/.env", ENV.encode()), ("app/readme.txt", b"nothing here\n")]
    put("archive", "app.zip", zip_of(files))
    put("archive", "app.tar", tar_of(files))
    put("archive", "app.tar.gz", gz(tar_of(files)))
    put("archive", "env.gz", gz(ENV.encode()))
    put("archive", "env.bz2", bz2.compress(ENV.encode()))
    put("archive", "env.xz", lzma.compress(ENV.encode()))
    put("archive", "nested.zip", zip_of([("inner.tar.gz", gz(tar_of(files)))]))
    put("decode", "base64.txt", "config: " + base64.b64encode(ENV.encode()).decode() + "\n")
    put("decode", "escapes.json", json.dumps({"k": "tok\\u0065n=" + GH.replace("_", "\\u005f")}))
    put("decode", "percent.txt", "url=" + PG.replace(":", "%3A").replace("@", "%40") + "\n")
    put("decode", "utf16.txt", ENV.encode("utf-16"))
    put("decode", "ansi.txt", f"\x1b[32mtoken=\x1b[0m{GH[:10]}\x1b[1m{GH[10:]}\x1b]0;t\x07\n")
    put("engine", "plain.txt", ENV)
    put("engine", "pem.txt", "\x00" + open(os.path.join(ROOT, "..", "..", "signatures", "private-keys.toml")).read()[:4000])
    put("engine", "mixed.txt", "\x01" + ENV + base64.b64encode(ENV.encode()).decode() + "\n")
    put("masker", "stream.txt", b"\x17\x2a" + f"$ env\n{ENV}\x1b[31m{GH[:12]}\x1b[0m{GH[12:]}\n50%\r100%\n".encode())
    put("masker", "prompt.txt", b"\x01\x00" + f">>> print(key)\n{AKSEC}\n>>> ".encode())
    put("image", "config.json", json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/usr/bin", f"GITHUB_TOKEN={GH}"], "Cmd": ["python", "app.py"],
                   "Entrypoint": ["/bin/sh", "-c"], "Labels": {"db": PG}},
        "history": [{"created_by": f"RUN export AWS_SECRET_ACCESS_KEY={AKSEC} && make"}]}))
    put("image", "layer.tar.gz", gz(tar_of([("etc/app.env", ENV.encode()), ("etc/.wh.old", b""),
                                             ("var/.wh..wh..opq", b"")])))
    put("image", "ref.txt", "127.0.0.1:5000/team/app:v1")
    z40 = "0" * 40
    a, b, c = "1" * 40, "2" * 40, "3" * 40
    log = (f"\x01{a}\0Dev\0dev@example.com\0002026-01-01T00:00:00Z\0add env\0"
           f"\n:000000 100644 {z40} {b} A\0app/.env\0:100644 100644 {b} {c} R090\0old\0new\0"
           f"\x01{c}\0Dev\0dev@example.com\0002026-01-02T00:00:00Z\0merge\0"
           f"\n::100644 100644 100644 {a} {b} {c} MM\0src/x.py\0:100644 000000 {b} {z40} D\0gone\0")
    put("git_log", "raw.log", log)
    put("git_log", "lfs.txt", "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a" * 64 + "\nsize 12\n")


if __name__ == "__main__":
    main()
